package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// taskRunner runs scheduled tasks with the configured engine, headless.
func (a *app) taskRunner() (scheduler.Runner, error) {
	env, err := a.environment()
	if err != nil {
		return nil, err
	}
	// Tasks may use MCP tools; headless runs start the servers up front.
	if len(env.cfg.MCP.Servers) > 0 {
		if _, err := a.startMCP(context.Background(), env, true, a.io.Err); err != nil {
			return nil, err
		}
	}
	return newTaskRunner(env, nil), nil
}

// newTaskRunner runs a task's agent with its tools on its prompt, in a
// conversation of its own, with the confirmer the scheduler gives (which
// denies every call needing confirmation that was not approved for the
// task). bus receives the run's events (nil: none).
func newTaskRunner(env *environment, bus events.Publisher) scheduler.Runner {
	return scheduler.RunnerFunc(func(ctx context.Context, t scheduler.Task, confirmer tools.Confirmer) (string, error) {
		model, _, err := env.resolveModel(ctx)
		if err != nil {
			return "", err
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
		opts, _ := env.cfg.EngineOptions()
		name := t.Agent
		if name == "" {
			name = agent.Simple
		}
		ag, err := agent.New(name, agent.Config{
			Engine: env.engine, Model: model, Executor: exec, Bus: bus, System: env.cfg.System,
			Options: opts, MaxTurns: env.cfg.MaxTurns, Price: price(env.cfg),
		})
		if err != nil {
			return "", err
		}
		ctx = events.WithRun(ctx, events.RunInfo{ID: "task-" + t.ID})
		res, err := ag.Run(ctx, &agent.Conversation{}, t.Prompt)
		if res == nil {
			return "", err
		}
		return res.Content, err
	})
}

// lazyScheduler lets the scheduler tools reach the task store without
// opening the database until a tool is actually called: listing tools or
// asking a question that uses none must not wait for another process's lock.
// A failed open (the file was busy) is not kept: the next call tries again.
type lazyScheduler struct {
	mu   sync.Mutex
	open func() (*scheduler.Scheduler, error)
	s    *scheduler.Scheduler
}

// use makes the tools call s (a scheduler already running) from now on.
func (l *lazyScheduler) use(s *scheduler.Scheduler) {
	l.mu.Lock()
	l.s = s
	l.mu.Unlock()
}

func (l *lazyScheduler) get() (*scheduler.Scheduler, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	s, err := l.open()
	if err != nil {
		return nil, fmt.Errorf("the task database could not be opened: %w", err)
	}
	l.s = s
	return s, nil
}

func (l *lazyScheduler) Create(ctx context.Context, nt tasks.NewTask) (tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return tasks.Task{}, err
	}
	return s.Create(ctx, nt)
}

func (l *lazyScheduler) List(ctx context.Context, st tasks.Status) ([]tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.List(ctx, st)
}

func (l *lazyScheduler) change(ctx context.Context, id string, fn func(*scheduler.Scheduler, context.Context, string) (tasks.Task, error)) (tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return tasks.Task{}, err
	}
	return fn(s, ctx, id)
}

func (l *lazyScheduler) Pause(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Pause)
}

func (l *lazyScheduler) Resume(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Resume)
}

func (l *lazyScheduler) Cancel(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Cancel)
}

func closeIfCloser(t tools.Tool) {
	for {
		if c, ok := t.(interface{ Close() error }); ok {
			c.Close()
			return
		}
		u, ok := t.(interface{ Unwrap() tools.Tool })
		if !ok {
			return
		}
		t = u.Unwrap()
	}
}
