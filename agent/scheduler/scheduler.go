// Package scheduler runs scheduled tasks: a TaskScheduler that sleeps until
// the next task is due, claims it in the database so that no other
// scheduler runs the same slot, hands it to a Runner (an agent run in an
// isolated conversation) and records how the run ended.
//
// Tasks and their run logs are stored by store/tasks; this package adds the
// clock, the concurrency, the choice of who runs what, and the
// confirmation policy:
//
//   - The loop computes the earliest next run from the due index and sleeps
//     until then. Changes made through this Scheduler (create, pause, resume,
//     cancel, a run ending) wake it at once; changes made by another process
//     on the same database file are noticed by a cheap stat of the file
//     (WatchInterval), which never opens the database.
//   - A task records the model server it was created for. A scheduler
//     claims a due run only if it can reach that server (Options.Reach, a
//     cheap check bounded by ReachTimeout, cached for ReachTTL, made off
//     the loop); otherwise it leaves the run to a scheduler that can. When
//     no scheduler has reached the server for SkipAfter, the slot is
//     recorded as skipped (once) and the task waits for its next slot.
//   - Several processes may serve one database. Each writes a heartbeat
//     entry (its pid, command, server and the servers it reached), so the
//     others can see it. A dedicated scheduler (`jarvis scheduler start`)
//     owns the schedule: other schedulers (the TUI) leave scheduled runs to
//     it while it is alive, except those for servers it reports it cannot
//     reach.
//   - Runs happen concurrently up to MaxConcurrent, each within its time
//     limit (the task's, else Options.Timeout): a run past it is cancelled
//     and logged as timed out, and a runner that ignores the cancellation
//     gives its slot back after a few seconds, so a stuck run holds a slot
//     for a bounded time and other due tasks keep running. A task never
//     overlaps itself: while it runs it is out of the due index, and a slot
//     that passes meanwhile runs once when it ends.
//   - Cancelling or pausing a running task, from this process or another
//     one, stops the run within about WatchInterval: the process running
//     it watches the database file while it has runs in progress.
//   - Nobody is there to answer a confirmation during a scheduled run, so
//     tools that need confirmation are denied unless the person approved
//     them for the task when creating it. Each denied tool is recorded in
//     the run's log.
//   - Stopping (cancelling Serve's context) waits for running tasks, up to
//     StopGrace, then cancels them; every run's end is recorded either way,
//     and a run whose process died is marked interrupted by the next
//     scheduler that starts on the same machine.
//
// Every run's log names the process that ran it and the server it ran on.
// Every run publishes scheduler_task_start and scheduler_task_end on the
// event bus; a UI shows tasks live from those events plus List and Watch.
package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The scheduler's types are those of store/tasks, named here so callers of
// this package need not import both.
type (
	Task         = tasks.Task
	NewTask      = tasks.NewTask
	Run          = tasks.Run
	Status       = tasks.Status
	ScheduleType = tasks.ScheduleType
)

// Runner runs one task: task.Agent with task.Tools on task.Prompt, in a
// conversation of its own, on the server task.Server names (the scheduler
// fills it in for a task that records none), asking confirmer before any
// tool call that needs confirmation. It returns the agent's final answer.
// It must honour ctx: the scheduler cancels it when the task is cancelled
// or paused, when the run passes its time limit and when the scheduler
// stops. A runner that picks a model itself reports it with ReportModel.
type Runner interface {
	Run(ctx context.Context, task Task, confirmer tools.Confirmer) (result string, err error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, task Task, confirmer tools.Confirmer) (string, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, task Task, confirmer tools.Confirmer) (string, error) {
	return f(ctx, task, confirmer)
}

// Defaults for Options.
const (
	DefaultMaxConcurrent = 2
	DefaultStopGrace     = 5 * time.Second
	DefaultWatchInterval = time.Second
	// DefaultRecoverInterval: see Options.RecoverInterval.
	DefaultRecoverInterval = 30 * time.Second
	DefaultReachTimeout    = 2 * time.Second
	DefaultReachTTL        = 5 * time.Second
	// DefaultSkipAfter is long enough to ride out a server restart, short
	// enough that a run that cannot happen shows in the log the same
	// morning.
	DefaultSkipAfter = 10 * time.Minute
	DefaultHeartbeat = 10 * time.Second
	minHeartbeat     = time.Second
)

// Options configure a Scheduler. Only Runner is needed to run tasks; a
// Scheduler without one can still create, list and change them (what the
// CLI's create, list, pause, resume and cancel do).
type Options struct {
	Runner Runner
	// Events receives scheduler_task_start / scheduler_task_end and loop
	// errors; nil discards them.
	Events events.Publisher
	// Policy holds what every run's confirmation policy shares: the audit
	// log, the always-approvals and the config's confirm settings. The
	// rest (the task's approve list, nobody to ask) is set per run.
	Policy tools.PolicyOptions
	// Validate checks a new task's agent and tool names against what
	// exists; nil accepts any names.
	Validate func(agent string, tools []string) error
	// MaxConcurrent bounds the runs in progress at once (DefaultMaxConcurrent
	// when <= 0).
	MaxConcurrent int
	// StopGrace is how long stopping lets running tasks finish before
	// cancelling them (DefaultStopGrace when 0; negative cancels at once).
	StopGrace time.Duration
	// WatchInterval is how often the database file is checked for changes
	// made by other processes (DefaultWatchInterval when <= 0).
	WatchInterval time.Duration
	// RecoverInterval is how often a serving scheduler looks for runs left
	// by processes that died (DefaultRecoverInterval when <= 0).
	RecoverInterval time.Duration
	// Logger records loop errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	// Command names this process in run logs and to other processes:
	// "tui", "scheduler start", "scheduler run".
	Command string
	// Dedicated marks a scheduler whose only job is to serve (`jarvis
	// scheduler start`). A scheduler that is not dedicated leaves
	// scheduled runs to a live dedicated one.
	Dedicated bool
	// Server is the model server this process is configured for: a new
	// task that names none records it, and a task that records none (made
	// before tasks recorded their server) runs on it.
	Server tasks.Server
	// Reach checks that a server answers (a cheap request such as the
	// engine's version). Nil takes every server as reachable.
	Reach func(ctx context.Context, server tasks.Server) error
	// ReachTimeout bounds one check (DefaultReachTimeout when <= 0);
	// ReachTTL is how long a result is trusted (DefaultReachTTL when <= 0).
	ReachTimeout, ReachTTL time.Duration
	// SkipAfter is how long a slot may wait for a scheduler that can reach
	// its server: once the slot is that late and this scheduler has not
	// reached the server for that long either, and no other live scheduler
	// reports reaching it, the slot is recorded as skipped. Zero means
	// DefaultSkipAfter; negative never skips.
	SkipAfter time.Duration
	// Timeout limits runs of tasks that set no limit of their own
	// (tasks.DefaultTimeout when <= 0).
	Timeout time.Duration
	// HeartbeatInterval is how often a serving scheduler renews its entry
	// among the peers (DefaultHeartbeat when <= 0, at least a second); an
	// entry not renewed for three intervals is taken as gone.
	HeartbeatInterval time.Duration
}

// Scheduler is the TaskScheduler. It is safe for concurrent use; Serve runs
// its loop.
type Scheduler struct {
	store *tasks.Store
	opts  Options
	owner string
	by    tasks.Claimant
	reach reachCache
	// reachNews: a reach check found something new since the last
	// heartbeat, which the next tick tells the other schedulers.
	reachNews atomic.Bool

	wake    chan struct{}
	serving atomic.Bool

	mu          sync.Mutex
	active      map[string]*activeRun // runs in progress here, by task id
	watchingRun bool                  // watchRuns is running
	watchers    map[chan struct{}]struct{}
	ownerPeer   *tasks.Peer // the dedicated scheduler runs are left to
	peersSeen   []tasks.Peer
}

// New returns a Scheduler on db.
func New(db *store.DB, opts Options) *Scheduler {
	if opts.Events == nil {
		opts.Events = events.Discard
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = DefaultStopGrace
	}
	if opts.RecoverInterval <= 0 {
		opts.RecoverInterval = DefaultRecoverInterval
	}
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = DefaultWatchInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReachTimeout <= 0 {
		opts.ReachTimeout = DefaultReachTimeout
	}
	if opts.ReachTTL <= 0 {
		opts.ReachTTL = DefaultReachTTL
	}
	if opts.SkipAfter == 0 {
		opts.SkipAfter = DefaultSkipAfter
	}
	if opts.Timeout <= 0 {
		opts.Timeout = tasks.DefaultTimeout
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = DefaultHeartbeat
	}
	// A heartbeat is a write; writing more often than the file's idle
	// release would keep it from other processes.
	opts.HeartbeatInterval = max(opts.HeartbeatInterval, minHeartbeat)
	if opts.Command == "" {
		opts.Command = "jarvis"
	}
	owner := newOwner()
	return &Scheduler{
		store:    tasks.New(db),
		opts:     opts,
		owner:    owner,
		by:       tasks.Claimant{Owner: owner, Process: tasks.ThisProcess(opts.Command), Server: opts.Server},
		reach:    reachCache{m: map[string]*reachState{}},
		wake:     make(chan struct{}, 1),
		active:   map[string]*activeRun{},
		watchers: map[chan struct{}]struct{}{},
	}
}

// Options returns the options the scheduler runs with, defaults filled in.
func (s *Scheduler) Options() Options { return s.opts }

// TimeoutFor returns the time limit of the task's runs here: its own, or
// the scheduler's default.
func (s *Scheduler) TimeoutFor(t Task) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return s.opts.Timeout
}

// Store returns the task store the scheduler uses.
func (s *Scheduler) Store() *tasks.Store { return s.store }

func (s *Scheduler) now() time.Time { return s.opts.Now() }

// Create checks and stores a new task and wakes the loop. Nothing is stored
// when the schedule, the time zone, the agent or a tool is invalid. A task
// that names no server records this scheduler's (Options.Server); one with
// tools and no agent gets tasks.ToolsAgent.
func (s *Scheduler) Create(_ context.Context, nt NewTask) (Task, error) {
	now := s.now()
	if _, _, err := tasks.Validate(nt, now); err != nil {
		return Task{}, err
	}
	if s.opts.Validate != nil {
		if err := s.opts.Validate(tasks.AgentFor(nt.Agent, nt.Tools), cleanNames(nt.Tools)); err != nil {
			return Task{}, err
		}
	}
	if nt.Server.IsZero() {
		nt.Server = s.opts.Server
	}
	t, err := s.store.Create(nt, now)
	if err != nil {
		return Task{}, err
	}
	s.changed()
	return t, nil
}

// Get returns the task whose id is ref or starts with ref.
func (s *Scheduler) Get(_ context.Context, ref string) (Task, error) { return s.store.Get(ref) }

// List returns the tasks with the given status ("" for all), soonest next
// run first.
func (s *Scheduler) List(_ context.Context, status Status) ([]Task, error) {
	return s.store.List(status)
}

// Logs returns a task and its last n runs, newest first.
func (s *Scheduler) Logs(_ context.Context, ref string, n int) (Task, []Run, error) {
	return s.store.Logs(ref, n)
}

// Pause stops a task from running until resumed. A run of it in progress
// is stopped too, and its log says so: here at once, in another process as
// soon as that process notices (about WatchInterval).
func (s *Scheduler) Pause(_ context.Context, ref string) (Task, error) {
	t, err := s.store.Pause(ref)
	if err != nil {
		return t, err
	}
	s.stopRun(t.ID, stopPaused)
	s.changed()
	return t, nil
}

// Resume makes a paused task active again, its next run computed from now.
func (s *Scheduler) Resume(_ context.Context, ref string) (Task, error) {
	t, err := s.store.Resume(ref, s.now())
	if err == nil {
		s.changed()
	}
	return t, err
}

// Cancel ends a task for good. A run of it in progress is stopped, and its
// log says so: here at once, in another process as soon as that process
// notices (about WatchInterval). The returned task still says whether a
// run was in progress (Running, RunningIn).
func (s *Scheduler) Cancel(_ context.Context, ref string) (Task, error) {
	t, err := s.store.Cancel(ref)
	if err != nil {
		return t, err
	}
	s.stopRun(t.ID, stopCancelled)
	s.changed()
	return t, nil
}

// stopRun stops the task's run in progress in this process, if any, for
// a reason a person asked for: not one started by hand while the task
// already had that status (running a paused task by hand is allowed).
func (s *Scheduler) stopRun(id string, why stopReason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ar := s.active[id]; ar != nil && ar.claim.Task.Status != why.status {
		ar.stop(why)
	}
}

// Watch returns a channel that receives a value whenever tasks may have
// changed (created, paused, resumed, cancelled, a run started or ended), so
// a UI can reload List. Notifications coalesce: a slow reader sees one for
// many changes. Call the returned function to stop watching.
func (s *Scheduler) Watch() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.watchers[c] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return c, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.watchers, c)
			s.mu.Unlock()
		})
	}
}

// changed wakes the loop and the watchers.
func (s *Scheduler) changed() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.notify()
}

// notify tells the watchers that tasks may have changed.
func (s *Scheduler) notify() {
	s.mu.Lock()
	for c := range s.watchers {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
}

// ErrNoRunner is returned when running tasks on a Scheduler built without
// a Runner.
var ErrNoRunner = errors.New("this scheduler has no runner: it can store tasks but not run them")

func cleanNames(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
