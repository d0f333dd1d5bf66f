package sdk

import (
	"context"
	"fmt"
	"sync"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// AskOptions are one question's settings; zero fields take the
// configuration's.
type AskOptions struct {
	// Agent is simple, orchestrator or react.
	Agent string
	// Tools are the tools the model may call, by name. nil takes the
	// configured ones; an empty, non-nil slice gives none.
	Tools []string
	// System replaces the agent's system prompt.
	System string
	// Yes approves every call that needs confirmation (the command's
	// --yes).
	Yes bool
	// Confirm is asked about each call that needs confirmation and no
	// earlier layer of the approval policy settled (the config, this
	// Jarvis's session approvals, the always-approvals, Yes). Without it
	// such calls are denied: nothing that can do harm runs unasked. Its
	// AllowSession holds for this Jarvis's later questions; AllowAlways is
	// remembered in the database. It may be called from several
	// goroutines, one call at a time.
	Confirm tools.ConfirmFunc
	// OnEvent receives the run's events as they happen, the ones the
	// workbench draws: tokens, thinking, tool calls starting and ending,
	// confirmations, turns, notices. Calls are one at a time; it must
	// return quickly, since the run waits for it.
	OnEvent func(events.Event)
}

// Result is an answer (the spec's ask_full result): the final content and
// thinking, every tool result in the order the calls were made (whole,
// though the model may have read them shortened), the usage, the model
// and agent that answered, the turns, notices, why a run stopped early,
// and what it took of the context window. It is the agent's own result.
type Result = agent.Result

// Ask asks one question in a conversation of its own and returns the
// answer with every tool result. It returns a Result even when it fails:
// what arrived before the failure (the partial answer, the tool results,
// the usage). An unknown tool is a *tools.UnknownToolError; a model the
// server does not have, or a server that does not answer, is the engine's
// error. Nothing is saved as a session; approvals are decided and audited
// as everywhere in jarvis (source "sdk"). For a conversation, where each
// question goes on from the answers before it, use NewSession.
func (j *Jarvis) Ask(ctx context.Context, prompt string, o AskOptions) (*Result, error) {
	s := j.NewSession(o)
	defer s.Close()
	return s.Ask(ctx, prompt)
}

// policy is the approval policy of one question: the one every entry
// point uses, with this Jarvis's session approvals, Yes, and Confirm as
// the person to ask.
func (j *Jarvis) policy(o AskOptions) *tools.Policy {
	po := tools.PolicyOptions{Source: tools.SourceSDK, Yes: o.Yes, Approvals: j.approvals, Nobody: tools.ByNobody}
	if o.Confirm != nil {
		po.Asker = guardedConfirm(o.Confirm)
	}
	return j.env.Policy(po)
}

func (j *Jarvis) startMCP(ctx context.Context) error {
	j.mcpMu.Lock()
	defer j.mcpMu.Unlock()
	_, err := j.env.StartMCP(ctx, app.MCPOptions{Wait: true, ClientVersion: "jarvis-sdk"})
	return err
}

// fromAgent is the result a program gets: its notices' advice in words
// (no flag or key names a program could not use; see engine.Say).
func fromAgent(r *agent.Result) Result {
	out := *r
	out.ToolResults = append([]tools.Result{}, r.ToolResults...)
	out.Notices = nil
	for _, n := range r.Notices {
		out.Notices = append(out.Notices, engine.Say(n, engine.Plain))
	}
	return out
}

// guardedConfirm asks f; a panic in it denies the call, saying why, so a
// bug in the callback neither runs the tool nor brings the program down
// from one of the executor's goroutines.
type guardedConfirm tools.ConfirmFunc

func (g guardedConfirm) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	a, err := g.Answer(ctx, req)
	return a.Decision, err
}

func (g guardedConfirm) Answer(ctx context.Context, req tools.ConfirmRequest) (a tools.Answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = tools.Answer{Decision: tools.Deny, Reason: fmt.Sprintf("the confirmation callback failed: %v", p)}, nil
		}
	}()
	d, err := g(ctx, req)
	if err != nil {
		return tools.Answer{Decision: tools.Deny}, err
	}
	return tools.Answer{Decision: d}, nil
}

// eventFunc hands events to a function, one at a time.
type eventFunc struct {
	mu sync.Mutex
	f  func(events.Event)
}

func newEventFunc(f func(events.Event)) events.Publisher {
	if f == nil {
		return events.Discard
	}
	return &eventFunc{f: f}
}

func (p *eventFunc) Publish(e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Text = engine.Say(e.Text, engine.Plain)
	p.f(e)
}
