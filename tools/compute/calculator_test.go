package compute

import (
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

func calc(expr string) tools.Result {
	return Calculator{}.Execute(context.Background(), tools.Args{"expression": expr})
}

func TestCalculatorPythonResults(t *testing.T) {
	cases := map[string]string{
		// The spec's examples.
		"2+2":              "4",
		"sqrt(144) + 3**2": "21.0",
		// Integer arithmetic stays integer; / and floats give floats.
		"2+3*4": "14", "10/2": "5.0", "1/3": "0.3333333333333333", "0.1+0.2": "0.30000000000000004",
		"15/100*340": "51.0", "340*15/100": "51.0", "340*15//100": "51",
		// Precedence and associativity as in Python.
		"-2**2": "-4", "(-2)**2": "4", "2**3**2": "512", "2**-1": "0.5", "2*-3": "-6", "--3": "3", "+-+3": "-3",
		"10-2-3": "5", "2^10": "1024", "2^3^2": "512", "100/10/2": "5.0",
		// Floor division and modulo follow the divisor's sign.
		"7//2": "3", "-7//2": "-4", "7//-2": "-4", "-7 % 3": "2", "7 % -3": "-2", "7.5 % -2": "-0.5", "7.0//2": "3.0",
		// Literals.
		"1e3": "1000.0", "1_000*3": "3000", "0x10": "16", "0o17": "15", "0b101": "5", ".5+5.": "5.5", "2.5E-3": "0.0025",
		// Big integers are exact.
		"2**100": "1267650600228229401496703205376", "3**50": "717897987691852588770249",
		// Python float repr.
		"1e16": "1e+16", "1e15": "1000000000000000.0", "1e-5": "1e-05", "0.0001": "0.0001", "-0.0": "-0.0",
		"123456789.0*1000000000": "1.23456789e+17", "2**0.5": "1.4142135623730951",
		// Functions and constants.
		"abs(-3)": "3", "abs(-3.5)": "3.5", "round(2.5)": "2", "round(3.5)": "4", "round(-0.5)": "0",
		"round(2.675, 2)": "2.67", "round(1234, -2)": "1200", "round(1250, -2)": "1200", "round(1350, -2)": "1400",
		"round(3.14159, 0)": "3.0", "min(3, 2.5, 7)": "2.5", "max(1, 2)": "2", "max(2, 2.0)": "2",
		"ceil(2.1)": "3", "floor(-2.1)": "-3", "ceil(5)": "5", "sqrt(16)": "4.0",
		"log(e)": "1.0", "ln(100)": "4.605170185988092", "log(8, 2)": "3.0", "log10(1000)": "3.0", "log2(1024)": "10.0",
		"log(10**400)": "921.0340371976182", "sin(pi/2)": "1.0", "cos(0)": "1.0", "tan(0)": "0.0",
		"pi": "3.141592653589793", "e**2": "7.3890560989306495",
		// Whitespace is free.
		" 1 +\n 2 ": "3",
	}
	for expr, want := range cases {
		r := calc(expr)
		if !r.Success || r.Content != want {
			t.Errorf("%q = %q (success=%v), want %q", expr, r.Content, r.Success, want)
		}
	}
}

func TestCalculatorErrors(t *testing.T) {
	cases := map[string]string{
		"":                 "No expression provided.",
		"   ":              "No expression provided.",
		"1/0":              "Error: division by zero",
		"1//0":             "Error: division by zero",
		"5 % 0":            "Error: division by zero",
		"1.5/0.0":          "Error: division by zero",
		"0**-1":            "Error: division by zero: 0 cannot be raised to a negative power",
		"sqrt(-1)":         "Error: math domain error",
		"log(0)":           "Error: math domain error",
		"log(-5)":          "Error: math domain error",
		"log(10, 1)":       "Error: division by zero",
		"__import__('os')": "Error: Unknown function: __import__",
		"exec(1)":          "Error: Unknown function: exec",
		"pi(2)":            "Error: Unknown function: pi",
		"x + 1":            "Error: unknown variable: x",
		"sqrt":             "Error: unknown variable: sqrt",
		"a.b":              "Error: Syntax error in expression: unexpected character '.' at position 2",
		"(1+2":             "Error: Syntax error in expression: missing ')' for '(' at position 1",
		"1+":               "Error: Syntax error in expression: unexpected end of expression",
		"2 3":              `Error: Syntax error in expression: unexpected "3" at position 3`,
		"'abc'":            "Error: Syntax error in expression: strings are not allowed ('abc' at position 1)",
		"1 < 2":            "Error: Syntax error in expression: unexpected character '<' at position 3",
		"007":              `Error: Syntax error in expression: leading zeros in "007" at position 1 are not allowed (use 0o for octal)`,
		"12abc":            `Error: Syntax error in expression: invalid number "12abc" at position 1`,
		"sqrt(1, 2)":       "Error: sqrt() takes exactly 1 argument (2 given)",
		"max()":            "Error: max() takes at least 1 argument (0 given)",
		"round(1, 2, 3)":   "Error: round() takes at most 2 arguments (3 given)",
		"round(2.5, 1.5)":  "Error: round() digits must be an integer",
		"10**10**10":       "Error: integer result too large (more than 10000 digits)",
		"10.0**400":        "Error: math range error: the result is too large",
		"1e308*10":         "Error: math range error: the result is too large",
		"(-8)**(1/3)":      "Error: math domain error: a negative number to a fractional power has no real result",
		"sqrt(10**400)":    "Error: integer too large to convert to float",
	}
	for expr, want := range cases {
		r := calc(expr)
		if r.Success || r.Content != want {
			t.Errorf("%q = %q (success=%v), want %q", expr, r.Content, r.Success, want)
		}
	}
}

func TestCalculatorLimits(t *testing.T) {
	deep := strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150)
	if r := calc(deep); r.Success || !strings.Contains(r.Content, "nested too deeply") {
		t.Errorf("deep nesting: %q", r.Content)
	}
	long := strings.Repeat("1+", 6000) + "1"
	if r := calc(long); r.Success || !strings.Contains(r.Content, "too long") {
		t.Errorf("long expression: %q", r.Content)
	}
	if r := calc(strings.Repeat("-", 200) + "1"); r.Success {
		t.Errorf("200 unary minuses must hit the nesting limit: %q", r.Content)
	}
}

func TestCalculatorMetadataSaysType(t *testing.T) {
	if r := calc("2+2"); r.Metadata["type"] != "int" {
		t.Errorf("type = %v", r.Metadata["type"])
	}
	if r := calc("2/2"); r.Metadata["type"] != "float" {
		t.Errorf("type = %v", r.Metadata["type"])
	}
}

func TestThinkEchoes(t *testing.T) {
	thought := "Let me break this problem into steps..."
	r := Think{}.Execute(context.Background(), tools.Args{"thought": thought})
	if !r.Success || r.Content != thought {
		t.Fatalf("got %+v", r)
	}
}

func FuzzCalculator(f *testing.F) {
	for _, seed := range []string{"2+2", "sqrt(144) + 3**2", "-2**-2", "round(2.675, 2)", "max(1, 2.5)",
		"10**10**10", "(((1)))", "1e308*10", "0x_1", "1__0", "log(0)", "7//-2", "'x'", "a.b", "2^^3", "1_000.5e-3"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		r := calc(expr) // must never panic
		if r.Success && r.Content == "" {
			t.Fatalf("%q succeeded with empty content", expr)
		}
		if !r.Success && !strings.HasPrefix(r.Content, "Error: ") && r.Content != "No expression provided." {
			t.Fatalf("%q failed without the Error: prefix: %q", expr, r.Content)
		}
	})
}

func BenchmarkCalculator(b *testing.B) {
	args := tools.Args{"expression": "sqrt(144) + 3**2 * (15/100*340) - round(2.675, 2)"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if r := (Calculator{}).Execute(context.Background(), args); !r.Success {
			b.Fatal(r.Content)
		}
	}
}
