package scheduler

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// forgetAfter is how long an expired peer entry is kept before a heartbeat
// removes it (a dead pid on this machine is removed at once).
const forgetAfter = time.Hour

// heartbeat writes this scheduler's peer entry and refreshes what it knows
// of the others. A failure (the file held too long by another process) is
// logged and tried again at the next beat.
func (s *Scheduler) heartbeat(started time.Time) {
	now := s.now()
	all, err := s.store.Peers()
	if err != nil {
		s.opts.Logger.Warn("scheduler: cannot read the other schedulers' entries", "err", err)
		return
	}
	var drop []string
	for _, p := range all {
		if p.ID != s.owner && (gone(p) || now.Sub(p.Expires) > forgetAfter) {
			drop = append(drop, p.ID)
		}
	}
	// This scheduler's own server is kept checked while it serves, busy
	// or not: the others count on its report to leave it the tasks that
	// record no server, and a report that went stale while it ran a long
	// task would have them skip one it could still run.
	if !s.opts.Server.IsZero() {
		s.reachable(s.opts.Server, now)
	}
	me := tasks.Peer{ID: s.owner, Process: s.by.Process, Dedicated: s.opts.Dedicated, Server: s.opts.Server,
		Started: started, Beat: now, Expires: now.Add(3 * s.opts.HeartbeatInterval), Reach: s.reachReport(now)}
	if err := s.store.Beat(me, drop...); err != nil {
		s.opts.Logger.Warn("scheduler: cannot write this scheduler's entry", "err", err)
		return
	}
	s.judgePeers(all, now)
}

// leave removes this scheduler's entry when it stops serving.
func (s *Scheduler) leave() {
	if err := s.store.Leave(s.owner); err != nil {
		s.opts.Logger.Warn("scheduler: cannot remove this scheduler's entry", "err", err)
	}
	s.mu.Lock()
	s.ownerPeer, s.peersSeen = nil, nil
	s.mu.Unlock()
}

// refreshPeers reads the peer entries and returns the dedicated scheduler
// to leave runs to (nil when none, or when this one is dedicated) and
// every live peer.
func (s *Scheduler) refreshPeers(now time.Time) (*tasks.Peer, []tasks.Peer) {
	all, err := s.store.Peers()
	if err != nil {
		// Keep what was known: a busy file must not make this scheduler
		// compete with a dedicated one for a round.
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.ownerPeer, s.peersSeen
	}
	return s.judgePeers(all, now)
}

// judgePeers keeps the live peers and the owner, and says so when the
// owner changes: once on the event bus (a UI's event log), and to the
// watchers.
func (s *Scheduler) judgePeers(all []tasks.Peer, now time.Time) (*tasks.Peer, []tasks.Peer) {
	var live []tasks.Peer
	var owner *tasks.Peer
	for _, p := range all {
		if p.ID == s.owner || !alive(p, now) {
			continue
		}
		live = append(live, p)
		if p.Dedicated && !s.opts.Dedicated && (owner == nil || p.Started.Before(owner.Started)) {
			owner = &p
		}
	}
	s.mu.Lock()
	before := s.ownerPeer
	s.ownerPeer, s.peersSeen = owner, live
	s.mu.Unlock()
	switch {
	case owner != nil && (before == nil || before.ID != owner.ID):
		s.opts.Events.Publish(events.Event{Type: events.Notice, Run: events.RunInfo{ID: "scheduler"},
			Text: fmt.Sprintf("scheduler: %s serves this database, so %s leaves scheduled runs to it", owner.Process, s.by.Process)})
		s.notify()
	case owner == nil && before != nil:
		s.opts.Events.Publish(events.Event{Type: events.Notice, Run: events.RunInfo{ID: "scheduler"},
			Text: fmt.Sprintf("scheduler: %s no longer serves this database; %s runs scheduled tasks again", before.Process, s.by.Process)})
		s.notify()
	}
	return owner, live
}

// Owner returns the dedicated scheduler (`jarvis scheduler start`) this
// one leaves scheduled runs to, as of its last look; ok is false when this
// scheduler claims runs itself (or is not serving).
func (s *Scheduler) Owner() (p tasks.Peer, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownerPeer == nil {
		return tasks.Peer{}, false
	}
	return *s.ownerPeer, true
}

// Peers returns the other live schedulers serving the database, as of
// this scheduler's last look.
func (s *Scheduler) Peers() []tasks.Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tasks.Peer(nil), s.peersSeen...)
}

// Process returns how this scheduler names itself in run logs.
func (s *Scheduler) Process() tasks.Process { return s.by.Process }

// alive reports whether a peer entry describes a running scheduler: its
// heartbeat is recent and, on this machine, its process still runs.
func alive(p tasks.Peer, now time.Time) bool {
	return now.Before(p.Expires) && !gone(p)
}

// gone reports a peer whose process is known to have ended: on this
// machine, a pid that no longer runs.
func gone(p tasks.Peer) bool {
	host, _ := os.Hostname()
	return p.Process.Machine == host && p.Process.PID > 0 && !processAlive(p.Process.PID)
}

// Serving returns the schedulers serving the database behind st right now
// (live peer entries), oldest first: what `scheduler list` reports.
func Serving(st *tasks.Store, now time.Time) ([]tasks.Peer, error) {
	all, err := st.Peers()
	if err != nil {
		return nil, err
	}
	var out []tasks.Peer
	for _, p := range all {
		if alive(p, now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b tasks.Peer) int { return a.Started.Compare(b.Started) })
	return out, nil
}
