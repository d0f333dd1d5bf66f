// Package events is the typed event bus that connects the parts of jarvis:
// the tool executor, the agents, the scheduler and the user interfaces.
//
// It is a leaf package (it imports nothing of jarvis) so that every layer can
// publish without reaching upward: the executor in package tools publishes
// tool_call_start / tool_call_end, the agents publish token deltas and turn
// boundaries, the scheduler publishes its task runs, and the TUI, the CLI and
// the logs subscribe.
//
// Delivery semantics, decided per event type (see Type.Lossy):
//
//   - Deltas (token, thinking) are lossy: when a subscriber's buffer is full
//     the delta is dropped for that subscriber rather than slowing the model's
//     stream. A subscriber that must reconstruct text exactly (a transcript)
//     takes the final text from turn_end, which is never dropped.
//   - Every other event is must-deliver: Publish blocks until each subscriber
//     has room, so a tool_call_end, a turn_end, an error or a confirmation is
//     never lost. A subscriber must therefore keep draining its channel until
//     it unsubscribes.
//
// Publishing to a bus with no subscribers costs a read lock and nothing else.
package events

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Type names an event. The string values are the wire names of the spec
// (tool_call_start, tool_call_end, ...) and appear as-is in logs and JSON.
type Type string

// Event types. Tool events come from tools.Executor; turn and delta events from
// the agents; scheduler events from the scheduler.
const (
	ToolCallStart  Type = "tool_call_start"
	ToolCallEnd    Type = "tool_call_end"
	ToolCallDenied Type = "tool_call_denied"
	ToolTimeout    Type = "tool_timeout"
	ToolCallError  Type = "tool_call_error"
	// ToolOutput: what a running call has produced so far (a shell
	// command's output as it comes), in Text; lossy, as deltas are: the
	// call's result is in its tool_call_end.
	ToolOutput Type = "tool_output"

	RunStart      Type = "run_start"
	RunEnd        Type = "run_end"
	TurnStart     Type = "turn_start"
	TurnEnd       Type = "turn_end"
	Token         Type = "token"
	Thinking      Type = "thinking"
	Notice        Type = "notice"
	Error         Type = "error"
	ConfirmAsk    Type = "confirmation_request"
	ConfirmAnswer Type = "confirmation_answer"

	// ContextCompacting: the model is summarising older turns to fit the
	// window (Turn.Context.Replaced says how many messages); a
	// context_compacted, or a notice saying why not, follows.
	ContextCompacting Type = "context_compacting"
	// ContextCompacted: older turns were summarised to fit the window
	// (Text is the summary, Turn.Context says what it saved).
	ContextCompacted Type = "context_compacted"

	SchedulerTaskStart Type = "scheduler_task_start"
	SchedulerTaskEnd   Type = "scheduler_task_end"
)

// Lossy reports whether events of this type may be dropped for a slow
// subscriber. Only streaming deltas are; losing any other event would leave a
// UI showing a tool as running forever.
func (t Type) Lossy() bool { return t == Token || t == Thinking || t == ToolOutput }

// Event is one thing that happened. Exactly one of the payload pointers is set
// for the types that carry one; deltas carry their text in Text.
type Event struct {
	Type Type
	Time time.Time
	// Run identifies the agent run (or scheduled task run) that produced the
	// event, so one bus can carry several concurrent runs.
	Run RunInfo
	// Text is the delta for token, thinking and tool_output events, and
	// the message for notice and error events.
	Text string
	Err  error

	Tool *ToolPayload
	Turn *TurnPayload
	Task *TaskPayload
}

// RunInfo says which run an event belongs to, and the model it talks to
// (a tool that asks the model a sub-question uses the same one).
type RunInfo struct {
	ID    string
	Agent string
	Model string
	// NumCtx is the window the run's model runs with, so a sub-query to
	// the same model (the llm tool) sends the same one and the server does
	// not reload the model with another.
	NumCtx int
}

// ToolPayload is the payload of the tool_call_* and tool_timeout events.
type ToolPayload struct {
	Tool   string
	CallID string
	// Index is the call's position among the calls of its turn, from 0:
	// parallel calls start and end in any order, and a UI shows them in
	// the order the model made them.
	Index int
	// Arguments are the parsed arguments (start) or the raw JSON string when it
	// could not be parsed (denied before parsing never happens: parsing comes
	// first, see tools.Executor).
	Arguments map[string]any
	// The fields below are set on tool_call_end (and timeout/denied where they
	// apply).
	Success        bool
	Status         string
	LatencySeconds float64
	CostUSD        float64
	// Result is the result content cut to ResultLimit bytes.
	Result string
	// Parallel is the number of calls of the same turn that run together; 1
	// for a lone call. It lets a UI draw parallel calls side by side.
	Parallel int
	// Diff is, on tool_call_end of a call that changed files, the unified
	// diff of the change, cut to DiffLimit bytes.
	Diff string
}

// DiffLimit caps a call's diff on tool_call_end. It is large enough for
// any change the write tools make whole (two 1 MiB versions of a file),
// so a panel's "+12 −3" counts all of it; the string is shared by the
// subscribers, not copied.
const DiffLimit = 4 << 20

// ResultLimit caps the result text carried by tool_call_end, so a tool that
// returns a megabyte does not copy it into every subscriber's log.
const ResultLimit = 10 * 1024

// Usage is what a model reply cost: tokens, speed and money.
type Usage struct {
	PromptTokens int     `json:"prompt_tokens"`
	OutputTokens int     `json:"output_tokens"`
	EvalSeconds  float64 `json:"eval_seconds"`
	TokensPerSec float64 `json:"tokens_per_second"`
	// PromptSeconds is the time the server spent reading the prompt: near
	// zero when it reused its cache for an unchanged prefix.
	PromptSeconds  float64 `json:"prompt_seconds"`
	LoadSeconds    float64 `json:"load_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
	CostUSD        float64 `json:"cost_usd"`
	ToolCostUSD    float64 `json:"tool_cost_usd,omitempty"`
	WallSeconds    float64 `json:"wall_seconds,omitempty"`
	ThinkingTokens int     `json:"-"`
	// Estimated says the token counts were estimated (about four
	// characters a token) because the server reported none.
	Estimated bool `json:"estimated,omitempty"`
}

// Add accumulates another reply's usage into u (speed is recomputed).
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.OutputTokens += o.OutputTokens
	u.EvalSeconds += o.EvalSeconds
	u.PromptSeconds += o.PromptSeconds
	u.LoadSeconds += o.LoadSeconds
	u.TotalSeconds += o.TotalSeconds
	u.CostUSD += o.CostUSD
	u.ToolCostUSD += o.ToolCostUSD
	u.WallSeconds += o.WallSeconds
	u.Estimated = u.Estimated || o.Estimated
	if u.EvalSeconds > 0 {
		u.TokensPerSec = float64(u.OutputTokens) / u.EvalSeconds
	}
}

// TurnPayload is the payload of turn_start / turn_end and run_start / run_end.
type TurnPayload struct {
	Turn  int
	Model string
	// Content and Thinking are the complete texts of the turn (turn_end) or
	// the final answer (run_end).
	Content  string
	Thinking string
	Usage    Usage
	// ToolCalls is how many tool calls the turn asked for.
	ToolCalls int
	// Context is what the turn's request took of the window (turn_start:
	// jarvis's estimate; turn_end: the server's count).
	Context *ContextPayload
}

// ContextPayload says how full the window is (turn events) or what a
// compaction did (context_compacted).
type ContextPayload struct {
	Window int
	// PromptTokens is the prompt: estimated before the request, counted
	// by the server after it.
	PromptTokens int
	// Estimated is true while PromptTokens is jarvis's estimate.
	Estimated bool
	// CutResults counts tool results shortened for the model.
	CutResults int
	// Replaced, Kept, Before and After describe a compaction: the
	// messages the summary stands for, those kept after it, and the
	// prompt's tokens before and after.
	Replaced, Kept, Before, After int
	// LeftOut is set when the Replaced messages were left out without a
	// summary (the summary was discarded and the request did not fit).
	LeftOut bool
}

// TaskPayload is the payload of the scheduler events.
type TaskPayload struct {
	TaskID  string
	Prompt  string
	Success bool
	Result  string
	Error   string
}

type runKey struct{}

// WithRun returns a context whose events are stamped with run. The executor
// reads it so that tool events say which agent run they belong to.
func WithRun(ctx context.Context, run RunInfo) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom returns the run stamped on ctx by WithRun, or the zero RunInfo.
func RunFrom(ctx context.Context) RunInfo {
	run, _ := ctx.Value(runKey{}).(RunInfo)
	return run
}

// Publisher is what producers need: the executor and the agents take a
// Publisher, never a whole Bus, so tests can hand them a recorder.
type Publisher interface {
	Publish(Event)
}

// Bus fans events out to subscribers. The zero value is not usable; call New.
type Bus struct {
	mu        sync.RWMutex
	subs      map[*Subscription]struct{}
	closed    bool
	quit      chan struct{}
	closeOnce sync.Once
}

// New returns an empty bus.
func New() *Bus {
	return &Bus{subs: make(map[*Subscription]struct{}), quit: make(chan struct{})}
}

// Subscription is one subscriber's channel. Read C until Close.
type Subscription struct {
	C       <-chan Event
	c       chan Event
	bus     *Bus
	done    chan struct{}
	once    sync.Once
	dropped atomic.Uint64
}

// Subscribe returns a subscription whose channel holds up to buffer events.
// A buffer of a few hundred lets deltas flow while the subscriber renders.
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 1
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		close(c)
	} else {
		b.subs[s] = struct{}{}
	}
	b.mu.Unlock()
	return s
}

// Close ends the subscription. Publishers blocked on it are released; its
// channel is closed once no publisher can send on it any more.
func (s *Subscription) Close() {
	s.once.Do(func() {
		close(s.done)
		s.bus.mu.Lock()
		if _, ok := s.bus.subs[s]; ok {
			delete(s.bus.subs, s)
			close(s.c)
		}
		s.bus.mu.Unlock()
	})
}

// Dropped reports how many lossy deltas this subscriber missed because its
// buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Publish stamps the time (when unset) and delivers e to every subscriber,
// with the semantics in the package comment.
func (b *Bus) Publish(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	lossy := e.Type.Lossy()
	for s := range b.subs {
		if lossy {
			select {
			case s.c <- e:
			default:
				s.dropped.Add(1)
			}
			continue
		}
		select {
		case s.c <- e:
		case <-s.done:
		case <-b.quit:
		}
	}
}

// Close closes every subscription; later subscriptions get a closed channel.
// Publishers blocked on a subscriber that stopped reading are released first.
func (b *Bus) Close() {
	b.closeOnce.Do(func() { close(b.quit) })
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.c)
	}
}

// Discard is a Publisher that drops everything, for callers that want no
// events.
var Discard Publisher = discard{}

type discard struct{}

func (discard) Publish(Event) {}

// Recorder is a Publisher that keeps every event, for tests and for callers
// that want to inspect a run afterwards.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Publish records e.
func (r *Recorder) Publish(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Types returns the recorded event types in order.
func (r *Recorder) Types() []Type {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Type, len(r.events))
	for i, e := range r.events {
		out[i] = e.Type
	}
	return out
}
