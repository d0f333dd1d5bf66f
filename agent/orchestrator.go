package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jarvis-workbench/jarvis/agent/events"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
)

// orchestratorAgent uses the model's native function calling.
type orchestratorAgent struct{ loop }

func (a *orchestratorAgent) Name() string { return Orchestrator }

func (a *orchestratorAgent) Run(ctx context.Context, conv *Conversation, input string) (*Result, error) {
	defs := a.toolDefs()
	if len(defs) > 0 {
		if caps, err := a.cfg.Engine.Capabilities(ctx, a.cfg.Model); err == nil && !slices.Contains(caps, engine.CapTools) {
			return a.fallback(ctx, conv, input, nil)
		}
		// When capabilities cannot be read, try: the chat answers 400 if
		// the model has no tools, and the fallback below handles it.
	}
	r := a.begin(ctx, conv, input, true)
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
		r.append(engine.Message{Role: engine.RoleAssistant, Content: msg.Content, Thinking: msg.Thinking, ToolCalls: msg.ToolCalls}, &resp.Usage, nil)
		r.result.Content = msg.Content
		if len(msg.ToolCalls) == 0 {
			if msg.Content == "" {
				r.notice("The model returned an empty reply.")
			}
			return r.finish(nil)
		}
		if call, looping := guard.repeated(msg.ToolCalls); looping {
			a.refuseCalls(r, msg.ToolCalls, call)
			r.result.Stopped = "loop_guard"
			r.result.Content = fmt.Sprintf("Stopped: the model called %s with the same arguments %d times without reaching an answer.", call.Name, LoopGuardLimit)
			r.notice(r.result.Content)
			return r.finish(nil)
		}
		r.runTools(msg.ToolCalls, false)
		if err := r.cancelled(); err != nil {
			return r.finish(err)
		}
	}
	r.result.Stopped = "max_turns"
	if r.result.Content == "" {
		r.result.Content = MaxTurnsText
	}
	r.notice(fmt.Sprintf("Stopped after %d turns (max_turns).", a.cfg.MaxTurns))
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
func (a *orchestratorAgent) fallback(ctx context.Context, conv *Conversation, input string, started *run) (*Result, error) {
	msg := fmt.Sprintf("Model %s does not support native tool calls; continuing with the react agent (tools are described in the prompt instead).", a.cfg.Model)
	react := &reactAgent{loop{cfg: a.cfg, name: ReAct}}
	var prior *Result
	if started != nil {
		started.notice(msg)
		prior = started.result
		ctx = events.WithRun(ctx, started.info) // one run, whichever agent ends it
	} else {
		info := events.RunFrom(ctx)
		if info.ID == "" {
			info.ID = newRunID()
		}
		info.Agent = Orchestrator
		ctx = events.WithRun(ctx, info)
		a.cfg.Bus.Publish(events.Event{Type: events.Notice, Run: info, Text: msg})
	}
	res, err := react.run(ctx, conv, input, started == nil)
	if res != nil {
		res.Notices = append([]string{msg}, res.Notices...)
		if prior != nil {
			res.Usage.Add(prior.Usage)
			res.Turns += prior.Turns
		}
	}
	return res, err
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
