// Package agent runs conversations between a person, a model and tools.
//
// Three agents share one turn loop: simple (one model call, no tools),
// orchestrator (native function calling: each turn streams a reply, runs
// the tool calls it asks for in parallel, feeds the results back, until the
// model answers or max turns) and react (a text protocol for models without
// native tools: Thought / Action / Action Input / Observation / Final
// Answer, with BuildToolDescriptions in the system prompt). When a model
// cannot do native tool calls, orchestrator says so and continues as react.
//
// Everything an agent does is published as events (run and turn
// boundaries with usage, token and thinking deltas, tool events from the
// executor, notices, errors), so interfaces never reach into an agent.
//
// The conversation is a value the caller owns (*Conversation): the TUI keeps
// one per session, the scheduler makes a fresh one per task run. A run only
// appends to it, and leaves it consistent even when cancelled: an assistant
// message that asked for tool calls is always followed by one tool message
// per call.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Names of the agents.
const (
	Simple       = "simple"
	Orchestrator = "orchestrator"
	ReAct        = "react"
)

// Names lists the agents in the order help texts show them.
var Names = []string{Simple, Orchestrator, ReAct}

// DefaultMaxTurns bounds a run when Config.MaxTurns is 0.
const DefaultMaxTurns = 10

// Why a run stopped without the model's whole answer (Result.Stopped).
// The notice the run published says it in words; the answer (Content) is
// only ever what the model wrote, never jarvis's notice.
const (
	// StopMaxTurns: every turn the run had went on tool calls.
	StopMaxTurns = "max_turns"
	// StopLoop: the model repeated a call (LoopGuardLimit) and the loop
	// guard stopped the run.
	StopLoop = "loop"
	// StopLength: the reply reached its length limit (num_predict, or
	// the server's cap) before the model finished it.
	StopLength = "length"
	// StopWindowFull: the reply filled the context window.
	StopWindowFull = "window_full"
	// StopCancelled: the run was cancelled, or ran out of time.
	StopCancelled = "cancelled"
)

// Conversation is the history of a chat: user, assistant and tool messages.
// The system prompt is not stored; each agent adds its own on every request,
// so a conversation can move between agents.
type Conversation struct {
	Messages []engine.Message
}

// Clone returns an independent copy.
func (c *Conversation) Clone() *Conversation {
	return &Conversation{Messages: append([]engine.Message(nil), c.Messages...)}
}

// Price converts token counts into dollars; nil means free.
type Price func(model string, promptTokens, outputTokens int) float64

// Config is what an agent is built from. Engine is required; Executor may be
// nil (no tools).
type Config struct {
	Engine   engine.InferenceEngine
	Model    string
	Executor *tools.Executor
	Bus      events.Publisher
	// System replaces the agent's default system prompt (react keeps its
	// protocol and tool section and puts System before them).
	System   string
	Options  engine.Options
	MaxTurns int
	Price    Price
	// OnMessage, when set, is called on the run's goroutine each time a
	// message is appended to the conversation, so a caller can persist the
	// conversation as it grows (a crash then loses at most the reply being
	// streamed), and when older turns are compacted.
	OnMessage func(Appended)
	// View is the model's view of the conversation (window, budget,
	// cuts, compaction). A caller that keeps a conversation across runs
	// (the TUI) keeps one view for it, so the window and the calibration
	// carry over; nil gives each run a fresh one.
	View *ModelView
}

// Appended is a message just added to a conversation, with what it cost
// (assistant messages) or the tool result it carries (tool messages), or
// a compaction: Message is then the summary that replaces, for the model,
// the first Compaction.Replaced messages.
type Appended struct {
	Message    engine.Message
	Usage      *events.Usage
	Result     *tools.Result
	Compaction *Compaction
	// Incomplete says why an assistant message stopped before the model
	// finished it (one of the Incomplete* values), "" when it is whole:
	// a transcript, a reloaded session and an export must not present a
	// cut reply as the model's full answer.
	Incomplete string
	// Context is what an assistant message's request took of the window
	// (nil for other messages, and when the window is not known), and
	// RunSeconds how long the run had gone on when the message was
	// appended: a reopened session draws a reply's footer and its run's
	// total line as the live transcript did.
	Context    *events.ContextPayload
	RunSeconds float64
}

// Why a reply stopped before its end (Appended.Incomplete).
const (
	// IncompleteCancelled: the person cancelled the run mid-reply.
	IncompleteCancelled = "cancelled"
	// IncompleteLost: the connection to the server was lost mid-reply.
	IncompleteLost = "lost"
	// IncompleteLength: the reply reached its length limit (done_reason
	// "length": num_predict, or a full window).
	IncompleteLength = "length"
	// IncompleteRefused: the server stopped the reply on purpose (a
	// content filter).
	IncompleteRefused = "refused"
	// IncompleteError: the server ended the reply with an error.
	IncompleteError = "error"
)

// Result is what a run produced.
type Result struct {
	// Content is the model's answer: the last turn's text. A run that
	// stopped (Stopped) holds what the model wrote of it, if anything.
	Content string `json:"content"`
	// Thinking is every turn's thinking, in order, a blank line between
	// turns.
	Thinking    string         `json:"thinking,omitempty"`
	ToolResults []tools.Result `json:"tool_results"`
	Usage       events.Usage   `json:"usage"`
	Model       string         `json:"model"`
	Turns       int            `json:"turns"`
	// Agent is the agent that produced the answer (react after a fallback).
	Agent string `json:"agent"`
	// Notices are things the person should know (a fallback, a loop guard).
	Notices []string `json:"notices,omitempty"`
	// Stopped says why a run ended without the model's whole answer (one
	// of the Stop* values), "" when the model answered.
	Stopped string `json:"stopped,omitempty"`
	// Context says what the run's requests took of the window.
	Context RunContext `json:"context"`
	// Refused is set when the run's input was refused as too big for the
	// window before the model read any of it: it was taken out of the
	// conversation again, which is as it was before the run, and nothing
	// of the run reached OnMessage. The caller gives the input back to
	// the person (the workbench puts it back in the prompt).
	Refused bool `json:"refused,omitempty"`
}

// RunContext is the window a run had and how it used it.
type RunContext struct {
	Window int `json:"window"`
	// PromptTokens is the last request's prompt, as the server counted it
	// (jarvis's estimate when the server said nothing).
	PromptTokens int  `json:"prompt_tokens"`
	Compacted    bool `json:"compacted"`
	// CutResults counts the tool results shortened for the model in the
	// run's requests (each result once).
	CutResults int `json:"cut_results"`
}

// Agent runs one user input to an answer.
type Agent interface {
	Name() string
	// Run appends input and everything that follows to conv. It returns the
	// result and, when the run could not finish (engine error, cancel),
	// an error alongside the partial result.
	Run(ctx context.Context, conv *Conversation, input string) (*Result, error)
	// Answer is Run with the whole input: the text with its images, or
	// the conversation's last question again (Input.Again). Images, new
	// or earlier in conv, are refused with an
	// *engine.VisionUnsupportedError before anything is appended when
	// the model cannot read them.
	Answer(ctx context.Context, conv *Conversation, in Input) (*Result, error)
}

// New returns the named agent.
func New(name string, cfg Config) (Agent, error) {
	if cfg.Engine == nil {
		return nil, fmt.Errorf("agent %s: no engine", name)
	}
	if cfg.Bus == nil {
		cfg.Bus = events.Discard
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	switch name {
	case Simple:
		return &simpleAgent{loop{cfg: cfg, name: Simple}}, nil
	case Orchestrator:
		return &orchestratorAgent{loop{cfg: cfg, name: Orchestrator}}, nil
	case ReAct:
		return &reactAgent{loop{cfg: cfg, name: ReAct}}, nil
	}
	return nil, fmt.Errorf("unknown agent %q; choose one of: %s", name, strings.Join(Names, ", "))
}

func newRunID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxTurnsNotice says a run used every turn it had.
func maxTurnsNotice(n int) string {
	return fmt.Sprintf("Stopped after %s (max_turns) without a final answer: every turn went on tool calls. Allow more turns ({{turns}}) or ask a narrower question.", countOf(n, "turn"))
}

// loopNotice says the loop guard stopped a run.
func loopNotice(tool string) string {
	return fmt.Sprintf("Stopped: the model called %s with the same arguments %d times without reaching an answer.", tool, LoopGuardLimit)
}
