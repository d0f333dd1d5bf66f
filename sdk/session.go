package sdk

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Session is a conversation: each Ask is a turn after the ones before it,
// as in the workbench. The model reads the earlier questions, answers and
// tool results (compacted, and said so in a notice, when they outgrow
// the window); the tools are built once for the whole conversation, so a
// repl keeps its variables from one question to the next; "allow for the
// session" answers hold for its later questions. A Session asks one
// question at a time (an Ask waits for the one before it) and is not
// saved; Close releases its tools.
type Session struct {
	j *Jarvis
	o AskOptions

	mu     sync.Mutex
	conv   *agent.Conversation
	turn   *app.Turn // built by the first Ask
	close  func()
	closed bool
}

// NewSession starts a conversation whose questions are asked with o (the
// agent, the tools, the system prompt, the approvals, where the events
// go). Nothing is sent until the first Ask.
func (j *Jarvis) NewSession(o AskOptions) *Session {
	return &Session{j: j, o: o, conv: &agent.Conversation{}, close: func() {}}
}

// Ask asks the next question of the conversation and returns its answer
// with the tool results of this turn. Like Jarvis.Ask, it returns a
// Result even when it fails; a question refused as too big for the
// window (Result.Refused) leaves the conversation as it was.
func (s *Session) Ask(ctx context.Context, prompt string) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, o := s.j, s.o
	res := &Result{Agent: j.env.Config.Agent, Model: j.env.Model, ToolResults: []tools.Result{}}
	if o.Agent != "" {
		res.Agent = o.Agent
	}
	switch {
	case s.closed:
		return res, errors.New("ask: the session is closed")
	case strings.TrimSpace(prompt) == "":
		return res, errors.New("ask: the question is empty")
	}
	var notices []string
	if s.turn == nil {
		note, err := s.start(ctx, res.Agent)
		if err != nil {
			return res, err
		}
		if note != "" {
			notices = append(notices, note)
		}
	}
	res.Model = s.turn.Model
	run, err := app.RunTurn(ctx, *s.turn, s.conv, agent.Input{Text: prompt})
	if run != nil {
		*res = fromAgent(run)
		res.Notices = append(notices, res.Notices...)
	}
	return res, err
}

// start builds what every turn of the session shares: the tools and their
// executor, the model (asking the server for one when none is set) and the
// model's view of the conversation. It returns the note saying which model
// was picked, if one was.
func (s *Session) start(ctx context.Context, agentName string) (string, error) {
	j, o := s.j, s.o
	names := j.env.Config.Tools
	if o.Tools != nil {
		names = tools.ParseList(strings.Join(o.Tools, ","))
	}
	for _, n := range names {
		if !j.env.Registry.Has(n) && !app.NeedsMCP(j.env.Config.MCP, []string{n}) {
			return "", &tools.UnknownToolError{Name: n, Known: j.env.Registry.Names()}
		}
	}
	if len(names) > 0 && app.NeedsMCP(j.env.Config.MCP, names) {
		if err := j.startMCP(ctx); err != nil {
			return "", err
		}
	}
	model, note, err := j.env.ResolveModel(ctx)
	if err != nil {
		return "", err
	}
	bus := newEventFunc(o.OnEvent)
	exec, closeTools, err := j.env.Executor(names, j.policy(o), bus)
	if err != nil {
		return "", err
	}
	turn := j.env.Turn(agentName, model, exec, bus)
	if o.System != "" {
		turn.System = o.System
	}
	s.turn, s.close = &turn, closeTools
	return note, nil
}

// Messages returns the conversation so far, in order: the questions, the
// model's replies with their tool calls, the tool results (and, once
// older turns were compacted, the summary that stands for them).
func (s *Session) Messages() []engine.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.conv.Messages)
}

// Close releases the session's tools (a repl's interpreter). Asking after
// Close is an error; closing again does nothing.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.close()
	}
	return nil
}
