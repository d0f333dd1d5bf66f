package command

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jarvis-workbench/jarvis/tools"
)

// segment is a piece of a template: literal text, or a placeholder.
type segment struct {
	text  string // literal text when param is ""
	param string
}

// element is one argv element (or the stdin template), parsed.
type element struct {
	segs []segment
	// params are the parameters it uses, in order, each once.
	params []string
	index  int
}

// parseElement splits a template into literal text and {NAME}
// placeholders. {{ and }} are literal braces; any other brace is an error,
// so a placeholder cannot be split across elements ("{wo", "rd}") or
// mistyped into literal text ({ word}) without the person hearing of it.
// A leading ~ or ~/ is expanded with home ("" leaves it).
func parseElement(raw, home string) (element, error) {
	var el element
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			el.segs = append(el.segs, segment{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(raw); i++ {
		switch ch := raw[i]; ch {
		case '{':
			if i+1 < len(raw) && raw[i+1] == '{' {
				lit.WriteByte('{')
				i++
				continue
			}
			end := strings.IndexAny(raw[i+1:], "{}")
			if end < 0 || raw[i+1+end] == '{' {
				return el, fmt.Errorf("the '{' at byte %d opens a placeholder that does not close before the element ends; a placeholder is {NAME} inside one element (write {{ for a literal '{')", i)
			}
			name := raw[i+1 : i+1+end]
			if !paramName().MatchString(name) {
				return el, fmt.Errorf("{%s} is not a placeholder: write {NAME} with a parameter's name, or {{ and }} for literal braces", name)
			}
			flush()
			el.segs = append(el.segs, segment{param: name})
			if !slices.Contains(el.params, name) {
				el.params = append(el.params, name)
			}
			i += end + 1
		case '}':
			if i+1 < len(raw) && raw[i+1] == '}' {
				lit.WriteByte('}')
				i++
				continue
			}
			return el, fmt.Errorf("the '}' at byte %d closes no placeholder; write }} for a literal '}'", i)
		default:
			lit.WriteByte(ch)
		}
	}
	flush()
	if home != "" && len(el.segs) > 0 && el.segs[0].param == "" {
		first := el.segs[0].text
		// "~" alone, or "~/..."; "~" before a placeholder would be
		// ~USER, which is not expanded.
		if first == "~" && len(el.segs) == 1 || strings.HasPrefix(first, "~/") {
			el.segs[0].text = expandTilde(first, home)
		}
	}
	return el, nil
}

// literal is the element's text when it has no placeholder.
func (el element) literal() string {
	var b strings.Builder
	for _, s := range el.segs {
		b.WriteString(s.text)
	}
	return b.String()
}

// fill substitutes values; ok is false when a parameter it uses was not
// given (the element is then left out).
func (el element) fill(values map[string]string) (string, bool) {
	var b strings.Builder
	for _, s := range el.segs {
		if s.param == "" {
			b.WriteString(s.text)
			continue
		}
		v, ok := values[s.param]
		if !ok {
			return "", false
		}
		b.WriteString(v)
	}
	return b.String(), true
}

// ArgError is a call's arguments that cannot be run: the model reads it.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErr(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// values converts the call's arguments to the text substituted for them.
// Absent (or null) parameters are left out.
func (c *Command) values(args tools.Args) (map[string]string, error) {
	out := make(map[string]string, len(c.order))
	for _, name := range c.order {
		v, given := args[name]
		if !given || v == nil {
			if c.spec.Parameters[name].Required {
				return nil, argErr("missing required parameter '%s'", name)
			}
			continue
		}
		s, err := valueText(name, c.spec.Parameters[name].typ(), args)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

func valueText(name, typ string, args tools.Args) (string, error) {
	switch typ {
	case "integer":
		n, _, err := args.Int(name)
		if err != nil {
			return "", argErr("%v", err)
		}
		return strconv.Itoa(n), nil
	case "number":
		f, _, err := args.Float(name)
		if err != nil {
			return "", argErr("%v", err)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", argErr("parameter '%s' must be a finite number", name)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case "boolean":
		b, ok := args[name].(bool)
		if !ok {
			return "", argErr("parameter '%s' must be true or false", name)
		}
		return strconv.FormatBool(b), nil
	}
	s, ok := args[name].(string)
	if !ok {
		return "", argErr("parameter '%s' must be a string", name)
	}
	return s, nil
}

// buildArgv is the argument vector of a call, with the checks that keep a
// value one harmless argument: no NUL byte, and no option where the
// program reads options unless the parameter allows it.
func (c *Command) buildArgv(values map[string]string) ([]string, error) {
	for _, name := range c.order {
		if v, ok := values[name]; ok && strings.ContainsRune(v, 0) && c.usedInArgv(name) {
			return nil, argErr("parameter '%s' contains a NUL byte, which no program argument can hold; it was not run", name)
		}
	}
	argv := make([]string, 0, len(c.argv))
	afterDashes := false
	for _, el := range c.argv {
		s, ok := el.fill(values)
		if !ok {
			continue
		}
		if !afterDashes {
			if name := el.leadingParam(values); name != "" && strings.HasPrefix(values[name], "-") && !c.spec.Parameters[name].AllowOption {
				return nil, argErr("parameter '%s' is %q, which starts with '-' where %s reads options; this command takes no options from the model, so it was not run. Pass a value that does not start with '-'",
					name, values[name], c.programName())
			}
		}
		afterDashes = afterDashes || len(el.params) == 0 && s == "--"
		argv = append(argv, s)
	}
	return argv, nil
}

// leadingParam is the parameter whose value makes the start of the filled
// element ("" when the config's own text does): a '-' there is read as an
// option.
func (el element) leadingParam(values map[string]string) string {
	for _, s := range el.segs {
		if s.param == "" {
			if s.text != "" {
				return ""
			}
			continue
		}
		if values[s.param] != "" {
			return s.param
		}
	}
	return ""
}

func (c *Command) usedInArgv(name string) bool {
	for _, el := range c.argv {
		if slices.Contains(el.params, name) {
			return true
		}
	}
	return false
}

// programName is the program as the config names it, for messages.
func (c *Command) programName() string { return c.spec.Argv[0] }

// stdinText is what the call writes to the program's stdin; ok is false
// when there is none.
func (c *Command) stdinText(values map[string]string) (string, bool) {
	if c.stdin == nil {
		return "", false
	}
	s, ok := c.stdin.fill(values)
	return s, ok
}
