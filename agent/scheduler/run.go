package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Why a run's context was cancelled, for its log.
const (
	stopCancelled = "the task was cancelled while it ran"
	stopShutdown  = "stopped: the scheduler shut down while the task ran"
)

// activeRun is a run in progress in this process.
type activeRun struct {
	claim  tasks.Claim
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	reason string
}

func (a *activeRun) stop(reason string) {
	a.mu.Lock()
	if a.reason == "" {
		a.reason = reason
	}
	a.mu.Unlock()
	a.cancel()
}

func (a *activeRun) stopReason() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reason
}

// inProcess holds every run in progress in this process, by all
// Schedulers, so recovery never mistakes a live run for a dead one.
var inProcess sync.Map // runKey -> struct{}

func runKey(c tasks.Claim) string { return c.Task.ID + "#" + strconv.Itoa(c.RunID) }

// runInfo stamps a run's events (the scheduler's and its tools') so a UI
// can tell concurrent runs apart.
func runInfo(c tasks.Claim) events.RunInfo {
	return events.RunInfo{ID: fmt.Sprintf("task-%s-%d", c.Task.ID, c.RunID), Agent: c.Task.Agent}
}

// RunNow runs a task immediately, whatever its status and schedule (which
// it does not change), and returns its log row once the run has ended.
// The same confirmation rule as for scheduled runs applies. Cancelling ctx
// stops the run; its end is still recorded.
func (s *Scheduler) RunNow(ctx context.Context, ref string) (Run, error) {
	if s.opts.Runner == nil {
		return Run{}, ErrNoRunner
	}
	c, err := s.store.ClaimManual(ref, s.now(), s.owner)
	if errors.Is(err, tasks.ErrRunning) {
		// The run in the way may belong to a process that died: record it
		// as interrupted, then try once more.
		if n, rerr := s.recoverAbandoned(); rerr == nil && n > 0 {
			c, err = s.store.ClaimManual(ref, s.now(), s.owner)
		}
	}
	if err != nil {
		return Run{}, err
	}
	s.changed()
	return s.execute(ctx, c)
}

// execute runs a claimed task and records its end.
func (s *Scheduler) execute(parent context.Context, c tasks.Claim) (Run, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	ar := &activeRun{claim: c, ctx: ctx, cancel: cancel}
	s.mu.Lock()
	s.active[c.Task.ID] = ar
	s.mu.Unlock()
	inProcess.Store(runKey(c), struct{}{})
	defer func() {
		inProcess.Delete(runKey(c))
		s.mu.Lock()
		if s.active[c.Task.ID] == ar {
			delete(s.active, c.Task.ID)
		}
		s.mu.Unlock()
	}()

	run := runInfo(c)
	s.opts.Events.Publish(events.Event{Type: events.SchedulerTaskStart, Run: run,
		Task: &events.TaskPayload{TaskID: c.Task.ID, Prompt: c.Task.Prompt}})

	confirmer := &denialRecorder{inner: tools.AllowOnly(c.Task.ApprovedTools...)}
	result, err := s.callRunner(events.WithRun(ctx, run), c.Task, confirmer)
	f := tasks.Finish{At: s.now(), Success: err == nil, Result: result, DeniedTools: confirmer.Denied()}
	if err != nil {
		f.Error = err.Error()
		if reason := ar.stopReason(); reason != "" && ctx.Err() != nil {
			f.Error = reason
		} else if parent.Err() != nil {
			f.Error = "stopped: the run was cancelled (" + err.Error() + ")"
		}
	}
	return s.record(c, f, run)
}

// callRunner runs the task, turning a panic into an error so one broken
// run cannot take the scheduler down.
func (s *Scheduler) callRunner(ctx context.Context, t Task, c tools.Confirmer) (result string, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("scheduled task runner panicked", "task", t.ID, "panic", p)
			result, err = "", fmt.Errorf("the run failed unexpectedly: %v", p)
		}
	}()
	return s.opts.Runner.Run(ctx, t, c)
}

// record writes a run's end, retrying while another process holds the
// database, and publishes scheduler_task_end. A run whose end was already
// recorded (given up at shutdown) publishes nothing more.
func (s *Scheduler) record(c tasks.Claim, f tasks.Finish, run events.RunInfo) (Run, error) {
	var (
		row tasks.Run
		err error
	)
	delay := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		_, row, err = s.store.Finish(c, f)
		var locked *store.LockedError
		if err == nil || !errors.As(err, &locked) || attempt == 8 {
			break
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Second)
	}
	if errors.Is(err, tasks.ErrFinished) {
		return Run{}, err
	}
	if err != nil {
		s.opts.Logger.Error("cannot record the end of a scheduled run", "task", c.Task.ID, "run", c.RunID, "err", err)
		s.opts.Events.Publish(events.Event{Type: events.Error, Run: run,
			Text: fmt.Sprintf("scheduler: the end of task %s's run could not be recorded: %v", c.Task.ID, err)})
		row = tasks.Run{ID: c.RunID, TaskID: c.Task.ID, StartedAt: c.StartedAt, FinishedAt: f.At,
			Success: f.Success, Result: f.Result, Error: f.Error, DeniedTools: f.DeniedTools}
	}
	errText := row.Error
	if note := row.DeniedNote(); note != "" {
		errText = strings.TrimSpace(errText + "\n" + note)
	}
	s.opts.Events.Publish(events.Event{Type: events.SchedulerTaskEnd, Run: run,
		Task: &events.TaskPayload{TaskID: c.Task.ID, Prompt: c.Task.Prompt, Success: row.Success, Result: row.Result, Error: errText}})
	s.changed()
	return row, err
}

// denialRecorder asks the task's policy and remembers which tools it
// denied, so the run log can say what the task could not do.
type denialRecorder struct {
	inner tools.Confirmer

	mu     sync.Mutex
	denied []string
}

// Confirm answers from the policy and records a denial.
func (d *denialRecorder) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	dec, err := d.inner.Confirm(ctx, req)
	if err != nil || dec == tools.Deny {
		d.mu.Lock()
		if !slices.Contains(d.denied, req.Spec.Name) {
			d.denied = append(d.denied, req.Spec.Name)
		}
		d.mu.Unlock()
	}
	return dec, err
}

// Denied returns the denied tool names in the order first denied.
func (d *denialRecorder) Denied() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.denied)
}

// Owner identity: host/pid/nonce. The nonce tells apart two Schedulers of
// one process (the TUI restarting its scheduler, tests).
func newOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", strings.ReplaceAll(host, "/", "_"), os.Getpid(), hex.EncodeToString(b[:]))
}

// abandoned reports whether a run in progress belongs to a process that no
// longer runs it: on this machine, either a dead process or this process
// when no Scheduler here is running it. Runs claimed on another machine are
// never judged.
func abandoned(c tasks.Claim) (bool, string) {
	parts := strings.Split(c.Owner, "/")
	if len(parts) != 3 {
		return false, ""
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(parts[1])
	if err != nil || parts[0] != strings.ReplaceAll(host, "/", "_") {
		return false, ""
	}
	if pid == os.Getpid() {
		if _, live := inProcess.Load(runKey(c)); live {
			return false, ""
		}
		return true, "interrupted: the scheduler running it in this process stopped before the run finished"
	}
	if processAlive(pid) {
		return false, ""
	}
	return true, fmt.Sprintf("interrupted: the jarvis process running it (pid %d) ended before the run finished", pid)
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// recoverAbandoned records the end of runs whose process died, so their
// tasks can run again. It returns how many it found.
func (s *Scheduler) recoverAbandoned() (int, error) {
	claims, err := s.store.Running()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range claims {
		dead, why := abandoned(c)
		if !dead {
			continue
		}
		run := runInfo(c)
		if _, err := s.record(c, tasks.Finish{At: s.now(), Interrupted: true, Error: why}, run); err != nil && !errors.Is(err, tasks.ErrFinished) {
			return n, err
		}
		n++
	}
	return n, nil
}
