package agent

import (
	"context"

	"github.com/jarvis-workbench/jarvis/engine"
)

// DefaultSystemPrompt is the system prompt of simple and orchestrator when
// the person sets none.
const DefaultSystemPrompt = "You are a helpful assistant running on the user's own machine. Answer concisely and accurately. When tools are available, use them for anything that needs exact computation, fresh data or actions, and say what you did."

// simpleAgent makes one model call with no tools.
type simpleAgent struct{ loop }

func (a *simpleAgent) Name() string { return Simple }

func (a *simpleAgent) Run(ctx context.Context, conv *Conversation, input string) (*Result, error) {
	return a.Answer(ctx, conv, Input{Text: input})
}

func (a *simpleAgent) Answer(ctx context.Context, conv *Conversation, in Input) (*Result, error) {
	r, err := a.begin(ctx, conv, in, true)
	if err != nil {
		return r.finish(err)
	}
	resp, err := r.turn(a.systemPrompt(), nil)
	if err != nil {
		r.keepPartial(resp)
		return r.finish(err)
	}
	r.append(engine.Message{Role: engine.RoleAssistant, Content: resp.Message.Content, Thinking: resp.Message.Thinking}, &resp.Usage, nil)
	r.result.Content = resp.Message.Content
	return r.finish(nil)
}

func (l *loop) systemPrompt() string {
	if l.cfg.System != "" {
		return l.cfg.System
	}
	return DefaultSystemPrompt
}
