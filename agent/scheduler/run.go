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

// stopReason is why a run's context was cancelled, for its log.
type stopReason struct {
	text    string
	outcome tasks.Outcome
	// status is the task status that asked for the stop (cancelled,
	// paused); empty for the others.
	status tasks.Status
}

var (
	stopCancelled = stopReason{"cancelled: the task was cancelled while it ran", tasks.OutcomeCancelled, tasks.Cancelled}
	stopPaused    = stopReason{"cancelled: the task was paused while it ran", tasks.OutcomeCancelled, tasks.Paused}
	stopShutdown  = stopReason{"stopped: the scheduler shut down while the task ran", tasks.OutcomeFailed, ""}
	// stopTimedOut's text is completed with the limit (see execute).
	stopTimedOut = stopReason{"timed out", tasks.OutcomeTimedOut, ""}
)

// activeRun is a run in progress in this process.
type activeRun struct {
	claim  tasks.Claim
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	reason stopReason
}

func (a *activeRun) stop(why stopReason) {
	a.mu.Lock()
	if a.reason.text == "" {
		a.reason = why
	}
	a.mu.Unlock()
	a.cancel()
}

func (a *activeRun) stopReason() stopReason {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reason
}

// runNote is where a runner reports what the log should know beyond its
// result (see ReportModel).
type runNote struct {
	mu    sync.Mutex
	model string
}

type noteKey struct{}

// ReportModel tells the scheduler which model a run uses, so its log can
// name it when the task records none. Outside a scheduled run it does
// nothing.
func ReportModel(ctx context.Context, model string) {
	if n, ok := ctx.Value(noteKey{}).(*runNote); ok {
		n.mu.Lock()
		n.model = model
		n.mu.Unlock()
	}
}

func (n *runNote) reported() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.model
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

// RunNow runs a task immediately, whatever its schedule (which it does not
// change), and returns its log row once the run has ended. An active or
// paused task can run this way; a cancelled or completed one cannot
// (a *tasks.StateError). The same confirmation rule and time limit as for
// scheduled runs apply. Cancelling ctx stops the run; its end is still
// recorded.
func (s *Scheduler) RunNow(ctx context.Context, ref string) (Run, error) {
	if s.opts.Runner == nil {
		return Run{}, ErrNoRunner
	}
	c, err := s.store.ClaimManual(ref, s.now(), s.by)
	if errors.Is(err, tasks.ErrRunning) {
		// The run in the way may belong to a process that died: record it
		// as interrupted, then try once more.
		if n, rerr := s.recoverAbandoned(); rerr == nil && n > 0 {
			c, err = s.store.ClaimManual(ref, s.now(), s.by)
		}
	}
	if err != nil {
		return Run{}, err
	}
	s.changed()
	return s.execute(ctx, c)
}

// execute runs a claimed task within its time limit and records its end.
// It returns once the runner has returned, or abandonAfter after the run
// was told to stop if the runner ignores that: a runner stuck in a call
// that does not honour its context must not hold a slot (or the
// scheduler's shutdown) for ever.
func (s *Scheduler) execute(parent context.Context, c tasks.Claim) (Run, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	ar := &activeRun{claim: c, ctx: ctx, cancel: cancel}
	limit := s.TimeoutFor(c.Task)
	timedOut := stopTimedOut
	timedOut.text = fmt.Sprintf("timed out: the run was stopped after %s, its time limit (%s)", tasks.FormatDuration(limit), limitSource(c.Task))
	timer := time.AfterFunc(limit, func() { ar.stop(timedOut) })
	defer timer.Stop()
	s.track(ar)
	inProcess.Store(runKey(c), struct{}{})
	defer func() {
		s.mu.Lock()
		if s.active[c.Task.ID] == ar {
			delete(s.active, c.Task.ID)
		}
		s.mu.Unlock()
	}()

	run := runInfo(c)
	s.opts.Events.Publish(events.Event{Type: events.SchedulerTaskStart, Run: run,
		Task: &events.TaskPayload{TaskID: c.Task.ID, Prompt: c.Task.Prompt}})

	denials := &denialRecorder{}
	confirmer := s.policy(c.Task, denials)
	task := c.Task
	task.Server = c.Server
	note := &runNote{}
	rctx := context.WithValue(events.WithRun(ctx, run), noteKey{}, note)
	type ending struct {
		result string
		err    error
	}
	ended := make(chan ending, 1)
	go func() {
		defer inProcess.Delete(runKey(c))
		result, err := s.callRunner(rctx, task, confirmer)
		ended <- ending{result, err}
	}()
	var end ending
	abandoned := false
	select {
	case end = <-ended:
	case <-ctx.Done():
		select {
		case end = <-ended:
		case <-time.After(abandonAfter):
			abandoned = true
		}
	}

	f := tasks.Finish{At: s.now(), Success: end.err == nil && !abandoned, Result: end.result,
		DeniedTools: denials.Denied(), Model: note.reported()}
	if !f.Success {
		why := ar.stopReason()
		switch {
		case why.text != "" && ctx.Err() != nil:
			f.Error, f.Outcome = why.text, why.outcome
		case parent.Err() != nil && end.err != nil:
			f.Error = "stopped: the run was cancelled (" + end.err.Error() + ")"
		case end.err != nil:
			f.Error = end.err.Error()
		default:
			f.Error = "stopped: the run was cancelled"
		}
		if abandoned {
			if why == stopShutdown {
				f.Interrupted = true
				f.Error = fmt.Sprintf("interrupted: the run did not stop within %s of the scheduler shutting down", abandonAfter)
			} else {
				f.Error += fmt.Sprintf(" (the run did not stop within %s of being told to, and was left behind)", abandonAfter)
			}
			s.opts.Logger.Warn("a scheduled run did not stop when told to; its slot is given back", "task", c.Task.ID, "run", c.RunID)
		}
	}
	return s.record(c, f, run)
}

// limitSource says where a run's limit came from, for the timed-out log.
func limitSource(t Task) string {
	if t.Timeout > 0 {
		return "the task's own; change it by creating the task with another --timeout"
	}
	return "the default; give the task its own with --timeout when creating it"
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
	_, row, err := s.store.Finish(c, f)
	var locked *store.LockedError
	if errors.As(err, &locked) {
		// Another process held the file for the whole wait: the end goes
		// to the write queue, which lands it when the file is free (or
		// keeps it for the next jarvis), and the run stays claimed until
		// then.
		err = s.store.FinishQueued(c, f)
		row = tasks.Run{ID: c.RunID, TaskID: c.Task.ID, StartedAt: c.StartedAt, FinishedAt: f.At,
			Success: f.Success, Result: f.Result, Error: f.Error, DeniedTools: f.DeniedTools,
			Process: c.Process, Server: c.Server}
	}
	if errors.Is(err, tasks.ErrFinished) {
		return Run{}, err
	}
	if err != nil {
		s.opts.Logger.Error("cannot record the end of a scheduled run", "task", c.Task.ID, "run", c.RunID, "err", err)
		s.opts.Events.Publish(events.Event{Type: events.Error, Run: run,
			Text: fmt.Sprintf("scheduler: the end of task %s's run could not be recorded: %v", c.Task.ID, err)})
		row = tasks.Run{ID: c.RunID, TaskID: c.Task.ID, StartedAt: c.StartedAt, FinishedAt: f.At,
			Success: f.Success, Result: f.Result, Error: f.Error, DeniedTools: f.DeniedTools,
			Process: c.Process, Server: c.Server}
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

// policy is the confirmation policy of one run of t: nobody can be
// asked, so a call that needs confirmation runs only when the config, an
// always-approval or the task's approve list allows it. Every decision
// goes to the audit log, and the denied tools to denials, so the run log
// can say what the task could not do.
func (s *Scheduler) policy(t Task, denials *denialRecorder) *tools.Policy {
	o := s.opts.Policy
	o.Source = tools.SourceScheduler
	o.Task = &tools.TaskApproval{ID: t.ID, Approved: slices.Clone(t.ApprovedTools)}
	o.Asker, o.Yes, o.Approvals, o.Session = nil, false, nil, nil
	o.OnDecision = denials.note
	return tools.NewPolicy(o)
}

// denialRecorder remembers which tools a run's policy denied.
type denialRecorder struct {
	mu     sync.Mutex
	denied []string
}

func (d *denialRecorder) note(e tools.AuditEntry) {
	if e.Decision != tools.Denied {
		return
	}
	d.mu.Lock()
	if !slices.Contains(d.denied, e.Tool) {
		d.denied = append(d.denied, e.Tool)
	}
	d.mu.Unlock()
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
