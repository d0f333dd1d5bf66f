package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// reachState is what this scheduler knows about whether it can reach a
// server.
type reachState struct {
	known   bool // a check has finished
	ok      bool
	err     string
	checked time.Time
	// downSince is when checks started failing (zero while reachable).
	downSince time.Time
	probing   bool
}

// reachCache holds one state per server key. Checks run in goroutines of
// their own, never on the loop, and wake the loop when they end.
type reachCache struct {
	mu sync.Mutex
	m  map[string]*reachState
}

// reachable returns what is known about srv and, when that is older than
// ReachTTL (or nothing is known), starts a check. Without Options.Reach
// every server is reachable.
func (s *Scheduler) reachable(srv tasks.Server, now time.Time) reachState {
	if s.opts.Reach == nil {
		return reachState{known: true, ok: true, checked: now}
	}
	key := srv.Key()
	s.reach.mu.Lock()
	defer s.reach.mu.Unlock()
	st := s.reach.m[key]
	if st == nil {
		st = &reachState{}
		s.reach.m[key] = st
	}
	if !st.probing && (!st.known || now.Sub(st.checked) >= s.opts.ReachTTL) {
		st.probing = true
		go s.probe(srv)
	}
	return *st
}

// probe checks srv once, within ReachTimeout, records the result and wakes
// the loop. A change between reachable and unreachable is logged once.
func (s *Scheduler) probe(srv tasks.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ReachTimeout)
	err := s.checkServer(ctx, srv)
	cancel()
	now := s.now()
	key := srv.Key()
	s.reach.mu.Lock()
	st := s.reach.m[key]
	wasOK, wasKnown := st.ok, st.known
	st.known, st.ok, st.checked, st.probing = true, err == nil, now, false
	if err == nil {
		st.err, st.downSince = "", time.Time{}
	} else {
		st.err = err.Error()
		if st.downSince.IsZero() {
			st.downSince = now
		}
	}
	s.reach.mu.Unlock()
	switch {
	case err != nil && (wasOK || !wasKnown):
		s.opts.Logger.Warn("cannot reach a task's server; its runs are left to a scheduler that can", "server", srv.String(), "err", err)
	case err == nil && wasKnown && !wasOK:
		s.opts.Logger.Warn("a task's server answers again; its runs resume here", "server", srv.String())
	}
	// Only news wakes the loop: a loop woken by every check would read the
	// database so often that it never lets other processes have the file.
	// News is also told to the other schedulers at the loop's next tick,
	// not a heartbeat later: they decide whether to skip a task by it.
	if !wasKnown || wasOK != (err == nil) {
		s.reachNews.Store(true)
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// checkServer calls Options.Reach, turning a panic into an error.
func (s *Scheduler) checkServer(ctx context.Context, srv tasks.Server) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{p}
		}
	}()
	return s.opts.Reach(ctx, srv)
}

// reachReport lists the servers checked lately and whether each answered,
// for this scheduler's heartbeat.
func (s *Scheduler) reachReport(now time.Time) map[string]bool {
	fresh := 3 * s.opts.HeartbeatInterval
	s.reach.mu.Lock()
	defer s.reach.mu.Unlock()
	var out map[string]bool
	for key, st := range s.reach.m {
		if st.known && now.Sub(st.checked) < fresh {
			if out == nil {
				out = map[string]bool{}
			}
			out[key] = st.ok
		}
	}
	return out
}
