package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/events"
)

// Executor runs tool calls: it is the spec's ToolExecutor. The steps, in
// order, each early exit being a failed Result and never a panic:
//
//  1. look the tool up (unknown -> "Unknown tool: NAME", then the tools
//     that exist);
//  2. parse the arguments and check them against the tool's schema;
//  3. ask the Policy when the spec requires confirmation or the tool's
//     ConfirmationRule does for these arguments (see policy.go; nobody to
//     ask means the call fails; a denial publishes tool_call_denied). A
//     person may edit the arguments: the edit is checked against the
//     schema again and runs instead (the Result says so, see
//     EditedArguments);
//  4. publish tool_call_start;
//  5. run the tool with its timeout, recovering panics;
//  6. measure the latency;
//  7. publish tool_call_end (and tool_timeout first when it timed out).
//
// Calls are safe to run concurrently; ExecuteAll runs a turn's calls in
// parallel and returns their results in the calls' order. An Executor runs
// calls on the caller's goroutine plus one goroutine per call (so a tool
// that ignores its context still cannot hold the caller past its timeout).
type Executor struct {
	mu    sync.RWMutex
	tools map[string]*entry
	order []string

	bus    events.Publisher
	policy *Policy
	log    *slog.Logger
}

type entry struct {
	tool      Tool
	spec      Spec
	validator *validator
	timeout   time.Duration
	inline    bool             // the tool is NonBlocking
	rule      ConfirmationRule // nil: the spec alone decides
	targeter  Targeter         // nil: calls reach the tool itself
	scoper    Scoper           // nil: grants cover the whole tool
	refuser   Refuser          // nil: no call is refused outright
	previewer Previewer        // nil: the tool changes no files
}

// ExecutorOptions configure NewExecutor. Every field is optional.
type ExecutorOptions struct {
	// Bus receives the tool events; nil discards them.
	Bus events.Publisher
	// Policy decides confirmations. When nil, Confirmer is used if it is
	// a *Policy; otherwise a policy that asks Confirmer (nil: nobody, so
	// every call that needs confirmation fails, never runs silently)
	// with the session approvals in Approvals.
	Policy    *Policy
	Confirmer Confirmer
	Approvals *Approvals
	// Logger records recovered panics with their stack; nil discards.
	Logger *slog.Logger
}

// NewExecutor returns an executor for list. Two tools with one name, or a
// schema that cannot be compiled, are errors.
func NewExecutor(list []Tool, opts ExecutorOptions) (*Executor, error) {
	e := &Executor{
		tools:  make(map[string]*entry, len(list)),
		bus:    opts.Bus,
		policy: opts.Policy,
		log:    opts.Logger,
	}
	if e.bus == nil {
		e.bus = events.Discard
	}
	if p, ok := opts.Confirmer.(*Policy); ok && e.policy == nil {
		e.policy = p
	}
	if e.policy == nil {
		e.policy = NewPolicy(PolicyOptions{Asker: opts.Confirmer, Approvals: opts.Approvals})
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range list {
		if err := e.Add(t); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Add adds a tool (MCP tools arrive after start). A name already present is
// an error.
func (e *Executor) Add(t Tool) error {
	spec := t.Spec()
	if spec.Name == "" {
		return fmt.Errorf("tool %T has an empty name", t)
	}
	v, err := newValidator(spec.Parameters)
	if err != nil {
		return fmt.Errorf("tool %s: %w", spec.Name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.tools[spec.Name]; dup {
		return fmt.Errorf("tool %s is listed twice", spec.Name)
	}
	_, inline := unwrap(t).(NonBlocking)
	en := &entry{tool: t, spec: spec, validator: v, timeout: timeoutOf(spec), inline: inline}
	en.rule, _ = under[ConfirmationRule](t)
	en.targeter, _ = under[Targeter](t)
	en.scoper, _ = under[Scoper](t)
	en.refuser, _ = under[Refuser](t)
	en.previewer, _ = under[Previewer](t)
	e.tools[spec.Name] = en
	e.order = append(e.order, spec.Name)
	return nil
}

// maxTimeout caps a spec's timeout: a larger value (a typo in a config
// file) would overflow a time.Duration and time out at once.
const maxTimeout = 24 * time.Hour

func timeoutOf(s Spec) time.Duration {
	if s.Timeout() >= maxTimeout.Seconds() {
		return maxTimeout
	}
	return time.Duration(s.Timeout() * float64(time.Second))
}

// Remove removes a tool by name; unknown names are ignored.
func (e *Executor) Remove(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.tools, name)
	e.order = slices.DeleteFunc(e.order, func(n string) bool { return n == name })
}

// SetConfirmer replaces who the policy asks (the TUI installs its dialog
// once the program runs).
func (e *Executor) SetConfirmer(c Confirmer) { e.policy.SetAsker(c) }

// Approvals returns the session approvals this executor consults.
func (e *Executor) Approvals() *Approvals { return e.policy.Approvals() }

// Policy returns the policy that decides this executor's confirmations.
func (e *Executor) Policy() *Policy { return e.policy }

// Tools returns the tools in the order they were added.
func (e *Executor) Tools() []Tool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]Tool, len(e.order))
	for i, n := range e.order {
		out[i] = e.tools[n].tool
	}
	return out
}

// AvailableTools returns the specs of all tools, in order.
func (e *Executor) AvailableTools() []Spec {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]Spec, len(e.order))
	for i, n := range e.order {
		out[i] = e.tools[n].spec
	}
	return out
}

// Spec returns one tool's spec.
func (e *Executor) Spec(name string) (Spec, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	en, ok := e.tools[name]
	if !ok {
		return Spec{}, false
	}
	return en.spec, true
}

// OpenAITools returns all tools in the OpenAI function format.
func (e *Executor) OpenAITools() []OpenAITool { return OpenAITools(e.AvailableTools()) }

// Describe returns BuildToolDescriptions for the executor's tools.
func (e *Executor) Describe(includeCategory, includeCost bool) string {
	return DescribeSpecs(e.AvailableTools(), includeCategory, includeCost)
}

// Execute runs one call through every step in the type's comment.
func (e *Executor) Execute(ctx context.Context, call Call) Result {
	p, r, done := e.prepare(ctx, call, 1)
	if done {
		return r
	}
	args, asked, cctx, r, ok := e.confirm(ctx, p, 1, 1)
	if !ok {
		return r
	}
	return e.runCall(cctx, p, args, asked)
}

// ExecuteAll runs calls concurrently and returns their results in the order
// of calls. Each call's Index is its position in calls. The calls that need
// confirmation are asked about one at a time in that order ("1 of 2"),
// while the others already run.
func (e *Executor) ExecuteAll(ctx context.Context, calls []Call) []Result {
	results := make([]Result, len(calls))
	if len(calls) == 1 {
		c := calls[0]
		c.Index = 0
		results[0] = e.Execute(ctx, c)
		return results
	}
	var wg sync.WaitGroup
	start := func(i int, ctx context.Context, p *pending, args, asked Args) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.runCall(ctx, p, args, asked)
		}()
	}
	preps := make([]*pending, len(calls))
	asking := 0
	for i, c := range calls {
		c.Index = i
		p, r, done := e.prepare(ctx, c, len(calls))
		if done {
			results[i] = r
			continue
		}
		if p.check.Needed {
			preps[i] = p
			asking++
			continue
		}
		args, asked, cctx, r, ok := e.confirm(ctx, p, 0, 0)
		if !ok {
			results[i] = r
			continue
		}
		start(i, cctx, p, args, asked)
	}
	position := 0
	for i, p := range preps {
		if p == nil {
			continue
		}
		position++
		args, asked, cctx, r, ok := e.confirm(ctx, p, position, asking)
		if !ok {
			results[i] = r
			continue
		}
		start(i, cctx, p, args, asked)
	}
	wg.Wait()
	return results
}

// runCall runs a call that passed the gate: tool_call_start, the tool
// under its timeout, the latency, tool_call_end.
func (e *Executor) runCall(ctx context.Context, p *pending, args, asked Args) Result {
	call, en, run := p.call, p.en, p.run
	e.bus.Publish(events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{
		Tool: call.Name, CallID: call.ID, Index: call.Index, Arguments: args, Parallel: p.parallel,
	}})

	ctx = e.withCall(ctx, p)
	start := time.Now()
	r := e.run(ctx, en, args)
	r.LatencySeconds = time.Since(start).Seconds()
	r.ToolName = call.Name
	if r.Status == "" {
		r.Status = StatusOK
		if !r.Success {
			r.Status = StatusError
		}
	}
	r = r.WithMeta("arguments", map[string]any(args))
	if asked != nil {
		r = r.WithMeta(metaAskedArguments, map[string]any(asked))
	}

	if r.Status == StatusTimeout {
		e.bus.Publish(events.Event{Type: events.ToolTimeout, Run: run, Tool: &events.ToolPayload{
			Tool: call.Name, CallID: call.ID, Index: call.Index, Status: string(r.Status), LatencySeconds: r.LatencySeconds, Parallel: p.parallel,
		}})
	}
	e.bus.Publish(events.Event{Type: events.ToolCallEnd, Run: run, Tool: &events.ToolPayload{
		Tool: call.Name, CallID: call.ID, Index: call.Index, Arguments: args, Success: r.Success, Status: string(r.Status),
		LatencySeconds: r.LatencySeconds, CostUSD: r.CostUSD, Result: Truncate(r.Content, events.ResultLimit),
		Parallel: p.parallel, Diff: Truncate(r.Diff(), events.DiffLimit),
	}})
	return r
}

// withCall tells the tool about its call: its id, its session (the run's,
// or the policy's for a front end that names it there) and where its
// output goes while it runs.
func (e *Executor) withCall(ctx context.Context, p *pending) context.Context {
	call, run := p.call, p.run
	session := sessionFrom(ctx)
	if o := e.policy.options(); session == "" && o.Session != nil {
		session = o.Session()
	}
	return context.WithValue(ctx, callKey{}, CallInfo{ID: call.ID, Session: session, output: func(text string) {
		e.bus.Publish(events.Event{Type: events.ToolOutput, Run: run, Text: text,
			Tool: &events.ToolPayload{Tool: call.Name, CallID: call.ID, Index: call.Index}})
	}})
}

// MetaDiff holds, in a Result, the unified diff of the files the call
// changed; front ends show it (tool_call_end carries it).
const MetaDiff = "diff"

// Diff returns the unified diff of the files the call changed ("" when
// it changed none).
func (r Result) Diff() string {
	d, _ := r.Metadata[MetaDiff].(string)
	return d
}

// run executes the tool on its own goroutine under the spec's timeout, so a
// tool that ignores its context cannot hold the caller, and a panic becomes
// a failed result.
func (e *Executor) run(ctx context.Context, en *entry, args Args) Result {
	if err := ctx.Err(); err != nil {
		return cancelled(en.spec.Name)
	}
	if en.inline {
		return e.runInline(ctx, en, args)
	}
	tctx, cancel := context.WithTimeout(ctx, en.timeout)
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				e.log.Error("tool panicked", "tool", en.spec.Name, "panic", p, "stack", string(debug.Stack()))
				done <- Fail("Tool execution error: %v", p)
			}
		}()
		done <- en.tool.Execute(tctx, args)
	}()
	var r Result
	select {
	case r = <-done:
		if r.Success || tctx.Err() == nil {
			return r
		}
		// The tool failed after its context ended: report why the context
		// ended rather than whatever error the interrupted work produced.
	case <-tctx.Done():
		select {
		case r = <-done: // finished at the same instant: keep a real success
			if r.Success {
				return r
			}
		default:
		}
	}
	if ctx.Err() != nil {
		return cancelled(en.spec.Name)
	}
	r = Fail("Tool '%s' timed out after %ss.", en.spec.Name, formatSeconds(en.spec.Timeout()))
	r.Status = StatusTimeout
	return r
}

// runInline runs a NonBlocking tool on the caller's goroutine, still
// turning a panic into a failed result.
func (e *Executor) runInline(ctx context.Context, en *entry, args Args) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("tool panicked", "tool", en.spec.Name, "panic", p, "stack", string(debug.Stack()))
			r = Fail("Tool execution error: %v", p)
		}
	}()
	return en.tool.Execute(ctx, args)
}

// unwrap returns the tool under any settings wrapper.
// Close releases what a tool holds (a REPL's interpreter), looking under
// settings wrappers; a tool without anything to release is left as it is.
func Close(t Tool) {
	if t == nil {
		return
	}
	if c, ok := under[interface{ Close() error }](t); ok {
		c.Close()
	}
}

func unwrap(t Tool) Tool {
	for {
		u, ok := t.(interface{ Unwrap() Tool })
		if !ok {
			return t
		}
		t = u.Unwrap()
	}
}

func cancelled(name string) Result {
	r := Fail("Tool '%s' was cancelled before it finished.", name)
	r.Status = StatusCancelled
	return r
}

// metaAskedArguments holds, in a Result, the arguments the model asked for
// when the person edited them; "arguments" holds those that ran.
const metaAskedArguments = "asked_arguments"

// EditedArguments returns the arguments that ran when the person edited
// them before approving (ok false otherwise). The agent puts them in the
// model's tool call, so the conversation says what really ran.
func (r Result) EditedArguments() (Args, bool) {
	if _, edited := r.Metadata[metaAskedArguments]; !edited {
		return nil, false
	}
	switch a := r.Metadata["arguments"].(type) {
	case map[string]any:
		return Args(a), true
	case Args:
		return a, true
	}
	return nil, false
}

func invalidArgs(err error) string {
	return "Invalid arguments: " + strings.TrimSuffix(err.Error(), ".") + "."
}

// deny ends a call that must not run, publishing tool_call_denied.
func (e *Executor) deny(call Call, args Args, msg string, status Status, run events.RunInfo) Result {
	r := Fail("%s", msg)
	r.Status = status
	r.ToolName = call.Name
	r = r.WithMeta("arguments", map[string]any(args))
	e.bus.Publish(events.Event{Type: events.ToolCallDenied, Run: run, Tool: &events.ToolPayload{
		Tool: call.Name, CallID: call.ID, Index: call.Index, Arguments: args, Status: string(status), Result: msg,
	}})
	return r
}

// reject ends a call that could not start (unknown tool, bad arguments). It
// publishes tool_call_error so a UI can show the failed call; there is no
// start/end pair because nothing ran.
func (e *Executor) reject(run events.RunInfo, call Call, args Args, msg string) Result {
	r := Fail("%s", msg)
	r.ToolName = call.Name
	if args != nil {
		r = r.WithMeta("arguments", map[string]any(args))
	}
	e.bus.Publish(events.Event{Type: events.ToolCallError, Run: run, Tool: &events.ToolPayload{
		Tool: call.Name, CallID: call.ID, Index: call.Index, Arguments: args, Status: string(StatusError), Result: msg,
	}})
	return r
}

// UnknownToolPrefix starts the result of a call to a tool the executor
// does not have (the model reads it; a front end may recognise it to
// tell the person that the tool exists but is off).
const UnknownToolPrefix = "Unknown tool: "

// availableNames lists the tools for the unknown-tool message (the note's
// `Unknown tool: NAME`, followed by what exists so a model can correct
// itself); a long list is cut so it cannot flood the model's context.
func (e *Executor) availableNames() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	const most = 20
	switch {
	case len(e.order) == 0:
		return "none"
	case len(e.order) > most:
		return strings.Join(e.order[:most], ", ") + fmt.Sprintf(" and %d more", len(e.order)-most)
	}
	return strings.Join(e.order, ", ")
}

// ParseArguments decodes a call's argument string. It returns the failure
// message when the string is not a JSON object. Decoding into an interface
// takes encoding/json's reflection-free path, which is most of the
// executor's own cost.
func ParseArguments(raw string) (Args, string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Args{}, ""
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, "Invalid arguments JSON: " + err.Error()
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("Invalid arguments: expected a JSON object, got %s.", jsonType(v))
	}
	return Args(m), ""
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "… [truncated]"
	cut := n - len(mark)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'g', -1, 64) }
