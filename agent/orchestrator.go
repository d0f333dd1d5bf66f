package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// orchestratorAgent uses the model's native function calling.
type orchestratorAgent struct{ loop }

func (a *orchestratorAgent) Name() string { return Orchestrator }

func (a *orchestratorAgent) Run(ctx context.Context, conv *Conversation, input string) (*Result, error) {
	return a.Answer(ctx, conv, Input{Text: input})
}

func (a *orchestratorAgent) Answer(ctx context.Context, conv *Conversation, input Input) (*Result, error) {
	defs := a.toolDefs()
	if len(defs) > 0 {
		// An embedding model is refused by begin, not sent on to react.
		if caps, err := a.cfg.Engine.Capabilities(ctx, a.cfg.Model); err == nil && caps != nil && !slices.Contains(caps, engine.CapTools) && !engine.EmbeddingOnly(caps) {
			return a.fallback(ctx, conv, input, nil)
		}
		// When capabilities cannot be read, or the server does not say
		// them (nil), try: the chat answers 400 if the model has no
		// tools, and the fallback below handles it.
	}
	r, err := a.begin(ctx, conv, input, true)
	if err != nil {
		return r.finish(err)
	}
	var guard loopGuard
	for r.result.Turns < a.cfg.MaxTurns {
		resp, err := r.turn(a.systemPrompt(), defs)
		if err != nil {
			var unsupported *engine.ToolsUnsupportedError
			if errors.As(err, &unsupported) && r.result.Turns == 1 {
				// Nothing happened yet beyond the user's message: go on
				// from it as react.
				return a.fallback(ctx, conv, input, r)
			}
			r.keepPartial(resp)
			if cerr := r.cancelled(); cerr != nil {
				return r.finish(cerr)
			}
			return r.finish(err)
		}
		msg := resp.Message
		if len(msg.ToolCalls) == 0 && len(defs) > 0 {
			if calls := textToolCalls(msg.Content, offered(defs)); len(calls) > 0 {
				msg.ToolCalls = calls
				r.notice(fmt.Sprintf("The model wrote %d tool call(s) as text instead of calling natively; jarvis ran them.", len(calls)))
			}
		}
		reply := engine.Message{Role: engine.RoleAssistant, Content: msg.Content, Thinking: msg.Thinking, ToolCalls: msg.ToolCalls}
		r.result.Content = msg.Content
		if len(msg.ToolCalls) == 0 {
			r.append(reply, &resp.Usage, nil)
			if msg.Content == "" {
				r.notice("The model returned an empty reply.")
			}
			return r.finish(nil)
		}
		if call, looping := guard.repeated(msg.ToolCalls); looping {
			r.append(reply, &resp.Usage, nil)
			a.refuseCalls(r, msg.ToolCalls, call)
			r.stop(StopLoop, loopNotice(call.Name))
			return r.finish(nil)
		}
		r.runCalls(reply, &resp.Usage)
		if err := r.cancelled(); err != nil {
			return r.finish(err)
		}
	}
	r.stop(StopMaxTurns, maxTurnsNotice(a.cfg.MaxTurns))
	return r.finish(nil)
}

// refuseCalls answers a looping turn's calls without running them, so the
// conversation keeps one result per call.
func (a *orchestratorAgent) refuseCalls(r *run, calls []engine.ToolCall, looping engine.ToolCall) {
	for _, c := range calls {
		res := tools.Fail("Not run: %s was called with the same arguments %d times; the run was stopped to break the loop.", looping.Name, LoopGuardLimit)
		res.ToolName = c.Name
		res.Status = tools.StatusDenied
		r.append(engine.Message{Role: engine.RoleTool, Content: res.Content, ToolName: c.Name, ToolCallID: c.ID}, nil, &res)
		r.result.ToolResults = append(r.result.ToolResults, res)
	}
}

// fallback continues as react for a model without native tools, saying so.
func (a *orchestratorAgent) fallback(ctx context.Context, conv *Conversation, input Input, started *run) (*Result, error) {
	msg := fmt.Sprintf("Model %s does not support native tool calls; continuing with the react agent (tools are described in the prompt instead).", a.cfg.Model)
	react := &reactAgent{loop{cfg: a.cfg, name: ReAct}}
	if a.cfg.View != nil {
		// What the view counts and shows for this conversation is react's
		// from now on (see ModelView.NextRequest).
		a.cfg.View.fellBack(a.cfg.Model)
	}
	if started == nil {
		// Known before anything ran: the run is react's from the start.
		info := events.RunFrom(ctx)
		if info.ID == "" {
			info.ID = newRunID()
		}
		info.Agent = Orchestrator
		a.cfg.Bus.Publish(events.Event{Type: events.Notice, Run: info, Text: msg})
		res, err := react.run(events.WithRun(ctx, info), conv, input, true)
		if res != nil {
			res.Notices = append([]string{msg}, res.Notices...)
		}
		return res, err
	}
	// Found out by the server's answer to the first turn: the same run
	// goes on as react, its turns and usage counted on.
	started.notice(msg)
	started.loop = &react.loop
	started.info.Agent = ReAct
	started.result.Agent = ReAct
	return react.steps(started)
}

func offered(defs []engine.ToolDef) map[string]bool {
	m := make(map[string]bool, len(defs))
	for _, d := range defs {
		m[d.Name] = true
	}
	return m
}

func (l *loop) toolDefs() []engine.ToolDef {
	if l.cfg.Executor == nil {
		return nil
	}
	specs := l.cfg.Executor.AvailableTools()
	defs := make([]engine.ToolDef, len(specs))
	for i, s := range specs {
		defs[i] = engine.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return defs
}
