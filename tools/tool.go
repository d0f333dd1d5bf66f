// Package tools is jarvis's tool system: the Tool interface and its Spec, the
// Result a call produces, the Registry that builds tools by name with their
// dependencies, the Executor that runs model tool calls (argument checks,
// confirmation, timeouts, panic recovery, latency, events), and
// BuildToolDescriptions, the text that tells a model what its tools are.
//
// It follows the published tool spec (BaseTool, ToolSpec, ToolResult,
// ToolExecutor, build_tool_descriptions) with Go names. Built-in tools live in
// subpackages grouped by what they touch and are assembled in tools/builtin.
package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// DefaultTimeoutSeconds is the timeout of a tool whose spec sets none.
const DefaultTimeoutSeconds = 30

// Tool is one capability a model can call.
//
// Spec must be cheap and return the same value every time: the executor
// caches it when the tool is added. Execute must honour ctx: the executor
// cancels it on timeout and when the user cancels the run, and a tool that
// keeps going after that wastes the machine (its result is discarded).
type Tool interface {
	Spec() Spec
	Execute(ctx context.Context, args Args) Result
}

// NonBlocking is implemented by tools that only compute in memory and
// return in microseconds (think, calculator). The executor runs them on the
// caller's goroutine with no timer: a watchdog goroutine and a timeout
// would cost more than the tool, and such a tool has nothing to wait for.
type NonBlocking interface {
	NonBlocking()
}

// Spec describes a tool's interface and characteristics (the spec's ToolSpec).
type Spec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments; its PropertyOrder is
	// the order in which descriptions list them.
	Parameters           *jsonschema.Schema `json:"parameters"`
	Category             string             `json:"category"`
	CostEstimate         float64            `json:"cost_estimate"`
	LatencyEstimate      float64            `json:"latency_estimate"`
	RequiresConfirmation bool               `json:"requires_confirmation"`
	// TimeoutSeconds bounds one call; 0 means DefaultTimeoutSeconds.
	TimeoutSeconds float64        `json:"timeout_seconds"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	// WaivedBy names the setting that turned confirmation off for a tool
	// that would otherwise ask ("[tool.NAME] confirm = false", a trusted
	// MCP server): its calls run unasked and are recorded in the audit
	// log as allowed by config.
	WaivedBy string `json:"-"`
}

// Timeout returns the effective per-call timeout.
func (s Spec) Timeout() float64 {
	if s.TimeoutSeconds <= 0 || math.IsNaN(s.TimeoutSeconds) {
		return DefaultTimeoutSeconds
	}
	return s.TimeoutSeconds
}

// Status says how a call ended, finer than Success: a UI draws a denied call
// differently from a failed one.
type Status string

// Call outcomes.
const (
	StatusOK        Status = "ok"
	StatusError     Status = "error"
	StatusDenied    Status = "denied"
	StatusTimeout   Status = "timeout"
	StatusCancelled Status = "cancelled"
)

// Result is what a call produced (the spec's ToolResult), plus Status.
type Result struct {
	ToolName       string         `json:"tool_name"`
	Content        string         `json:"content"`
	Success        bool           `json:"success"`
	Status         Status         `json:"status"`
	Usage          map[string]any `json:"usage"`
	CostUSD        float64        `json:"cost_usd"`
	LatencySeconds float64        `json:"latency_seconds"`
	Metadata       map[string]any `json:"metadata"`
}

// OK returns a successful result with content.
func OK(content string) Result {
	return Result{Content: content, Success: true, Status: StatusOK}
}

// Fail returns a failed result whose content is the formatted message. The
// message is what the model reads, so it says what was wrong.
func Fail(format string, a ...any) Result {
	msg := format
	if len(a) > 0 {
		msg = fmt.Sprintf(format, a...)
	}
	return Result{Content: msg, Success: false, Status: StatusError}
}

// WithMeta sets a metadata key and returns the result, for chaining.
func (r Result) WithMeta(key string, value any) Result {
	if r.Metadata == nil {
		r.Metadata = make(map[string]any, 2)
	}
	r.Metadata[key] = value
	return r
}

// Call is one tool call as a model sends it (the spec's ToolCall).
type Call struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object as a string; "" means {}.
	Arguments string `json:"arguments"`
	// Index is the call's position among the calls of its turn (from 0);
	// ExecuteAll sets it, and the call's events carry it so a UI can show
	// parallel calls in the order the model made them.
	Index int `json:"index,omitempty"`
}

// Args are a call's parsed arguments. Numbers are float64, as encoding/json
// decodes them; the accessors convert.
type Args map[string]any

// String returns the string argument key, or "" when absent or not a string.
func (a Args) String(key string) string {
	s, _ := a[key].(string)
	return s
}

// Has reports whether key was given (even as null).
func (a Args) Has(key string) bool {
	_, ok := a[key]
	return ok
}

// Int returns an integer argument. ok is false when the key is absent or
// null; err is set when the value is not a whole number.
func (a Args) Int(key string) (n int, ok bool, err error) {
	v, present := a[key]
	if !present || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > math.MaxInt32*1024.0 || x < -math.MaxInt32*1024.0 {
			return 0, true, fmt.Errorf("parameter '%s' must be a whole number, got %v", key, x)
		}
		return int(x), true, nil
	case int:
		return x, true, nil
	case string:
		i, perr := strconv.Atoi(x)
		if perr != nil {
			return 0, true, fmt.Errorf("parameter '%s' must be a whole number, got %q", key, x)
		}
		return i, true, nil
	}
	return 0, true, fmt.Errorf("parameter '%s' must be a whole number, got %s", key, jsonType(v))
}

// Float returns a number argument, with the same conventions as Int.
func (a Args) Float(key string) (f float64, ok bool, err error) {
	v, present := a[key]
	if !present || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case float64:
		return x, true, nil
	case int:
		return float64(x), true, nil
	}
	return 0, true, fmt.Errorf("parameter '%s' must be a number, got %s", key, jsonType(v))
}

// Bool returns a boolean argument (false when absent).
func (a Args) Bool(key string) bool {
	b, _ := a[key].(bool)
	return b
}

// jsonType names the JSON type of a decoded value, for messages.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case int, int64:
		return "integer"
	case []any:
		return "array"
	case map[string]any, Args:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
