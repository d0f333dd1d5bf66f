package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
)

// builtinSuite is the suite `jarvis eval` runs without --suite.
//
//go:embed builtin.json
var builtinSuite []byte

// BuiltinSource is the Source of the built-in suite.
const BuiltinSource = "built-in"

// Builtin returns the built-in suite. knownTools are the tools that exist
// (nil skips the check); the suite only names built-in tools.
func Builtin(knownTools []string) (*Suite, error) {
	return Parse(builtinSuite, BuiltinSource, knownTools)
}

// SuiteError says what is wrong in a suite: where it came from, which case
// (when it is in one) and which field.
type SuiteError struct {
	Source string
	// Case is the case's id, or "case N" when it has none yet.
	Case  string
	Field string
	Msg   string
}

func (e *SuiteError) Error() string {
	var b strings.Builder
	b.WriteString("suite " + e.Source)
	if e.Case != "" {
		b.WriteString(": " + e.Case)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// maxSuiteSize bounds what a suite file may hold.
const maxSuiteSize = 8 << 20

// Read reads a suite from r; source names it in errors ("-" is stdin). A
// suite is JSON, or TOML when source ends in .toml (or, on stdin, when it
// does not start with "{").
func Read(r io.Reader, source string, knownTools []string) (*Suite, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSuiteSize+1))
	if err != nil {
		return nil, &SuiteError{Source: source, Msg: err.Error()}
	}
	if len(data) > maxSuiteSize {
		return nil, &SuiteError{Source: source, Msg: fmt.Sprintf("larger than %d MiB; split it into several suites", maxSuiteSize>>20)}
	}
	return Parse(data, source, knownTools)
}

// Parse reads a suite from data; see Read.
func Parse(data []byte, source string, knownTools []string) (*Suite, error) {
	var raw any
	trimmed := bytes.TrimSpace(data)
	isTOML := strings.EqualFold(filepath.Ext(source), ".toml") ||
		(filepath.Ext(source) == "" || source == "-" || source == "stdin") && len(trimmed) > 0 && trimmed[0] != '{'
	if isTOML {
		var m map[string]any
		if _, err := toml.Decode(string(data), &m); err != nil {
			return nil, &SuiteError{Source: source, Msg: "not valid TOML: " + err.Error()}
		}
		raw = normalizeTOML(m)
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, &SuiteError{Source: source, Msg: "not valid JSON: " + jsonErrorAt(data, err)}
		}
		if dec.More() {
			return nil, &SuiteError{Source: source, Msg: "not valid JSON: more than one value; a suite is one object"}
		}
		raw = normalizeJSON(raw)
	}
	p := &parser{source: source, known: knownTools}
	s := p.suite(raw)
	if p.err != nil {
		return nil, p.err
	}
	if s.Name == "" {
		base := filepath.Base(source)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	s.Source = source
	return s, nil
}

// jsonErrorAt adds the line and column to a JSON syntax error.
func jsonErrorAt(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the file is empty or ends too early"
	default:
		return err.Error()
	}
	// Offset counts the bytes read, the offending one among them.
	line, col := 1, 1
	for _, c := range data[:max(min(int(off)-1, len(data)), 0)] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// normalizeJSON turns json.Number into float64, the type tool arguments
// decode to.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeJSON(e)
		}
	}
	return v
}

// normalizeTOML gives TOML values JSON's shapes: numbers as float64,
// tables as maps, arrays of tables as lists.
func normalizeTOML(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeTOML(e)
		}
		return x
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeTOML(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = normalizeTOML(e)
		}
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return v
}

// parser walks a decoded suite, keeping the first error with its place.
type parser struct {
	source string
	known  []string
	err    error
	// caseName is the case being read ("" outside cases).
	caseName string
}

func (p *parser) fail(field, format string, a ...any) {
	if p.err == nil {
		p.err = &SuiteError{Source: p.source, Case: p.caseName, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

// object checks v is an object with only the allowed keys.
func (p *parser) object(field string, v any, allowed ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		p.fail(field, "must be an object, not %s", kindOf(v))
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			msg := fmt.Sprintf("unknown key %q", k)
			if s := tools.Suggest(k, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.fail(join(field, k), "%s; the keys here are: %s", msg, strings.Join(allowed, ", "))
			return nil
		}
	}
	return m
}

func (p *parser) str(field string, v any) string {
	s, ok := v.(string)
	if !ok {
		p.fail(field, "must be a string, not %s", kindOf(v))
	}
	return s
}

func (p *parser) strings(field string, v any) []string {
	list, ok := v.([]any)
	if !ok {
		p.fail(field, "must be a list of strings, not %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		out = append(out, p.str(fmt.Sprintf("%s[%d]", field, i), e))
	}
	return out
}

// stringOrList reads "x" or ["x", "y"].
func (p *parser) stringOrList(field string, v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	return p.strings(field, v)
}

func (p *parser) integer(field string, v any) int {
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) || f < 0 {
		p.fail(field, "must be a whole number of at least 0, not %s", describe(v))
		return 0
	}
	return int(f)
}

func (p *parser) tool(field, name string, among []string) {
	if p.err != nil {
		return
	}
	if tools.IsPattern(name) {
		// A case measures a model on a fixed set of tools.
		p.fail(field, "%q is a pattern: a case names each of its tools in full", name)
		return
	}
	if among != nil && !slices.Contains(among, name) {
		if p.known != nil && !slices.Contains(p.known, name) {
			p.unknownTool(field, name)
			return
		}
		p.fail(field, "%q is not among the case's tools (%s); add it to \"tools\"", name, strings.Join(among, ", "))
		return
	}
	if p.known != nil && !slices.Contains(p.known, name) {
		p.unknownTool(field, name)
	}
}

func (p *parser) unknownTool(field, name string) {
	msg := fmt.Sprintf("unknown tool %q", name)
	if s := tools.Suggest(name, p.known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	p.fail(field, "%s; 'jarvis tools list' shows the tools", msg)
}

func (p *parser) suite(raw any) *Suite {
	m := p.object("", raw, "name", "description", "system", "options", "max_turns", "timeout", "approve", "overrides", "cases")
	if m == nil {
		return nil
	}
	s := &Suite{}
	if v, ok := m["name"]; ok {
		s.Name = strings.TrimSpace(p.str("name", v))
	}
	if v, ok := m["description"]; ok {
		s.Description = p.str("description", v)
	}
	if v, ok := m["system"]; ok {
		s.System = p.str("system", v)
	}
	if v, ok := m["options"]; ok {
		s.Options = p.options(v)
	}
	if v, ok := m["max_turns"]; ok {
		s.MaxTurns = p.integer("max_turns", v)
	}
	if v, ok := m["timeout"]; ok {
		txt := p.str("timeout", v)
		d, err := time.ParseDuration(txt)
		if p.err == nil && (err != nil || d < time.Second) {
			p.fail("timeout", "%q is not a time limit of at least 1s; write a duration such as \"90s\" or \"5m\"", txt)
		}
		s.Timeout = d
	}
	if v, ok := m["approve"]; ok {
		s.Approve = p.strings("approve", v)
		for i, n := range s.Approve {
			p.tool(fmt.Sprintf("approve[%d]", i), n, nil)
		}
	}
	if v, ok := m["overrides"]; ok {
		s.Overrides = p.overrides("overrides", v, nil)
	}
	v, ok := m["cases"]
	if !ok {
		p.fail("cases", "missing; a suite needs at least one case")
		return s
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		p.fail("cases", "must be a list of at least one case, not %s", describe(v))
		return s
	}
	seen := map[string]int{}
	for i, c := range list {
		p.caseName = fmt.Sprintf("case %d", i+1)
		cs := p.parseCase(c)
		if p.err != nil {
			return s
		}
		if j, dup := seen[cs.ID]; dup {
			p.fail("id", "%q is also the id of case %d; ids must be unique", cs.ID, j+1)
			return s
		}
		seen[cs.ID] = i
		s.Cases = append(s.Cases, cs)
	}
	p.caseName = ""
	return s
}

func (p *parser) options(v any) Options {
	m := p.object("options", v, "temperature", "seed", "num_ctx", "num_predict", "think")
	var o Options
	if m == nil {
		return o
	}
	if t, ok := m["temperature"]; ok {
		f, isNum := t.(float64)
		if !isNum || f < 0 {
			p.fail("options.temperature", "must be a number of at least 0, not %s", describe(t))
		}
		o.Temperature = &f
	}
	if s, ok := m["seed"]; ok {
		n := p.integer("options.seed", s)
		o.Seed = &n
	}
	if n, ok := m["num_ctx"]; ok {
		o.NumCtx = p.integer("options.num_ctx", n)
	}
	if n, ok := m["num_predict"]; ok {
		o.NumPredict = p.integer("options.num_predict", n)
	}
	if t, ok := m["think"]; ok {
		switch x := t.(type) {
		case bool:
			o.Think = fmt.Sprint(x)
		case string:
			o.Think = strings.ToLower(strings.TrimSpace(x))
		}
		switch o.Think {
		case "true", "false", "low", "medium", "high":
		default:
			p.fail("options.think", "must be true, false, low, medium or high, not %s", describe(t))
		}
	}
	return o
}

// overrides reads {"TOOL": {"description": ..., "parameters": {...}}};
// among limits the tools to a case's (nil: any known tool).
func (p *parser) overrides(field string, v any, among []string) map[string]Override {
	m := p.object(field, v, sortedKeys(v)...)
	if m == nil {
		return nil
	}
	out := make(map[string]Override, len(m))
	for _, name := range sortedKeys(m) {
		f := join(field, name)
		p.tool(f, name, among)
		om := p.object(f, m[name], "description", "parameters")
		if om == nil {
			return out
		}
		var o Override
		if d, ok := om["description"]; ok {
			o.Description = p.str(join(f, "description"), d)
			if p.err == nil && strings.TrimSpace(o.Description) == "" {
				p.fail(join(f, "description"), "is empty; leave it out to keep the tool's own")
			}
		}
		if pv, ok := om["parameters"]; ok {
			pm := p.object(join(f, "parameters"), pv, sortedKeys(pv)...)
			o.Parameters = map[string]string{}
			for _, pn := range sortedKeys(pm) {
				o.Parameters[pn] = p.str(join(join(f, "parameters"), pn), pm[pn])
				if p.err == nil && strings.TrimSpace(o.Parameters[pn]) == "" {
					p.fail(join(join(f, "parameters"), pn), "is empty; leave it out to keep the parameter's own description")
				}
			}
		}
		if o.Description == "" && len(o.Parameters) == 0 && p.err == nil {
			p.fail(f, "changes nothing; give a description or parameters")
		}
		out[name] = o
	}
	return out
}

var idPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (p *parser) parseCase(v any) Case {
	m := p.object("", v, "id", "category", "prompt", "tools", "approve", "overrides", "files", "memories", "expect")
	var c Case
	if m == nil {
		return c
	}
	if id, ok := m["id"]; ok {
		c.ID = p.str("id", id)
	}
	if p.err == nil && !idPattern().MatchString(c.ID) {
		if c.ID == "" {
			p.fail("id", "missing; give each case a short id such as \"pct\"")
		} else {
			p.fail("id", "%q must be letters, digits, '.', '_' or '-' (it names the case's scratch directory)", c.ID)
		}
		return c
	}
	p.caseName = fmt.Sprintf("case %q", c.ID)
	c.Category = DefaultCategory
	if cat, ok := m["category"]; ok {
		c.Category = strings.TrimSpace(p.str("category", cat))
		if c.Category == "" && p.err == nil {
			p.fail("category", "is empty; leave it out for %q", DefaultCategory)
		}
	}
	if pr, ok := m["prompt"]; ok {
		c.Prompt = p.str("prompt", pr)
	}
	if strings.TrimSpace(c.Prompt) == "" && p.err == nil {
		p.fail("prompt", "missing or empty; it is what the model is asked")
	}
	c.Tools = []string{} // not nil: nil would let expectations name any tool
	if t, ok := m["tools"]; ok {
		c.Tools = p.strings("tools", t)
		seen := map[string]bool{}
		for i, n := range c.Tools {
			p.tool(fmt.Sprintf("tools[%d]", i), n, nil)
			if seen[n] && p.err == nil {
				p.fail(fmt.Sprintf("tools[%d]", i), "%q is listed twice", n)
			}
			seen[n] = true
		}
	}
	if a, ok := m["approve"]; ok {
		c.Approve = p.strings("approve", a)
		for i, n := range c.Approve {
			p.tool(fmt.Sprintf("approve[%d]", i), n, c.Tools)
		}
	}
	if o, ok := m["overrides"]; ok {
		c.Overrides = p.overrides("overrides", o, c.Tools)
	}
	if f, ok := m["files"]; ok {
		fm := p.object("files", f, sortedKeys(f)...)
		c.Files = map[string]string{}
		for _, name := range sortedKeys(fm) {
			field := join("files", name)
			clean := path.Clean(filepath.ToSlash(name))
			if p.err == nil && (name == "" || path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../")) {
				p.fail(field, "must be a path inside the case's scratch directory, such as \"notes.txt\" or \"data/a.csv\"")
			}
			c.Files[clean] = p.str(field, fm[name])
		}
	}
	if mem, ok := m["memories"]; ok {
		c.Memories = p.strings("memories", mem)
	}
	e, ok := m["expect"]
	if !ok {
		p.fail("expect", "missing; say what should happen: \"calls\" (use [] for none) and/or \"answer_contains\"")
		return c
	}
	c.Expect = p.expect(e, c.Tools)
	return c
}

func (p *parser) expect(v any, caseTools []string) Expect {
	m := p.object("expect", v, "calls", "order", "parallel", "allow_extra", "answer_contains")
	var e Expect
	if m == nil {
		return e
	}
	e.Order = OrderAny
	if calls, ok := m["calls"]; ok {
		e.CheckCalls = true
		list, isList := calls.([]any)
		if !isList {
			p.fail("expect.calls", "must be a list of calls ([] for none), not %s", kindOf(calls))
			return e
		}
		for i, c := range list {
			field := fmt.Sprintf("expect.calls[%d]", i)
			cm := p.object(field, c, "tool", "args")
			if cm == nil {
				return e
			}
			var ce CallExpect
			tv, ok := cm["tool"]
			if !ok {
				p.fail(join(field, "tool"), "missing; name the tool expected")
				return e
			}
			ce.Tool = p.str(join(field, "tool"), tv)
			p.tool(join(field, "tool"), ce.Tool, caseTools)
			if av, ok := cm["args"]; ok {
				ce.Args = p.object(join(field, "args"), av, sortedKeys(av)...)
				for _, k := range sortedKeys(ce.Args) {
					p.checkValue(field+".args."+k, ce.Args[k])
				}
			}
			e.Calls = append(e.Calls, ce)
		}
	}
	if o, ok := m["order"]; ok {
		e.Order = p.str("expect.order", o)
		if p.err == nil && !slices.Contains([]string{OrderAny, OrderExact, OrderSteps}, e.Order) {
			p.fail("expect.order", "must be \"any\", \"exact\" or \"steps\", not %q", e.Order)
		}
	}
	if par, ok := m["parallel"]; ok {
		b, isBool := par.(bool)
		if !isBool {
			p.fail("expect.parallel", "must be true or false, not %s", describe(par))
		}
		e.Parallel = b
		if b && len(e.Calls) < 2 && p.err == nil {
			p.fail("expect.parallel", "needs at least two expected calls")
		}
	}
	if x, ok := m["allow_extra"]; ok {
		if b, isBool := x.(bool); isBool {
			e.AllowAnyExtra = b
		} else {
			e.AllowExtra = p.strings("expect.allow_extra", x)
			for i, n := range e.AllowExtra {
				p.tool(fmt.Sprintf("expect.allow_extra[%d]", i), n, caseTools)
			}
		}
	}
	if a, ok := m["answer_contains"]; ok {
		e.AnswerContains = p.stringOrList("expect.answer_contains", a)
		for i, s := range e.AnswerContains {
			if strings.TrimSpace(s) == "" && p.err == nil {
				p.fail(fmt.Sprintf("expect.answer_contains[%d]", i), "is empty: every answer contains it")
			}
		}
	}
	if (e.Order != OrderAny || e.Parallel || e.AllowAnyExtra || len(e.AllowExtra) > 0) && !e.CheckCalls && p.err == nil {
		p.fail("expect", "order, parallel and allow_extra need \"calls\"")
	}
	if !e.CheckCalls && len(e.AnswerContains) == 0 && p.err == nil {
		p.fail("expect", "checks nothing; give \"calls\" (use [] for none) and/or \"answer_contains\"")
	}
	return e
}
