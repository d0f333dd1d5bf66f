package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// TaskServer is the model server this process is configured for, as a
// task records it.
func (e *Env) TaskServer() tasks.Server {
	return tasks.Server{Engine: e.At.Kind, Host: e.Engine.Host(), Model: e.Model}
}

// SchedulerOptions are the options every scheduler of this process
// starts from: who it is (command), the server new tasks record, the
// default time limit, the task name checks and the shared parts of the
// approval policy. A scheduler that runs tasks adds its Runner and Reach.
func (e *Env) SchedulerOptions(command string) scheduler.Options {
	return scheduler.Options{
		Command: command, Server: e.TaskServer(), Timeout: e.Config.TaskTimeout(),
		Validate: e.ValidateTask, Policy: PolicyOptions(e.Config, e.DB),
	}
}

// LazyScheduler lets the scheduler tools reach the task store without
// opening the database until a tool is actually called: listing tools or
// asking a question that uses none must not wait for another process's
// lock. A failed open (the file was busy) is not kept: the next call
// tries again.
type LazyScheduler struct {
	mu   sync.Mutex
	open func() (*scheduler.Scheduler, error)
	s    *scheduler.Scheduler
}

// newLazyScheduler opens, on first use, a scheduler on env's database
// that creates and changes tasks; it runs none (that is `jarvis scheduler
// start`'s or the workbench's).
func newLazyScheduler(env *Env, command string) *LazyScheduler {
	return &LazyScheduler{open: func() (*scheduler.Scheduler, error) {
		env.DB.SetPurpose("scheduler")
		// A read: opening checks the file without writing to it.
		if err := env.DB.View(func(storm.Node) error { return nil }); err != nil {
			return nil, err
		}
		return scheduler.New(env.DB, env.SchedulerOptions(command)), nil
	}}
}

// Use makes the tools call s (a scheduler already running) from now on.
func (l *LazyScheduler) Use(s *scheduler.Scheduler) {
	l.mu.Lock()
	l.s = s
	l.mu.Unlock()
}

func (l *LazyScheduler) get() (*scheduler.Scheduler, error) {
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

// Create creates a task.
func (l *LazyScheduler) Create(ctx context.Context, nt tasks.NewTask) (tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return tasks.Task{}, err
	}
	return s.Create(ctx, nt)
}

// List lists the tasks with status st ("" for all).
func (l *LazyScheduler) List(ctx context.Context, st tasks.Status) ([]tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.List(ctx, st)
}

func (l *LazyScheduler) change(ctx context.Context, id string, fn func(*scheduler.Scheduler, context.Context, string) (tasks.Task, error)) (tasks.Task, error) {
	s, err := l.get()
	if err != nil {
		return tasks.Task{}, err
	}
	return fn(s, ctx, id)
}

// Pause pauses a task.
func (l *LazyScheduler) Pause(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Pause)
}

// Resume resumes a paused task.
func (l *LazyScheduler) Resume(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Resume)
}

// Cancel cancels a task for good.
func (l *LazyScheduler) Cancel(ctx context.Context, id string) (tasks.Task, error) {
	return l.change(ctx, id, (*scheduler.Scheduler).Cancel)
}
