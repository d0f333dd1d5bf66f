package cli

import (
	"context"
	"errors"
	"sync"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// engineFactory builds the engine that speaks to a server of the given
// kind at host (a base URL).
type engineFactory func(kind, host string) (engine.InferenceEngine, error)

// taskEngine is the engine factory of scheduled runs for servers the
// configuration does not name (a task made on another machine, or before
// the configuration changed). No key is sent to them: a key goes only
// where the configuration says.
func taskEngine(kind, host string) (engine.InferenceEngine, error) {
	return app.NewEngine(kind, host, "", "an endpoint for this server in the config: scheduled tasks send keys only to the servers the configuration names")
}

// engineCache keeps one engine per server, so that the checks and runs of
// a process reuse their connections. The configured servers (the default
// one and the endpoints) use the process's engines, keys included.
type engineCache struct {
	build engineFactory
	mu    sync.Mutex
	m     map[string]engine.InferenceEngine
}

func newEngineCache(env *environment, build engineFactory) *engineCache {
	c := &engineCache{build: build, m: map[string]engine.InferenceEngine{}}
	for _, s := range env.servers() {
		if s.Err == nil {
			c.m[tasks.Server{Engine: s.Kind, Host: s.Engine.Host()}.Key()] = s.Engine
		}
	}
	c.m[env.server().Key()] = env.engine
	return c
}

func (c *engineCache) get(srv tasks.Server) (engine.InferenceEngine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[srv.Key()]; e != nil {
		return e, nil
	}
	e, err := c.build(srv.Engine, srv.Host)
	if err != nil {
		return nil, err
	}
	c.m[srv.Key()] = e
	return e, nil
}

// reach checks that a server answers: its version, a request that costs
// the server nothing.
func (c *engineCache) reach(ctx context.Context, srv tasks.Server) error {
	e, err := c.get(srv)
	if err != nil {
		return err
	}
	_, err = e.Version(ctx)
	return err
}

// server is the model server this process is configured for, as a task
// records it.
func (env *environment) server() tasks.Server { return env.w.TaskServer() }

// schedOptions are the options every scheduler that runs tasks in this
// process shares: who it is (command: "tui", "scheduler start", "scheduler
// run"), its server, how to reach a task's server, the default time limit,
// the runner (whose events go to bus; nil: none) and the name checks.
func (a *cmdline) schedOptions(command string, bus events.Publisher) (scheduler.Options, error) {
	env, err := a.environment()
	if err != nil {
		return scheduler.Options{}, err
	}
	engines := newEngineCache(env, taskEngine)
	// Runs decide confirmations through the shared policy (their approve
	// list is added per run).
	opts := env.w.SchedulerOptions(command)
	opts.Reach, opts.Runner = engines.reach, newTaskRunner(env, bus, engines)
	return opts, nil
}

// taskRunner prepares what a headless scheduler needs to run tasks: the
// MCP servers (tasks may use their tools) and the options.
func (a *cmdline) taskRunner(command string, bus events.Publisher) (scheduler.Options, error) {
	env, err := a.environment()
	if err != nil {
		return scheduler.Options{}, err
	}
	// Tasks may use MCP tools; headless runs start the servers up front.
	if len(env.cfg.MCP.Servers) > 0 {
		if _, err := a.startMCP(context.Background(), env, true, a.io.Err); err != nil {
			return scheduler.Options{}, err
		}
	}
	return a.schedOptions(command, bus)
}

// newTaskRunner runs a task's agent with its tools on its prompt, in a
// conversation of its own, on the task's server (engines builds the engine
// for it), with the confirmer the scheduler gives (which denies every call
// needing confirmation that was not approved for the task). bus receives
// the run's events (nil: none).
//
// The tools keep the process's own engine for their sub-queries (the llm
// tool): they are built once per process, not per server.
func newTaskRunner(env *environment, bus events.Publisher, engines *engineCache) scheduler.Runner {
	return scheduler.RunnerFunc(func(ctx context.Context, t scheduler.Task, confirmer tools.Confirmer) (string, error) {
		srv := t.Server
		if srv.IsZero() {
			srv = env.server()
		}
		eng, err := engines.get(srv)
		if err != nil {
			return "", err
		}
		model := srv.Model
		if model == "" {
			if model, err = pickModel(ctx, eng, srv.Engine); err != nil {
				return "", err
			}
			scheduler.ReportModel(ctx, model)
		}
		list, err := env.registry.BuildList(t.Tools, env.deps)
		if err != nil {
			return "", err
		}
		defer func() {
			for _, tl := range list {
				closeIfCloser(tl)
			}
		}()
		exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Bus: bus, Confirmer: confirmer})
		if err != nil {
			return "", err
		}
		ag, err := env.w.TurnOn(eng, env.taskEndpoint(srv), tasks.AgentFor(t.Agent, t.Tools), model, exec, bus).Build()
		if err != nil {
			return "", err
		}
		// The scheduler stamped the run; the model is known only now.
		run := events.RunFrom(ctx)
		if run.ID == "" {
			run.ID = "task-" + t.ID
		}
		run.Model = model
		ctx = events.WithRun(ctx, run)
		res, err := ag.Run(ctx, &agent.Conversation{}, t.Prompt)
		if res == nil {
			return "", err
		}
		if err == nil && stoppedShort(res) {
			// Not an answer: the run failed, and its notice says why.
			err = errors.New(say(res.Notices[len(res.Notices)-1]))
		}
		return res.Content, err
	})
}

// taskEndpoint is the configured endpoint a task's server is, whose
// prices its runs pay ("" for the top-level ones).
func (env *environment) taskEndpoint(srv tasks.Server) string {
	for _, s := range env.named {
		if s.Err == nil && s.Kind == srv.Engine && s.Engine.Host() == srv.Host {
			return s.Name
		}
	}
	return ""
}
