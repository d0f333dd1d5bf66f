package app

import (
	"context"
	"errors"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// A turn is one question put to a model with its tools, the one way every
// front end runs a conversation: the workbench, `ask`, scheduled runs,
// evaluations and the SDK. RunTurn is the only place that builds an
// agent's configuration; a front end says what differs (its conversation,
// its approvals, where the events go) and the rest comes from the
// configuration through Env.Turn. The model's view (agent.ModelView) does
// the rest: the window, the budget of each request, compaction, the cut of
// big results for the model.

// Turn says how to run one question.
type Turn struct {
	Engine engine.InferenceEngine
	Model  string
	// Agent is simple, orchestrator or react.
	Agent string
	// Executor runs the tool calls (its policy decides confirmations).
	Executor *tools.Executor
	// Bus receives the run's events; nil discards them.
	Bus      events.Publisher
	System   string
	Options  engine.Options
	MaxTurns int
	Price    agent.Price
	// View is the model's side of the conversation (window, calibration,
	// compaction); a conversation keeps one across its turns. nil: a
	// fresh one for the turn.
	View *agent.ModelView
	// OnMessage is told of each message the run appends (a session
	// records them).
	OnMessage func(agent.Appended)
}

// Config is the agent configuration of the turn: the one place it is
// built.
func (t Turn) Config() agent.Config {
	return agent.Config{
		Engine: t.Engine, Model: t.Model, Executor: t.Executor, Bus: t.Bus, System: t.System,
		Options: t.Options, MaxTurns: t.MaxTurns, Price: t.Price, View: t.View, OnMessage: t.OnMessage,
	}
}

// Build returns the agent the turn runs.
func (t Turn) Build() (agent.Agent, error) {
	if t.Engine == nil {
		return nil, errors.New("no model server to ask")
	}
	return agent.New(t.Agent, t.Config())
}

// RunTurn answers in within conv (a new conversation when nil). The
// result holds what arrived before a failure too.
func RunTurn(ctx context.Context, t Turn, conv *agent.Conversation, in agent.Input) (*agent.Result, error) {
	ag, err := t.Build()
	if err != nil {
		return &agent.Result{Agent: t.Agent, Model: t.Model}, err
	}
	if conv == nil {
		conv = &agent.Conversation{}
	}
	return ag.Answer(ctx, conv, in)
}

// Turn is a turn of the configured server (Env.At) with model and agent,
// its calls going through exec and its events to bus: the system prompt,
// generation options, turn limit, prices and the model's view as the
// configuration says.
func (e *Env) Turn(agentName, model string, exec *tools.Executor, bus events.Publisher) Turn {
	return e.TurnOn(e.At.Engine, e.At.Name, agentName, model, exec, bus)
}

// TurnOn is Turn on another server (a scheduled task's): eng, priced as
// the configured endpoint named endpoint ("" for the default server's
// prices).
func (e *Env) TurnOn(eng engine.InferenceEngine, endpoint, agentName, model string, exec *tools.Executor, bus events.Publisher) Turn {
	opts, _ := e.Config.EngineOptions() // validated by config.Load
	return Turn{
		Engine: eng, Model: model, Agent: agentName, Executor: exec, Bus: bus, System: e.Config.System,
		Options: opts, MaxTurns: e.Config.MaxTurns, Price: Price(e.Config, endpoint),
		View: agent.NewModelView(eng, model, e.Config.ViewOptions()),
	}
}

// Executor builds the named tools and an executor for them, deciding
// confirmations with pol and publishing on bus. close releases what the
// tools hold (a REPL's interpreter); call it when the turn is over. An
// unknown name is a *tools.UnknownToolError.
func (e *Env) Executor(names []string, pol *tools.Policy, bus events.Publisher) (exec *tools.Executor, close func(), err error) {
	deps := e.Deps
	deps.Bus = bus // a tool with news of its own publishes with the run's events
	list, err := e.Registry.BuildList(names, deps)
	if err != nil {
		return nil, func() {}, err
	}
	close = func() {
		for _, t := range list {
			CloseTool(t)
		}
	}
	exec, err = NewExecutor(list, pol, bus)
	if err != nil {
		close()
		return nil, func() {}, err
	}
	return exec, close, nil
}

// NewExecutor is the executor of list, deciding confirmations with pol
// (nil: nobody is asked, so every call that needs confirmation is
// refused) and publishing on bus.
func NewExecutor(list []tools.Tool, pol *tools.Policy, bus events.Publisher) (*tools.Executor, error) {
	if pol == nil {
		pol = tools.NewPolicy(tools.PolicyOptions{})
	}
	return tools.NewExecutor(list, tools.ExecutorOptions{Bus: bus, Policy: pol})
}

// Policy is an approval policy of this process: o (where it decides, who
// can be asked, --yes, a task's approvals) on the parts every policy
// shares (the config's confirm settings, the always-grants and the audit
// log in the database), unless o sets them itself.
func (e *Env) Policy(o tools.PolicyOptions) *tools.Policy {
	shared := PolicyOptions(e.Config, e.DB)
	if o.Overrides == nil {
		o.Overrides = shared.Overrides
	}
	if o.Always == nil {
		o.Always = shared.Always
	}
	if o.Audit == nil {
		o.Audit = shared.Audit
	}
	return tools.NewPolicy(o)
}
