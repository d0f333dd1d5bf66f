package compute

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// number is a Python number: an int of any size (i != nil) or a float.
// Keeping the two apart is what makes "2+2" print 4 and "sqrt(16)" print 4.0.
type number struct {
	i *big.Int
	f float64
}

func intNum(v *big.Int) number    { return number{i: v} }
func int64Num(v int64) number     { return number{i: big.NewInt(v)} }
func floatNum(f float64) number   { return number{f: f} }
func (n number) isInt() bool      { return n.i != nil }
func (n number) isZero() bool     { return n.isInt() && n.i.Sign() == 0 || !n.isInt() && n.f == 0 }
func (n number) isNegative() bool { return n.isInt() && n.i.Sign() < 0 || !n.isInt() && n.f < 0 }

// maxIntBits bounds integer results (about maxIntDigits decimal digits), so
// 10**10**10 is an error rather than an exhausted machine.
const maxIntBits = maxIntDigits * 3322 / 1000

// calcError is an evaluation error; its text follows "Error: ".
type calcError struct{ msg string }

func (e *calcError) Error() string { return e.msg }

var (
	errDivZero  = &calcError{"division by zero"}
	errDomain   = &calcError{"math domain error"}
	errRange    = &calcError{"math range error: the result is too large"}
	errIntLarge = &calcError{"integer result too large (more than 10000 digits)"}
	errComplex  = &calcError{"math domain error: a negative number to a fractional power has no real result"}
)

// toFloat converts like Python's float(int): exact rounding, and an error
// instead of infinity when the int is beyond float range.
func (n number) toFloat() (float64, error) {
	if !n.isInt() {
		return n.f, nil
	}
	if n.i.IsInt64() {
		return float64(n.i.Int64()), nil
	}
	f, _ := new(big.Float).SetInt(n.i).Float64()
	if math.IsInf(f, 0) {
		return 0, &calcError{"integer too large to convert to float"}
	}
	return f, nil
}

func checkInt(v *big.Int) (number, error) {
	if v.BitLen() > maxIntBits {
		return number{}, errIntLarge
	}
	return intNum(v), nil
}

func checkFloat(f float64) (number, error) {
	if math.IsInf(f, 0) {
		return number{}, errRange
	}
	if math.IsNaN(f) {
		return number{}, errDomain
	}
	return floatNum(f), nil
}

// floats converts both operands for a float operation.
func floats(a, b number) (float64, float64, error) {
	x, err := a.toFloat()
	if err != nil {
		return 0, 0, err
	}
	y, err := b.toFloat()
	return x, y, err
}

func add(a, b number) (number, error) {
	if a.isInt() && b.isInt() {
		return checkInt(new(big.Int).Add(a.i, b.i))
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	return checkFloat(x + y)
}

func sub(a, b number) (number, error) {
	if a.isInt() && b.isInt() {
		return checkInt(new(big.Int).Sub(a.i, b.i))
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	return checkFloat(x - y)
}

func mul(a, b number) (number, error) {
	if a.isInt() && b.isInt() {
		if a.i.BitLen()+b.i.BitLen() > maxIntBits+1 {
			return number{}, errIntLarge
		}
		return checkInt(new(big.Int).Mul(a.i, b.i))
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	return checkFloat(x * y)
}

// trueDiv is Python's /: always a float, exactly rounded for ints.
func trueDiv(a, b number) (number, error) {
	if b.isZero() {
		return number{}, errDivZero
	}
	if a.isInt() && b.isInt() {
		f, _ := new(big.Rat).SetFrac(a.i, b.i).Float64()
		return checkFloat(f)
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	return checkFloat(x / y)
}

// floorDivMod returns Python's a // b and a % b for ints: the quotient
// rounds toward negative infinity and the remainder takes b's sign.
func floorDivMod(a, b *big.Int) (*big.Int, *big.Int) {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() != 0 && r.Sign() != b.Sign() {
		q.Sub(q, big.NewInt(1))
		r.Add(r, b)
	}
	return q, r
}

func floorDiv(a, b number) (number, error) {
	if b.isZero() {
		return number{}, errDivZero
	}
	if a.isInt() && b.isInt() {
		q, _ := floorDivMod(a.i, b.i)
		return intNum(q), nil
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	return checkFloat(math.Floor(x / y))
}

func mod(a, b number) (number, error) {
	if b.isZero() {
		return number{}, errDivZero
	}
	if a.isInt() && b.isInt() {
		_, r := floorDivMod(a.i, b.i)
		return intNum(r), nil
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return checkFloat(r)
}

func pow(a, b number) (number, error) {
	if a.isInt() && b.isInt() && b.i.Sign() >= 0 {
		if a.i.CmpAbs(big.NewInt(1)) <= 0 { // 0, 1, -1: any power stays small
			return intNum(new(big.Int).Exp(a.i, b.i, nil)), nil
		}
		if !b.i.IsInt64() || int64(a.i.BitLen()-1)*b.i.Int64() > maxIntBits {
			return number{}, errIntLarge
		}
		return checkInt(new(big.Int).Exp(a.i, b.i, nil))
	}
	x, y, err := floats(a, b)
	if err != nil {
		return number{}, err
	}
	if x == 0 && y < 0 {
		return number{}, &calcError{"division by zero: 0 cannot be raised to a negative power"}
	}
	if x < 0 && y != math.Trunc(y) {
		return number{}, errComplex
	}
	return checkFloat(math.Pow(x, y))
}

func neg(a number) (number, error) {
	if a.isInt() {
		return intNum(new(big.Int).Neg(a.i)), nil
	}
	return floatNum(-a.f), nil
}

// String formats like Python's repr: ints in full, floats as the shortest
// text that reads back exactly, always with a point or an exponent (21.0,
// 0.1, 1e+16, 1e-05).
func (n number) String() string {
	if n.isInt() {
		return n.i.String()
	}
	return formatFloat(n.f)
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	// Shortest round-trip digits and the decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	sign := ""
	if mant[0] == '-' {
		sign, mant = "-", mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return sign + m + "e" + es + pad2(exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
