package agent

import (
	"context"
	"errors"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// loop is the machinery the agents share: it streams one model turn with
// its events and keeps the run's accounting.
type loop struct {
	cfg  Config
	name string
}

// run is one Run in progress.
type run struct {
	*loop
	ctx     context.Context
	info    events.RunInfo
	conv    *Conversation
	result  *Result
	started time.Time
}

// begin starts a run. appendInput is false when a run continues one whose
// user message is already in the conversation (a fallback to react).
func (l *loop) begin(ctx context.Context, conv *Conversation, input string, appendInput bool) *run {
	info := events.RunFrom(ctx)
	if info.ID == "" {
		info.ID = newRunID()
	}
	info.Agent, info.Model = l.name, l.cfg.Model
	r := &run{
		loop: l, ctx: events.WithRun(ctx, info), info: info, conv: conv,
		result: &Result{Model: l.cfg.Model, Agent: l.name, ToolResults: []tools.Result{}}, started: time.Now(),
	}
	if appendInput {
		r.append(engine.Message{Role: engine.RoleUser, Content: input}, nil, nil)
	}
	r.publish(events.Event{Type: events.RunStart, Text: input, Turn: &events.TurnPayload{Model: l.cfg.Model}})
	return r
}

// append adds a message to the conversation and reports it.
func (r *run) append(m engine.Message, usage *events.Usage, res *tools.Result) {
	r.conv.Messages = append(r.conv.Messages, m)
	if r.cfg.OnMessage != nil {
		r.cfg.OnMessage(Appended{Message: m, Usage: usage, Result: res})
	}
}

func (r *run) publish(e events.Event) {
	e.Run = r.info
	r.cfg.Bus.Publish(e)
}

func (r *run) notice(msg string) {
	r.result.Notices = append(r.result.Notices, msg)
	r.publish(events.Event{Type: events.Notice, Text: msg})
}

// finish publishes run_end (or the error) and returns the result.
func (r *run) finish(err error) (*Result, error) {
	r.result.Usage.WallSeconds = time.Since(r.started).Seconds()
	if err != nil {
		if r.ctx.Err() != nil && r.result.Stopped == "" {
			r.result.Stopped = "cancelled"
		}
		r.publish(events.Event{Type: events.Error, Err: err, Text: err.Error()})
	}
	r.publish(events.Event{Type: events.RunEnd, Turn: &events.TurnPayload{
		Turn: r.result.Turns, Model: r.result.Model, Content: r.result.Content, Thinking: r.result.Thinking, Usage: r.result.Usage,
	}})
	return r.result, err
}

// turn streams one model reply. The reply's text is not appended to the
// conversation here: the caller decides what the assistant message holds.
func (r *run) turn(system string, toolDefs []engine.ToolDef) (engine.ChatResponse, error) {
	r.result.Turns++
	n := r.result.Turns
	r.publish(events.Event{Type: events.TurnStart, Turn: &events.TurnPayload{Turn: n, Model: r.cfg.Model}})
	msgs := make([]engine.Message, 0, len(r.conv.Messages)+1)
	if system != "" {
		msgs = append(msgs, engine.Message{Role: engine.RoleSystem, Content: system})
	}
	msgs = append(msgs, r.conv.Messages...)
	req := engine.ChatRequest{Model: r.cfg.Model, Messages: msgs, Tools: toolDefs, Options: r.cfg.Options}
	begin := time.Now()
	resp, err := r.cfg.Engine.Chat(r.ctx, req, r.onChunk)
	usage := resp.Usage
	usage.WallSeconds = time.Since(begin).Seconds()
	if r.cfg.Price != nil {
		model := resp.Model
		if model == "" {
			model = r.cfg.Model
		}
		usage.CostUSD = r.cfg.Price(model, usage.PromptTokens, usage.OutputTokens)
	}
	if resp.Model != "" {
		r.result.Model = resp.Model
	}
	r.result.Usage.Add(usage)
	if resp.Message.Thinking != "" {
		r.result.Thinking = resp.Message.Thinking
	}
	r.publish(events.Event{Type: events.TurnEnd, Turn: &events.TurnPayload{
		Turn: n, Model: r.result.Model, Content: resp.Message.Content, Thinking: resp.Message.Thinking,
		Usage: usage, ToolCalls: len(resp.Message.ToolCalls),
	}})
	return resp, err
}

// onChunk forwards deltas as events. It runs once per streamed token, so it
// must stay allocation-free beyond the event itself.
func (r *run) onChunk(c engine.Chunk) {
	if c.Thinking != "" {
		r.cfg.Bus.Publish(events.Event{Type: events.Thinking, Run: r.info, Text: c.Thinking})
	}
	if c.Content != "" {
		r.cfg.Bus.Publish(events.Event{Type: events.Token, Run: r.info, Text: c.Content})
	}
}

// keepPartial appends what arrived of a reply that failed mid-stream, so the
// person keeps it. Tool calls of an unfinished reply are dropped: they never
// ran, and an assistant message with calls must be followed by results.
func (r *run) keepPartial(resp engine.ChatResponse) {
	if resp.Message.Content == "" && resp.Message.Thinking == "" {
		return
	}
	usage := resp.Usage
	r.append(engine.Message{Role: engine.RoleAssistant, Content: resp.Message.Content, Thinking: resp.Message.Thinking}, &usage, nil)
	r.result.Content = resp.Message.Content
}

// runTools executes calls through the executor and appends one tool message
// per call, in the calls' order (as "Observation: ..." user messages for the
// text protocol). Cancellation still yields a result per call (the executor
// reports them cancelled), so the conversation stays valid.
func (r *run) runTools(calls []engine.ToolCall, asObservation bool) []tools.Result {
	tcalls := make([]tools.Call, len(calls))
	for i, c := range calls {
		tcalls[i] = tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	var results []tools.Result
	if r.cfg.Executor != nil {
		results = r.cfg.Executor.ExecuteAll(r.ctx, tcalls)
	} else {
		results = make([]tools.Result, len(calls))
		for i, c := range calls {
			results[i] = tools.Fail("Unknown tool: %s (available: none)", c.Name)
			results[i].ToolName = c.Name
		}
	}
	for i, res := range results {
		m := engine.Message{Role: engine.RoleTool, Content: res.Content, ToolName: calls[i].Name, ToolCallID: calls[i].ID}
		if asObservation {
			m = engine.Message{Role: engine.RoleUser, Content: "Observation: " + res.Content}
		}
		r.append(m, nil, &results[i])
		r.result.ToolResults = append(r.result.ToolResults, res)
		r.result.Usage.ToolCostUSD += res.CostUSD
	}
	return results
}

// cancelled reports whether the run's context ended, as an error to return.
func (r *run) cancelled() error {
	if err := r.ctx.Err(); err != nil {
		r.result.Stopped = "cancelled"
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("the run took too long and was stopped")
		}
		return errors.New("the run was cancelled")
	}
	return nil
}
