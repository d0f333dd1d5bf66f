package command

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/code"
)

// Category is the category of every command tool.
const Category = "command"

// Spec is one [[commands]] entry of the config file.
type Spec struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// Argv is the program and its arguments, with {NAME} placeholders.
	Argv []string `toml:"argv"`
	// Stdin, when set, is written to the program's standard input, with
	// placeholders like an argv element.
	Stdin string `toml:"stdin"`
	// Confirm: ask before every call (nil: true).
	Confirm *bool `toml:"confirm"`
	// Timeout is the wall-clock limit of a call in seconds (0: the tools'
	// default, tools.DefaultTimeoutSeconds).
	Timeout float64 `toml:"timeout"`
	// Cwd is the directory the program runs in ("~" expanded; empty:
	// jarvis's working directory).
	Cwd string `toml:"cwd"`
	// PassEnv names the variables of jarvis's environment the program
	// gets besides the clean base every program started for a model gets
	// (PATH, HOME, the locale...: see tools/internal/cleanenv).
	PassEnv []string `toml:"pass_env"`
	// SuccessCodes are the exit statuses of a successful run (empty: 0).
	SuccessCodes []int `toml:"success_codes"`
	// MaxOutputBytes caps what is kept of stdout and of stderr, each
	// (0: the code tools' code.DefaultMaxOutputBytes).
	MaxOutputBytes int `toml:"max_output_bytes"`
	// CPUSeconds, MemoryMB and MaxFileSizeMB are resource limits (Linux;
	// 0: none).
	CPUSeconds    int `toml:"cpu_seconds"`
	MemoryMB      int `toml:"memory_mb"`
	MaxFileSizeMB int `toml:"max_file_size_mb"`
	// Parameters are what the model fills in, by name.
	Parameters map[string]Param `toml:"parameters"`
}

// Param is one parameter of a command ([commands.parameters.NAME]).
type Param struct {
	// Type is string (the default), integer, number or boolean.
	Type        string `toml:"type"`
	Description string `toml:"description"`
	Required    bool   `toml:"required"`
	// Enum lists the values allowed (strings or numbers, of Type).
	Enum []any `toml:"enum"`
	// AllowOption lets a value that begins an element start with '-'.
	AllowOption bool `toml:"allow_option"`
}

// SpecError is a problem in one entry. Key is the setting at fault as the
// config file spells it below the entry ("argv", "parameters.word.type"),
// for a message that points at the line.
type SpecError struct {
	Key string
	Msg string
}

func (e *SpecError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

func specErr(key, format string, a ...any) error {
	return &SpecError{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// paramName is what a parameter may be called: it is written {NAME}.
var paramName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Command is a checked entry, ready to run.
type Command struct {
	spec Spec
	// path is the program as found when the entry was checked.
	path  string
	argv  []element
	stdin *element // nil: no stdin
	cwd   string
	// order is the parameters in their order of first use.
	order   []string
	success []int
	schema  *jsonschema.Schema
}

// Compile checks an entry and prepares it to run. Every problem is a
// *SpecError naming the setting.
func Compile(s Spec) (*Command, error) {
	if err := tools.CheckName(s.Name); err != nil {
		return nil, specErr("name", "%v", err)
	}
	if strings.TrimSpace(s.Description) == "" {
		return nil, specErr("description", "a command needs a description: it is all the model knows of what the command does and when to use it")
	}
	if len(s.Argv) == 0 || strings.TrimSpace(s.Argv[0]) == "" {
		return nil, specErr("argv", `a command needs argv: the program and its arguments, e.g. argv = ["grep", "-rin", "{word}", "~/notes"]`)
	}
	if err := checkLimits(s); err != nil {
		return nil, err
	}
	for name, p := range s.Parameters {
		if err := checkParam(name, p); err != nil {
			return nil, err
		}
	}
	c := &Command{spec: s}
	home := homeDir()
	for i, raw := range s.Argv {
		key := fmt.Sprintf("argv[%d]", i)
		if strings.ContainsRune(raw, 0) {
			return nil, specErr(key, "%q contains a NUL byte, which no argument can hold", raw)
		}
		el, err := parseElement(raw, home)
		if err != nil {
			return nil, specErr(key, "%q: %v", raw, err)
		}
		el.index = i
		if err := c.checkUses(key, el); err != nil {
			return nil, err
		}
		if i == 0 && len(el.params) > 0 {
			return nil, specErr(key, "the program must be written in the config, not chosen by the model: move {%s} to an argument", el.params[0])
		}
		c.argv = append(c.argv, el)
	}
	if s.Stdin != "" {
		el, err := parseElement(s.Stdin, "")
		if err != nil {
			return nil, specErr("stdin", "%v", err)
		}
		if err := c.checkUses("stdin", el); err != nil {
			return nil, err
		}
		c.stdin = &el
	}
	if err := c.checkAllUsed(); err != nil {
		return nil, err
	}
	if err := c.findProgram(); err != nil {
		return nil, err
	}
	if err := c.checkCwd(home); err != nil {
		return nil, err
	}
	c.success = slices.Clone(s.SuccessCodes)
	if len(c.success) == 0 {
		c.success = []int{0}
	}
	c.schema = c.buildSchema()
	return c, nil
}

func checkLimits(s Spec) error {
	if math.IsNaN(s.Timeout) || math.IsInf(s.Timeout, 0) || s.Timeout < 0 {
		return specErr("timeout", "must be a number of seconds (e.g. 30), got %v", s.Timeout)
	}
	for _, l := range []struct {
		key string
		v   int
	}{{"max_output_bytes", s.MaxOutputBytes}, {"cpu_seconds", s.CPUSeconds}, {"memory_mb", s.MemoryMB}, {"max_file_size_mb", s.MaxFileSizeMB}} {
		if l.v < 0 {
			return specErr(l.key, "must be 0 or more, got %d", l.v)
		}
	}
	if !limitsSupported && (s.CPUSeconds > 0 || s.MemoryMB > 0 || s.MaxFileSizeMB > 0) {
		return specErr("cpu_seconds", "cpu_seconds, memory_mb and max_file_size_mb are applied on Linux only; remove them on this system")
	}
	for _, code := range s.SuccessCodes {
		if code < 0 || code > 255 {
			return specErr("success_codes", "an exit status is between 0 and 255, got %d", code)
		}
	}
	return nil
}

// paramTypes are the JSON types a parameter may have.
var paramTypes = []string{"string", "integer", "number", "boolean"}

func checkParam(name string, p Param) error {
	key := "parameters." + name
	if !paramName().MatchString(name) {
		return specErr(key, "%q cannot name a parameter: it is written {NAME} in argv, so use letters, digits and '_', starting with a letter or '_'", name)
	}
	typ := p.typ()
	if !slices.Contains(paramTypes, typ) {
		return specErr(key+".type", "unknown type %q; use one of %s", p.Type, strings.Join(paramTypes, ", "))
	}
	if strings.TrimSpace(p.Description) == "" {
		return specErr(key+".description", "describe the parameter: the model reads it to know what to pass")
	}
	if len(p.Enum) > 0 && typ == "boolean" {
		return specErr(key+".enum", "a boolean parameter takes no enum (it is true or false)")
	}
	for _, v := range p.Enum {
		if _, err := enumValue(typ, v); err != nil {
			return specErr(key+".enum", "%v", err)
		}
	}
	return nil
}

func (p Param) typ() string {
	if p.Type == "" {
		return "string"
	}
	return p.Type
}

// enumValue converts an enum value as TOML decodes it to what the
// executor compares a JSON argument with (numbers are float64).
func enumValue(typ string, v any) (any, error) {
	switch typ {
	case "string":
		if s, ok := v.(string); ok {
			return s, nil
		}
	case "integer":
		if n, ok := v.(int64); ok {
			return float64(n), nil
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return float64(n), nil
		case float64:
			if !math.IsNaN(n) && !math.IsInf(n, 0) {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("%v is not a value of type %s", v, typ)
}

// checkUses reports a placeholder naming no parameter.
func (c *Command) checkUses(key string, el element) error {
	for _, name := range el.params {
		if _, ok := c.spec.Parameters[name]; ok {
			if !slices.Contains(c.order, name) {
				c.order = append(c.order, name)
			}
			continue
		}
		declared := c.declared()
		msg := fmt.Sprintf("{%s} names no parameter", name)
		if len(declared) == 0 {
			msg += fmt.Sprintf("; declare it in [commands.parameters.%s] (type, description, required)", name)
		} else {
			msg += "; the parameters are " + strings.Join(declared, ", ")
			if sg := tools.Suggest(name, declared); sg != "" {
				msg += fmt.Sprintf(" (did you mean {%s}?)", sg)
			}
		}
		return specErr(key, "%s", msg)
	}
	return nil
}

func (c *Command) declared() []string {
	out := make([]string, 0, len(c.spec.Parameters))
	for n := range c.spec.Parameters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkAllUsed reports a parameter no placeholder uses: the model would
// fill it in for nothing, and it is most likely a misspelt placeholder.
func (c *Command) checkAllUsed() error {
	for _, name := range c.declared() {
		if !slices.Contains(c.order, name) {
			return specErr("parameters."+name, "the parameter is not used: write {%s} in argv or stdin, or remove it", name)
		}
	}
	return nil
}

func (c *Command) findProgram() error {
	prog := c.argv[0].literal()
	path, err := exec.LookPath(prog)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) && !strings.Contains(prog, "/") {
			return specErr("argv[0]", "the program %q is not on PATH; install it or write its full path", prog)
		}
		return specErr("argv[0]", "the program %q cannot be run: %v", prog, unwrapExec(err))
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	c.path = path
	return nil
}

// unwrapExec drops exec's own wording around the cause.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

func (c *Command) checkCwd(home string) error {
	dir := c.spec.Cwd
	if dir == "" {
		return nil
	}
	if strings.ContainsAny(dir, "{}") {
		return specErr("cwd", "%q: the directory is the config's, not the model's: it takes no placeholders", dir)
	}
	dir = expandTilde(dir, home)
	if !filepath.IsAbs(dir) {
		return specErr("cwd", "%q is relative; write an absolute path or one starting with ~/", c.spec.Cwd)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return specErr("cwd", "%v", err)
	}
	if !info.IsDir() {
		return specErr("cwd", "%s is not a directory", dir)
	}
	c.cwd = filepath.Clean(dir)
	return nil
}

// buildSchema is the parameters' JSON Schema, in their order of use; an
// argument the command does not take is refused.
func (c *Command) buildSchema() *jsonschema.Schema {
	var params []tools.Param
	for _, name := range c.order {
		p := c.spec.Parameters[name]
		s := &jsonschema.Schema{Type: p.typ(), Description: p.Description}
		for _, v := range p.Enum {
			ev, _ := enumValue(p.typ(), v) // checked by checkParam
			s.Enum = append(s.Enum, ev)
		}
		params = append(params, tools.Param{Name: name, Schema: s, Required: p.Required})
	}
	schema := tools.Params(params...)
	schema.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return schema
}

// Spec returns the entry as written.
func (c *Command) Spec() Spec { return c.spec }

func (c *Command) maxOutput() int {
	if c.spec.MaxOutputBytes > 0 {
		return c.spec.MaxOutputBytes
	}
	return code.DefaultMaxOutputBytes
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// expandTilde replaces a leading "~" or "~/" with home (when known),
// keeping the rest exactly (a trailing slash means something to rsync).
func expandTilde(s, home string) string {
	if home == "" || s != "~" && !strings.HasPrefix(s, "~/") {
		return s
	}
	if out := strings.TrimSuffix(home, "/") + s[1:]; out != "" {
		return out
	}
	return "/"
}
