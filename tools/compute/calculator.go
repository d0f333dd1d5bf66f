// Package compute holds the built-in tools that only compute: calculator
// and think. They touch nothing outside the process, need no confirmation
// and cost nothing.
package compute

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/Knetic/govaluate"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Calculator evaluates arithmetic with Python's rules (the spec's reference
// is Python). It is safe by construction: the only things an expression can
// do are the operators, functions and constants listed in the spec.
//
// Evaluation is govaluate's. It cannot read Python directly (it gives -2**2
// as 4 and 2**3**2 as 64, has no //, reads no 1e3, and computes only in
// float64), so the expression is first parsed with Python's grammar and
// lowered to govaluate's call form, where every operator is a function of
// ours that keeps Python's int/float distinction: `-2**2` becomes
// `neg(pow(n0, n1))`.
type Calculator struct{}

// NewCalculator returns the calculator tool.
func NewCalculator(tools.Deps) (tools.Tool, error) { return Calculator{}, nil }

var calculatorSpec = tools.Spec{
	Name:        "calculator",
	Description: "Evaluate a mathematical expression safely.",
	Parameters: tools.Params(tools.StringParam("expression",
		"Math expression to evaluate, e.g. \"2+3*4\", \"sqrt(16)\", \"15/100*340\". "+
			"Operators + - * / // % ** (^ means **); functions abs, round, min, max, sqrt, log, log10, log2, "+
			"sin, cos, tan, ceil, floor; constants pi, e.", true)),
	Category:        "math",
	LatencyEstimate: 0,
	TimeoutSeconds:  5,
}

// NonBlocking marks the calculator as pure computation: its limits bound
// every evaluation to microseconds, so the executor needs no watchdog.
func (Calculator) NonBlocking() {}

// Spec returns the calculator's spec.
func (Calculator) Spec() tools.Spec { return calculatorSpec }

// Execute evaluates args["expression"].
func (Calculator) Execute(_ context.Context, args tools.Args) tools.Result {
	expr := strings.TrimSpace(args.String("expression"))
	if expr == "" {
		return tools.Fail("No expression provided.")
	}
	value, err := Evaluate(expr)
	if err != nil {
		return tools.Fail("Error: %s", err)
	}
	kind := "float"
	if value.isInt() {
		kind = "int"
	}
	return tools.OK(value.String()).WithMeta("expression", expr).WithMeta("type", kind)
}

// Evaluate computes expr and returns its value with Python's type.
func Evaluate(expr string) (number, error) {
	if len(expr) > maxExprLen {
		return number{}, &calcError{fmt.Sprintf("expression is too long (%d characters, max %d)", len(expr), maxExprLen)}
	}
	tree, err := parse(expr)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return number{}, &calcError{"Syntax error in expression: " + se.msg}
		}
		return number{}, err
	}
	var l lowering
	l.params = make(map[string]any, 4)
	l.lower(tree)
	ge, err := govaluate.NewEvaluableExpressionWithFunctions(l.b.String(), govaluateFunctions)
	if err != nil {
		return number{}, fmt.Errorf("internal error preparing %q: %v", l.b.String(), err)
	}
	v, err := ge.Evaluate(l.params)
	if err != nil {
		return number{}, err
	}
	n, ok := v.(number)
	if !ok {
		return number{}, fmt.Errorf("internal error: unexpected result %T", v)
	}
	return n, nil
}

// lowering writes a parsed expression in govaluate's call form, with every
// literal passed as a parameter (n0, n1, ...) so its exact value and type
// survive.
type lowering struct {
	b      strings.Builder
	params map[string]any
}

var operatorFuncs = map[string]string{
	"+": "op_add", "-": "op_sub", "*": "op_mul", "/": "op_div",
	"//": "op_floordiv", "%": "op_mod", "**": "op_pow", "neg": "op_neg", "pos": "op_pos",
}

func (l *lowering) lower(n *node) {
	switch n.op {
	case "num":
		name := "n" + strconv.Itoa(len(l.params))
		l.params[name] = n.num
		l.b.WriteString(name)
		return
	case "const":
		name := "c_" + n.name
		l.params[name] = constants[n.name]
		l.b.WriteString(name)
		return
	case "call":
		l.b.WriteString(n.name)
	default:
		l.b.WriteString(operatorFuncs[n.op])
	}
	l.b.WriteByte('(')
	for i, a := range n.args {
		if i > 0 {
			l.b.WriteString(", ")
		}
		l.lower(a)
	}
	l.b.WriteByte(')')
}

// govaluateFunctions are the functions the lowered form calls.
var govaluateFunctions = func() map[string]govaluate.ExpressionFunction {
	fs := map[string]govaluate.ExpressionFunction{
		"op_add": binary(add), "op_sub": binary(sub), "op_mul": binary(mul), "op_div": binary(trueDiv),
		"op_floordiv": binary(floorDiv), "op_mod": binary(mod), "op_pow": binary(pow),
		"op_neg": unaryFunc(neg), "op_pos": unaryFunc(func(a number) (number, error) { return a, nil }),
	}
	for _, f := range functions {
		fs[f.canonical] = wrap(f.apply)
	}
	return fs
}()

func wrap(f func([]number) (number, error)) govaluate.ExpressionFunction {
	return func(args ...any) (any, error) {
		nums := make([]number, len(args))
		for i, a := range args {
			n, ok := a.(number)
			if !ok {
				return nil, fmt.Errorf("internal error: argument %T", a)
			}
			nums[i] = n
		}
		return f(nums)
	}
}

func binary(f func(a, b number) (number, error)) govaluate.ExpressionFunction {
	return wrap(func(a []number) (number, error) { return f(a[0], a[1]) })
}

func unaryFunc(f func(a number) (number, error)) govaluate.ExpressionFunction {
	return wrap(func(a []number) (number, error) { return f(a[0]) })
}
