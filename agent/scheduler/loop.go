package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// abandonAfter is how long a run that was told to stop (cancelled, timed
// out, the scheduler stopping) may take to return before its end is
// recorded without it and its slot given back: a runner that ignores its
// context must not hold a slot or keep the process from exiting. A
// variable so tests need not wait for it.
var abandonAfter = 5 * time.Second

// maxRetry caps the wait between attempts when the database fails (held by
// another process for longer than store.LockTimeout, a full disk).
const maxRetry = 30 * time.Second

// dueScan bounds how many due tasks one round looks at: enough that tasks
// whose server cannot be reached do not hide the others behind them.
const dueScan = 256

// minRecheck spaces the rounds that look again at due tasks left alone
// (their server unreachable, or left to a dedicated scheduler): each round
// reads the database, and a process that reads more often than
// store.IdleRelease never lets other processes have the file.
const minRecheck = time.Second

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
	started := s.now()
	s.heartbeat(started)
	defer s.leave()

	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	l := &loop{s: s, runCtx: runCtx, done: make(chan struct{}, s.opts.MaxConcurrent), started: started}
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
	beatEvery := max(int(s.opts.HeartbeatInterval/s.opts.WatchInterval), 1)
	ticks := 0

	for {
		wait, err := l.round()
		switch {
		case err != nil:
			s.loopError("claiming due tasks", err)
			retry = min(max(2*retry, time.Second), maxRetry)
			wait = retry
		default:
			retry = 0
		}
		resetTimer(timer, wait)
		deadline := time.Time{}
		if wait >= 0 {
			deadline = s.now().Add(wait)
		}
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
				ticks++
				if ticks%beatEvery == 0 || s.reachNews.Swap(false) {
					s.heartbeat(started)
				}
				if ticks%recoverEvery == 0 {
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
				if !deadline.IsZero() && !s.now().Before(deadline) {
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
	started time.Time
	// lost holds the slots this loop tried to claim and did not get in its
	// last round. Another scheduler winning a slot moves the task on; the
	// same slot lost twice means the index and the claim disagree, which
	// only a bug could cause, and stops a busy loop.
	lost map[tasks.Slot]bool
}

// round looks at the due tasks once: it claims and starts those this
// scheduler should run (up to the free run slots), records slots that no
// scheduler could serve as skipped, and returns how long to sleep before
// the next round (negative: until something happens).
func (l *loop) round() (wait time.Duration, err error) {
	s := l.s
	now := s.now()
	due, err := s.store.Due(now, dueScan)
	if err != nil {
		return 0, err
	}
	var owner *tasks.Peer
	var peers []tasks.Peer
	if len(due) > 0 {
		owner, peers = s.refreshPeers(now)
	}
	free := s.opts.MaxConcurrent - l.running
	var want []tasks.Slot
	recheck := time.Duration(-1)
	later := func(d time.Duration) {
		if d = max(d, 10*time.Millisecond); recheck < 0 || d < recheck {
			recheck = d
		}
	}
	for _, t := range due {
		srv := s.by.ServerFor(t)
		slot := tasks.Slot{TaskID: t.ID, At: t.NextRun}
		st := s.reachable(srv, now)
		if owner != nil && !(st.known && st.ok && cannotReach(owner, t)) {
			// A dedicated scheduler serves the database: leave the run to
			// it, unless it said it cannot reach the server and this one
			// can. Its heartbeats (or its death) show up in the file.
			later(max(s.opts.ReachTTL, minRecheck))
			continue
		}
		if st.known && st.ok {
			if len(want) < free {
				want = append(want, slot)
			}
			continue
		}
		// Not reachable from here (or not checked yet): another scheduler
		// may take it; look again when the check is due (a first check
		// that ends wakes the loop sooner).
		later(max(s.opts.ReachTTL, minRecheck))
		if skip, in := l.skipDue(t, srv, st, peers, now); skip {
			s.skip(slot, srv, st, now)
		} else if in > 0 {
			later(in)
		}
	}
	if len(want) > 0 {
		claims, err := s.store.ClaimSlots(want, now, s.by)
		if err != nil {
			return 0, err
		}
		got := map[tasks.Slot]bool{}
		for _, c := range claims {
			got[tasks.Slot{TaskID: c.Task.ID, At: c.Slot}] = true
			l.start(c)
		}
		if len(claims) > 0 {
			s.changed()
		}
		lost := map[tasks.Slot]bool{}
		for _, sl := range want {
			if got[sl] {
				continue
			}
			if l.lost[sl] {
				return 0, fmt.Errorf("task %s is due at %s but cannot be claimed", sl.TaskID, sl.At.Format(time.RFC3339))
			}
			lost[sl] = true
		}
		l.lost = lost
		if len(lost) > 0 {
			later(0) // look again at once: the lost tasks have moved on
		}
	}
	next, ok, err := s.store.NextAfter(now)
	if err != nil {
		return 0, err
	}
	if ok {
		later(next.Sub(now))
	}
	return recheck, nil
}

// peerServer is the server a task's runs use when the peer claims them:
// the task's, or for a task that records none, the peer's own.
func peerServer(p *tasks.Peer, t Task) tasks.Server {
	if t.Server.IsZero() {
		return p.Server
	}
	return t.Server
}

// cannotReach reports whether the peer said, at its last heartbeat, that
// it failed to reach the server the task would run on there (not merely
// that it has not checked).
func cannotReach(p *tasks.Peer, t Task) bool {
	ok, checked := p.Reach[peerServer(p, t).Key()]
	return checked && !ok
}

// skipDue decides whether a due slot that this scheduler cannot serve is
// to be recorded as skipped now: the slot is SkipAfter late, this
// scheduler has failed to reach the server for SkipAfter (so a process
// that just started does not give up on a server that is still coming
// up), and no live scheduler reports reaching the server the task would
// run on there (for a task that records none, each one's own). Otherwise it
// returns how long until the question is worth asking again (0: not
// before something changes).
func (l *loop) skipDue(t Task, srv tasks.Server, st reachState, peers []tasks.Peer, now time.Time) (bool, time.Duration) {
	s := l.s
	if s.opts.SkipAfter < 0 || !st.known || st.ok || st.downSince.IsZero() {
		return false, 0
	}
	for _, p := range peers {
		if p.ID != s.owner && p.Reach[peerServer(&p, t).Key()] {
			return false, 0
		}
	}
	since := st.downSince
	if t.NextRun.After(since) {
		since = t.NextRun
	}
	if in := since.Add(s.opts.SkipAfter).Sub(now); in > 0 {
		return false, in
	}
	return true, 0
}

// skip records a slot as skipped because its server could not be reached.
func (s *Scheduler) skip(slot tasks.Slot, srv tasks.Server, st reachState, now time.Time) {
	reason := fmt.Sprintf("skipped: no jarvis scheduler could reach %s for %s (%s tried last: %s); the task runs again at its next slot",
		srv, tasks.FormatDuration(s.opts.SkipAfter), s.by.Process, st.err)
	task, run, ok, err := s.store.Skip(slot, now, s.by, reason)
	if err != nil {
		s.loopError("recording a skipped run", err)
		return
	}
	if !ok {
		return
	}
	s.opts.Logger.Warn("scheduled run skipped: its server could not be reached", "task", task.ID, "server", srv.String())
	s.opts.Events.Publish(events.Event{Type: events.SchedulerTaskEnd,
		Run:  events.RunInfo{ID: fmt.Sprintf("task-%s-%d", task.ID, run.ID), Agent: task.Agent},
		Task: &events.TaskPayload{TaskID: task.ID, Prompt: task.Prompt, Error: reason}})
	s.changed()
}

// start runs a claimed task in its own goroutine.
func (l *loop) start(c tasks.Claim) {
	l.running++
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.s.execute(l.runCtx, c)
		l.done <- struct{}{}
	}()
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
	// Each run returns within abandonAfter of being stopped (see execute),
	// its end recorded either way.
	<-finished
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
