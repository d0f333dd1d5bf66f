package compute

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// function is one callable name of the calculator.
type function struct {
	canonical string // name in the govaluate form
	minArgs   int
	maxArgs   int // -1: any number
	apply     func(args []number) (number, error)
}

func (f function) checkArity(name string, n int) error {
	switch {
	case f.minArgs == f.maxArgs && n != f.minArgs:
		return &calcError{fmt.Sprintf("%s() takes exactly %d argument%s (%d given)", name, f.minArgs, plural(f.minArgs), n)}
	case n < f.minArgs:
		return &calcError{fmt.Sprintf("%s() takes at least %d argument%s (%d given)", name, f.minArgs, plural(f.minArgs), n)}
	case f.maxArgs >= 0 && n > f.maxArgs:
		return &calcError{fmt.Sprintf("%s() takes at most %d arguments (%d given)", name, f.maxArgs, n)}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// functions are the spec's functions; nothing else can be called.
var functions = map[string]function{
	"abs":   {"abs", 1, 1, func(a []number) (number, error) { return absNum(a[0]), nil }},
	"round": {"round", 1, 2, roundNum},
	"min":   {"min", 1, -1, func(a []number) (number, error) { return pick(a, -1), nil }},
	"max":   {"max", 1, -1, func(a []number) (number, error) { return pick(a, 1), nil }},
	"sqrt": {"sqrt", 1, 1, func(a []number) (number, error) {
		x, err := a[0].toFloat()
		if err != nil {
			return number{}, err
		}
		if x < 0 {
			return number{}, errDomain
		}
		return floatNum(math.Sqrt(x)), nil
	}},
	"log":   {"log", 1, 2, logNum},
	"ln":    {"log", 1, 2, logNum},
	"log10": {"log10", 1, 1, func(a []number) (number, error) { return logBase(a[0], 10) }},
	"log2":  {"log2", 1, 1, func(a []number) (number, error) { return logBase(a[0], 2) }},
	"sin":   {"sin", 1, 1, floatFunc(math.Sin)},
	"cos":   {"cos", 1, 1, floatFunc(math.Cos)},
	"tan":   {"tan", 1, 1, floatFunc(math.Tan)},
	"ceil":  {"ceil", 1, 1, func(a []number) (number, error) { return toIntNum(a[0], math.Ceil) }},
	"floor": {"floor", 1, 1, func(a []number) (number, error) { return toIntNum(a[0], math.Floor) }},
}

// constants are the only names that are not calls.
var constants = map[string]number{"pi": floatNum(math.Pi), "e": floatNum(math.E)}

func floatFunc(f func(float64) float64) func([]number) (number, error) {
	return func(a []number) (number, error) {
		x, err := a[0].toFloat()
		if err != nil {
			return number{}, err
		}
		return checkFloat(f(x))
	}
}

func absNum(a number) number {
	if a.isInt() {
		return intNum(new(big.Int).Abs(a.i))
	}
	return floatNum(math.Abs(a.f))
}

// compare orders two numbers exactly, also an int against a float.
func compare(a, b number) int {
	if a.isInt() && b.isInt() {
		return a.i.Cmp(b.i)
	}
	return bigFloat(a).Cmp(bigFloat(b))
}

func bigFloat(n number) *big.Float {
	if n.isInt() {
		return new(big.Float).SetInt(n.i)
	}
	return new(big.Float).SetFloat64(n.f)
}

// pick returns the first smallest (sign -1) or largest (sign 1) argument, as
// Python's min and max do.
func pick(a []number, sign int) number {
	best := a[0]
	for _, n := range a[1:] {
		if compare(n, best)*sign > 0 {
			best = n
		}
	}
	return best
}

// toIntNum applies ceil or floor and returns an int, as Python's math.ceil
// and math.floor do.
func toIntNum(a number, f func(float64) float64) (number, error) {
	if a.isInt() {
		return a, nil
	}
	v, _ := new(big.Float).SetFloat64(f(a.f)).Int(nil)
	return intNum(v), nil
}

// roundNum is Python's round: round(x) gives an int, halves to even;
// round(x, n) keeps x's type.
func roundNum(a []number) (number, error) {
	x := a[0]
	if len(a) == 1 {
		if x.isInt() {
			return x, nil
		}
		v, _ := new(big.Float).SetFloat64(math.RoundToEven(x.f)).Int(nil)
		return intNum(v), nil
	}
	nd := a[1]
	if !nd.isInt() {
		return number{}, &calcError{"round() digits must be an integer"}
	}
	if !nd.i.IsInt64() {
		if nd.i.Sign() > 0 {
			return x, nil
		}
		if x.isInt() {
			return int64Num(0), nil
		}
		return floatNum(0 * x.f), nil
	}
	n := nd.i.Int64()
	if x.isInt() {
		if n >= 0 {
			return x, nil
		}
		if -n > maxIntDigits {
			return int64Num(0), nil
		}
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(-n), nil)
		q, r := floorDivMod(x.i, p)
		twice := new(big.Int).Lsh(r, 1)
		if c := twice.Cmp(p); c > 0 || c == 0 && q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
		return intNum(q.Mul(q, p)), nil
	}
	switch {
	case n > 323:
		return x, nil
	case n >= 0:
		// strconv rounds the exact binary value half to even, as Python does.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(x.f, 'f', int(n), 64), 64)
		return floatNum(f), nil
	case n < -308:
		return floatNum(0 * x.f), nil
	}
	p := math.Pow(10, float64(-n))
	return checkFloat(math.RoundToEven(x.f/p) * p)
}

// lnNum is the natural log, exact in range for ints beyond float range.
func lnNum(a number) (number, error) {
	if a.isZero() || a.isNegative() {
		return number{}, errDomain
	}
	if a.isInt() && a.i.BitLen() > 1000 {
		mant := new(big.Float)
		exp := new(big.Float).SetInt(a.i).MantExp(mant)
		m, _ := mant.Float64()
		return floatNum(math.Log(m) + float64(exp)*math.Ln2), nil
	}
	x, err := a.toFloat()
	if err != nil {
		return number{}, err
	}
	return floatNum(math.Log(x)), nil
}

func logNum(a []number) (number, error) {
	l, err := lnNum(a[0])
	if err != nil || len(a) == 1 {
		return l, err
	}
	base, err := lnNum(a[1])
	if err != nil {
		return number{}, err
	}
	if base.f == 0 {
		return number{}, errDivZero
	}
	return floatNum(l.f / base.f), nil
}

func logBase(a number, base float64) (number, error) {
	if a.isZero() || a.isNegative() {
		return number{}, errDomain
	}
	if x, err := a.toFloat(); err == nil {
		if base == 10 {
			return floatNum(math.Log10(x)), nil
		}
		return floatNum(math.Log2(x)), nil
	}
	l, err := lnNum(a)
	if err != nil {
		return number{}, err
	}
	return floatNum(l.f / math.Log(base)), nil
}
