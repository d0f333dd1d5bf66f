// Package eval measures how well a model calls tools. A suite of cases
// (a prompt, the tools offered, what should happen) runs through the real
// agent loop and tool executor, so confirmation rules, timeouts, the loop
// guard and the events all apply as in a chat; each case is scored on the
// calls the model made and on its answer.
//
// Scoring rules (see Expect):
//
//   - calls: the tools called and their arguments. Arguments match as a
//     subset: every expected key must be there with an equal value
//     (strings exactly, numbers by value, objects recursively, lists
//     element by element); keys the model added are ignored. A value may
//     be a matcher object instead: {"$one_of": [...]}, {"$regex": "..."},
//     {"$contains": "..."} (case-insensitive) or {"$any": true}.
//   - "calls": [] means no tool may be called; no "calls" key means calls
//     are not checked.
//   - order: "any" (the default) pairs expected and actual calls in
//     whatever order; "exact" wants them in the order listed; "steps"
//     also wants each in a later model turn than the one before (a
//     result feeding the next call).
//   - parallel: the expected calls must come in one model turn.
//   - extra calls fail the case unless allow_extra says true, or names the
//     tools that may be called besides the expected calls.
//   - answer_contains: text the final answer must contain
//     (case-insensitive).
//   - a run that errs, times out or stops without an answer (max turns,
//     loop guard) fails.
//
// A failed case says why in one line ("called think, expected
// calculator"; "argument expression: got 0.15*340, expected 15/100*340").
//
// Every case runs in a sandbox of its own: a scratch directory holding the
// case's files ({dir} in a prompt or an expected value is its path), the
// working directory of its tools (a relative path in a call resolves
// there, commands and git run there), and a scratch database for the memory and scheduler tools, so an evaluation
// never writes to the person's files or database. Tools that need
// confirmation are denied unless the suite or the case approves them.
package eval

import (
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
)

// Orders of expected calls.
const (
	OrderAny   = "any"
	OrderExact = "exact"
	OrderSteps = "steps"
)

// DefaultCategory is the category of a case that names none.
const DefaultCategory = "general"

// DefaultTimeout bounds one case run when the suite sets no timeout.
const DefaultTimeout = 2 * time.Minute

// DirPlaceholder in a prompt, an expected value, answer_contains or a
// memory stands for the case's scratch directory.
const DirPlaceholder = "{dir}"

// Suite is a named list of cases with the settings they share.
type Suite struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Source is where the suite was read from: a path, "stdin" or
	// "built-in".
	Source string `json:"source"`
	// System replaces the system prompt the person configured.
	System string `json:"system,omitempty"`
	// Options are generation options laid over the configured ones
	// (temperature 0 and a seed make a run repeatable on most servers).
	Options Options `json:"options,omitzero"`
	// MaxTurns bounds each case's run (the configured max_turns when 0).
	MaxTurns int `json:"max_turns,omitempty"`
	// Timeout bounds each case run (DefaultTimeout when 0).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Approve names the tools that run without asking although they need
	// confirmation; every other such call is denied.
	Approve []string `json:"approve,omitempty"`
	// Overrides change what the model reads about tools, by tool name.
	Overrides map[string]Override `json:"overrides,omitempty"`
	Cases     []Case              `json:"cases"`
}

// Options are the generation options a suite may set.
type Options struct {
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int     `json:"seed,omitempty"`
	NumCtx      int      `json:"num_ctx,omitempty"`
	NumPredict  int      `json:"num_predict,omitempty"`
	Think       string   `json:"think,omitempty"`
}

// over returns base with the options the suite sets laid over it.
func (o Options) over(base engine.Options) engine.Options {
	if o.Temperature != nil {
		base.Temperature = o.Temperature
	}
	if o.Seed != nil {
		base.Seed = o.Seed
	}
	if o.NumCtx > 0 {
		base.NumCtx = o.NumCtx
	}
	if o.NumPredict > 0 {
		base.NumPredict = o.NumPredict
	}
	if o.Think != "" {
		base.Think = o.Think
	}
	return base
}

// Override rewords a tool: its description and its parameters'
// descriptions, in the schema (native tool calls) and in the text (react)
// alike.
type Override struct {
	Description string            `json:"description,omitempty"`
	Parameters  map[string]string `json:"parameters,omitempty"`
}

// Case is one prompt and what should happen.
type Case struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Prompt   string `json:"prompt"`
	// Tools are the tools offered to the model.
	Tools []string `json:"tools"`
	// Approve adds to the suite's approved tools for this case.
	Approve []string `json:"approve,omitempty"`
	// Overrides add to (and win over) the suite's.
	Overrides map[string]Override `json:"overrides,omitempty"`
	// Files are written into the case's scratch directory before it runs,
	// by path relative to it.
	Files map[string]string `json:"files,omitempty"`
	// Memories are stored in the case's scratch memory before it runs.
	Memories []string `json:"memories,omitempty"`
	Expect   Expect   `json:"expect"`
}

// Expect is what a case checks.
type Expect struct {
	// CheckCalls is false when the suite gave no "calls": the calls are
	// then not scored. With CheckCalls and no Calls, no call may be made.
	CheckCalls bool         `json:"-"`
	Calls      []CallExpect `json:"calls,omitempty"`
	Order      string       `json:"order,omitempty"`
	Parallel   bool         `json:"parallel,omitempty"`
	// AllowExtra names tools that may be called besides the expected
	// calls; AllowAnyExtra lets any be.
	AllowExtra     []string `json:"allow_extra,omitempty"`
	AllowAnyExtra  bool     `json:"allow_any_extra,omitempty"`
	AnswerContains []string `json:"answer_contains,omitempty"`
}

// CallExpect is one expected call: the tool and a subset of its arguments.
type CallExpect struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"`
}
