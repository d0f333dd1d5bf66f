package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// abandonAfter is how long stopping waits for runs that were cancelled
// before recording them as interrupted and returning anyway: a runner that
// ignores its context must not keep the process from exiting. A variable
// so tests need not wait for it.
var abandonAfter = 5 * time.Second

// maxRetry caps the wait between attempts when the database fails (held by
// another process for longer than store.LockTimeout, a full disk).
const maxRetry = 30 * time.Second

// Serve runs the scheduler until ctx is cancelled: it finishes runs
// abandoned by dead processes, then claims and runs due tasks, sleeping
// until the next one is due. When ctx ends it stops claiming, lets running
// tasks finish for up to StopGrace, cancels the rest, and returns once
// every run's end is recorded. It returns nil after a clean stop.
func (s *Scheduler) Serve(ctx context.Context) error {
	if s.opts.Runner == nil {
		return ErrNoRunner
	}
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("the scheduler is already running")
	}
	defer s.serving.Store(false)

	if n, err := s.recoverAbandoned(); err != nil {
		s.loopError("checking for interrupted runs", err)
	} else if n > 0 {
		s.opts.Logger.Info("recorded interrupted runs", "count", n)
	}

	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	l := &loop{s: s, runCtx: runCtx, done: make(chan struct{}, s.opts.MaxConcurrent)}
	watch := newFileWatch(s.store.DB().Path())
	ticker := time.NewTicker(s.opts.WatchInterval)
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var retry time.Duration
	// Runs left by a process that died while this one serves (another
	// scheduler on the same file) are looked for now and then, not only at
	// start: until then their tasks would stay claimed.
	recoverEvery := max(int(s.opts.RecoverInterval/s.opts.WatchInterval), 1)
	ticks := 0

	for {
		next, ok, err := l.claimDue()
		wait := time.Duration(-1) // until something happens
		switch {
		case err != nil:
			s.loopError("claiming due tasks", err)
			retry = min(max(2*retry, time.Second), maxRetry)
			wait = retry
		case ok:
			retry = 0
			wait = max(next.Sub(s.now()), 0)
		default:
			retry = 0
		}
		resetTimer(timer, wait)
	sleep:
		for {
			select {
			case <-ctx.Done():
				l.shutdown()
				return nil
			case <-s.wake:
				break sleep
			case <-l.done:
				l.running--
				break sleep
			case <-timer.C:
				break sleep
			case <-ticker.C:
				if ticks++; ticks%recoverEvery == 0 {
					if n, err := s.recoverAbandoned(); err != nil {
						s.loopError("checking for interrupted runs", err)
					} else if n > 0 {
						s.changed()
						break sleep
					}
				}
				// Another process may have added or changed tasks, and a
				// suspended machine may have slept past the timer.
				if watch.changed() {
					s.notify() // a UI watching this scheduler reloads too
					break sleep
				}
				if ok && !s.now().Before(next) {
					break sleep
				}
			}
		}
	}
}

// loop is the state of one Serve call.
type loop struct {
	s       *Scheduler
	runCtx  context.Context
	done    chan struct{}
	running int
	wg      sync.WaitGroup
	// stuck counts rounds where a task looked due but none was claimed,
	// which only a bug could cause; it stops a busy loop.
	stuck int
}

// claimDue claims what is due (if a run slot is free), starts the runs,
// and returns the next due time among the tasks left.
func (l *loop) claimDue() (next time.Time, ok bool, err error) {
	s := l.s
	free := s.opts.MaxConcurrent - l.running
	if free <= 0 {
		// Full: wait for a run to end, which wakes the loop.
		return time.Time{}, false, nil
	}
	next, ok, err = s.store.NextDue()
	if err != nil || !ok {
		return next, ok, err
	}
	now := s.now()
	if next.After(now) {
		return next, ok, nil
	}
	claims, err := s.store.ClaimDue(now, free, s.owner)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, c := range claims {
		l.running++
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			s.execute(l.runCtx, c)
			l.done <- struct{}{}
		}()
	}
	if len(claims) > 0 {
		s.changed()
	}
	next, ok, err = s.store.NextDue()
	if err != nil {
		return next, ok, err
	}
	// Another scheduler may take a task between the two lookups, but a
	// task still due right after an empty claim means the index and the
	// claim disagree: back off rather than spin.
	if len(claims) == 0 && ok && !next.After(now) {
		if l.stuck++; l.stuck > 3 {
			return time.Time{}, false, fmt.Errorf("a task is due at %s but cannot be claimed", next.Format(time.RFC3339))
		}
	} else {
		l.stuck = 0
	}
	if ok && l.running >= s.opts.MaxConcurrent {
		// Nothing can start before a run ends.
		ok = false
	}
	return next, ok, err
}

// shutdown waits for the runs in progress, as described on Serve.
func (l *loop) shutdown() {
	s := l.s
	if l.running == 0 {
		return
	}
	s.opts.Logger.Info("stopping: waiting for running tasks", "running", l.running, "grace", s.opts.StopGrace)
	finished := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(finished)
	}()
	if s.opts.StopGrace > 0 {
		select {
		case <-finished:
			return
		case <-time.After(s.opts.StopGrace):
		}
	}
	s.mu.Lock()
	for _, ar := range s.active {
		if isLoopRun(ar) {
			ar.stop(stopShutdown)
		}
	}
	s.mu.Unlock()
	select {
	case <-finished:
		return
	case <-time.After(abandonAfter):
	}
	// The runner ignores its context: record the runs as interrupted so
	// their log is complete, and let the process exit.
	s.mu.Lock()
	var left []tasks.Claim
	for _, ar := range s.active {
		if isLoopRun(ar) {
			left = append(left, ar.claim)
		}
	}
	s.mu.Unlock()
	for _, c := range left {
		run := runInfo(c)
		s.record(c, tasks.Finish{At: s.now(), Interrupted: true,
			Error: fmt.Sprintf("interrupted: the run did not stop within %s of the scheduler shutting down", abandonAfter)}, run)
	}
}

// isLoopRun tells runs started by the loop (claimed for a slot) from
// RunNow calls, which belong to their caller. One Scheduler serves one loop
// at a time, so every slot run in progress is this loop's.
func isLoopRun(ar *activeRun) bool { return !ar.claim.Slot.IsZero() }

func (s *Scheduler) loopError(what string, err error) {
	s.opts.Logger.Error("scheduler: "+what, "err", err)
	s.opts.Events.Publish(events.Event{Type: events.Error, Err: err, Text: fmt.Sprintf("scheduler: %s: %v", what, err)})
}

// resetTimer sets t to fire after d; d < 0 stops it.
func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	if d >= 0 {
		t.Reset(d)
	}
}

// fileWatch notices writes to the database file by other processes
// without opening it: bbolt changes the file's size or modification time on
// every commit, and reads change neither.
type fileWatch struct {
	path string
	mod  time.Time
	size int64
}

func newFileWatch(path string) *fileWatch {
	w := &fileWatch{path: path}
	w.changed()
	return w
}

func (w *fileWatch) changed() bool {
	st, err := os.Stat(w.path)
	if err != nil {
		return false
	}
	if st.ModTime().Equal(w.mod) && st.Size() == w.size {
		return false
	}
	w.mod, w.size = st.ModTime(), st.Size()
	return true
}
