package compute

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// The calculator reads Python's expression grammar for numbers:
//
//	expr   := term (('+' | '-') term)*
//	term   := unary (('*' | '/' | '//' | '%') unary)*
//	unary  := ('+' | '-') unary | power
//	power  := atom (('**' | '^') unary)?        right-associative
//	atom   := NUMBER | NAME | NAME '(' [expr (',' expr)*] ')' | '(' expr ')'
//
// so -2**2 is -4, 2**3**2 is 512 and 2**-1 is 0.5, as in Python.

// Limits that keep a hostile expression from exhausting the machine.
const (
	maxExprLen   = 10_000
	maxNesting   = 100
	maxNodes     = 4_000
	maxIntDigits = 10_000
)

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tName
	tOp
	tString
)

type token struct {
	kind tokKind
	text string
	pos  int // 1-based column, for messages
	num  number
}

type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func syntaxErr(format string, a ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, a...)}
}

// lex splits s into tokens. Strings are returned as tokens (not errors) so
// that `__import__('os')` is reported for what it is: an unknown function.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			n, end, err := lexNumber(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tNum, text: s[i:end], pos: i + 1, num: n})
			i = end
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
			start := i
			for i < len(s) && (s[i] == '_' || s[i] < 0x80 && (unicode.IsLetter(rune(s[i])) || unicode.IsDigit(rune(s[i])))) {
				i++
			}
			toks = append(toks, token{kind: tName, text: s[start:i], pos: start + 1})
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, syntaxErr("unterminated string at position %d", i+1)
			}
			toks = append(toks, token{kind: tString, text: s[i : i+end+2], pos: i + 1})
			i += end + 2
		default:
			op := ""
			for _, cand := range []string{"**", "//", "+", "-", "*", "/", "%", "^", "(", ")", ","} {
				if strings.HasPrefix(s[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				r := []rune(s[i:])[0]
				return nil, syntaxErr("unexpected character %q at position %d", r, i+1)
			}
			toks = append(toks, token{kind: tOp, text: op, pos: i + 1})
			i += len(op)
		}
	}
	return append(toks, token{kind: tEOF, pos: len(s) + 1}), nil
}

// lexNumber reads a Python numeric literal: 42, 1_000, 0x1F, 0o17, 0b101,
// 3.14, .5, 5., 1e3, 2.5E-3.
func lexNumber(s string, i int) (number, int, error) {
	start := i
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' || c == '_' }
	if s[i] == '0' && i+1 < len(s) && strings.IndexByte("xXoObB", s[i+1]) >= 0 {
		j := i + 2
		for j < len(s) && (isHex(s[j]) || s[j] == '_') {
			j++
		}
		lit := strings.ReplaceAll(s[i:j], "_", "")
		v, ok := new(big.Int).SetString(lit, 0)
		if !ok {
			return number{}, 0, syntaxErr("invalid number %q at position %d", s[start:j], start+1)
		}
		return intNum(v), checkEnd(s, j), nil
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	float := false
	if j < len(s) && s[j] == '.' {
		float = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			float = true
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	lit := s[start:j]
	if strings.Contains(lit, "__") || strings.HasSuffix(lit, "_") || strings.Contains(lit, "_.") || strings.Contains(lit, "._") {
		return number{}, 0, syntaxErr("invalid number %q at position %d", lit, start+1)
	}
	clean := strings.ReplaceAll(lit, "_", "")
	if end := checkEnd(s, j); end != j {
		return number{}, 0, syntaxErr("invalid number %q at position %d", s[start:end], start+1)
	}
	if float {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			return number{}, 0, syntaxErr("number %q at position %d is out of range", lit, start+1)
		}
		return floatNum(f), j, nil
	}
	if len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
		return number{}, 0, syntaxErr("leading zeros in %q at position %d are not allowed (use 0o for octal)", lit, start+1)
	}
	if len(clean) > maxIntDigits {
		return number{}, 0, syntaxErr("number at position %d has more than %d digits", start+1, maxIntDigits)
	}
	v, _ := new(big.Int).SetString(clean, 10)
	return intNum(v), j, nil
}

// checkEnd returns j when the literal ends at j, or the end of the run of
// letters and digits glued to it (so "12abc" is reported whole).
func checkEnd(s string, j int) int {
	k := j
	for k < len(s) && (s[k] == '_' || s[k] < 0x80 && (unicode.IsLetter(rune(s[k])) || unicode.IsDigit(rune(s[k])))) {
		k++
	}
	return k
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// node is the parsed expression.
type node struct {
	op   string // "num", "const", "call", "neg", "pos", or a binary operator
	num  number
	name string
	args []*node
}

type parser struct {
	toks  []token
	i     int
	depth int
	nodes int
}

func parse(expr string) (*node, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) isOp(ops ...string) bool {
	t := p.peek()
	if t.kind != tOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

func (p *parser) unexpected(t token) error {
	switch t.kind {
	case tEOF:
		return syntaxErr("unexpected end of expression")
	case tString:
		return syntaxErr("strings are not allowed (%s at position %d)", t.text, t.pos)
	}
	return syntaxErr("unexpected %q at position %d", t.text, t.pos)
}

func (p *parser) add(n *node) (*node, error) {
	p.nodes++
	if p.nodes > maxNodes {
		return nil, syntaxErr("expression is too long (more than %d terms)", maxNodes)
	}
	return n, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return syntaxErr("expression is nested too deeply (more than %d levels)", maxNesting)
	}
	return nil
}

func (p *parser) expr() (*node, error) {
	left, err := p.term()
	for err == nil && p.isOp("+", "-") {
		op := p.next().text
		var right *node
		if right, err = p.term(); err == nil {
			left, err = p.add(&node{op: op, args: []*node{left, right}})
		}
	}
	return left, err
}

func (p *parser) term() (*node, error) {
	left, err := p.unary()
	for err == nil && p.isOp("*", "/", "//", "%") {
		op := p.next().text
		var right *node
		if right, err = p.unary(); err == nil {
			left, err = p.add(&node{op: op, args: []*node{left, right}})
		}
	}
	return left, err
}

func (p *parser) unary() (*node, error) {
	if p.isOp("+", "-") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		op := map[string]string{"+": "pos", "-": "neg"}[p.next().text]
		operand, err := p.unary()
		if err != nil {
			return nil, err
		}
		return p.add(&node{op: op, args: []*node{operand}})
	}
	return p.power()
}

func (p *parser) power() (*node, error) {
	base, err := p.atom()
	if err != nil || !p.isOp("**", "^") {
		return base, err
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	exp, err := p.unary()
	if err != nil {
		return nil, err
	}
	return p.add(&node{op: "**", args: []*node{base, exp}})
}

func (p *parser) atom() (*node, error) {
	t := p.next()
	switch {
	case t.kind == tNum:
		return p.add(&node{op: "num", num: t.num})
	case t.kind == tName && p.isOp("("):
		fn, ok := functions[t.text]
		if !ok {
			return nil, &calcError{fmt.Sprintf("Unknown function: %s", t.text)}
		}
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		var args []*node
		if !p.isOp(")") {
			for {
				a, err := p.expr()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
		}
		if !p.isOp(")") {
			return nil, p.unexpected(p.peek())
		}
		p.next()
		if err := fn.checkArity(t.text, len(args)); err != nil {
			return nil, err
		}
		return p.add(&node{op: "call", name: fn.canonical, args: args})
	case t.kind == tName:
		if _, ok := constants[t.text]; !ok {
			return nil, &calcError{fmt.Sprintf("unknown variable: %s", t.text)}
		}
		return p.add(&node{op: "const", name: t.text})
	case t.kind == tOp && t.text == "(":
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		inner, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.isOp(")") {
			if p.peek().kind == tEOF {
				return nil, syntaxErr("missing ')' for '(' at position %d", t.pos)
			}
			return nil, p.unexpected(p.peek())
		}
		p.next()
		return inner, nil
	}
	return nil, p.unexpected(t)
}
