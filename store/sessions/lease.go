package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// A session is open in one jarvis at a time. Two workbenches on one
// session (or a workbench and `jarvis ask --session`) would each append
// to the line they loaded, and their messages would interleave into a
// conversation neither had. Opening a session to write to it takes its
// lease: an exclusive lock on a file beside the database, which the
// operating system lets go of when the process ends, however it ends, so
// a crashed jarvis cannot hold a session. A note beside the lock says who
// holds it, for the message of the one turned away.
//
// The lock files are named after the session ids, in a directory beside
// the database (PATH.sessions). They stay when released: a lock file
// removed while another process opens it would let two processes hold
// the session.

// Holder is the jarvis that holds a session's lease.
type Holder struct {
	PID     int       `json:"pid"`
	Machine string    `json:"machine,omitempty"`
	What    string    `json:"what"` // "the workbench", "jarvis ask"
	Since   time.Time `json:"since"`
}

// String names the holder in a sentence: "the workbench, pid 4242 on
// box, since 10:02".
func (h Holder) String() string {
	var parts []string
	if h.What != "" {
		parts = append(parts, h.What)
	}
	if h.PID > 0 {
		p := fmt.Sprintf("pid %d", h.PID)
		if host, _ := os.Hostname(); h.Machine != "" && h.Machine != host {
			p += " on " + h.Machine
		}
		parts = append(parts, p)
	}
	if !h.Since.IsZero() {
		parts = append(parts, "since "+sinceText(h.Since))
	}
	return strings.Join(parts, ", ")
}

func sinceText(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); time.Now().Year() == y && time.Now().Month() == m && time.Now().Day() == d {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// HeldError says a session is open in another jarvis.
type HeldError struct {
	ID string
	// Holder is who holds it, as its note says (zero when the note
	// could not be read: the holder may be writing it).
	Holder Holder
}

func (e *HeldError) Error() string {
	if h := e.Holder.String(); h != "" {
		return fmt.Sprintf("session %s is open in another jarvis (%s)", e.ID, h)
	}
	return fmt.Sprintf("session %s is open in another jarvis", e.ID)
}

// Lease is this process's hold on a session.
type Lease struct {
	id   string
	lock *flock.Flock
	note string
}

// ID is the session held.
func (l *Lease) ID() string { return l.id }

// Release lets the session go. It is safe on a nil lease and to call
// twice.
func (l *Lease) Release() {
	if l == nil || l.lock == nil {
		return
	}
	os.Remove(l.note) // first: once unlocked, the next holder writes its own
	l.lock.Close()
	l.lock = nil
}

// leaseDir is where the leases of the database's sessions are.
func (s *Store) leaseDir() string { return s.db.Path() + ".sessions" }

// Hold takes the lease of session id (a full id, as Load and List give
// it) for what, how the holder is named to others ("the workbench"). A
// session another process holds is a *HeldError; a process holds a
// session once (a second Hold of it is a *HeldError too).
func (s *Store) Hold(id, what string) (*Lease, error) {
	if id == "" || strings.ContainsAny(id, `/\.`) {
		return nil, fmt.Errorf("cannot hold session %q: not a session id", id)
	}
	dir := s.leaseDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot hold session %s: %w", id, err)
	}
	base := filepath.Join(dir, id)
	lock := flock.New(base+".lock", flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("cannot hold session %s: %w", id, err)
	}
	if !ok {
		return nil, &HeldError{ID: id, Holder: readHolder(base + ".holder")}
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Machine: host, What: what, Since: s.now()}
	b, _ := json.Marshal(h)
	// The note is advisory (the lock is what holds): one that cannot be
	// written only leaves the message without a name.
	os.WriteFile(base+".holder", b, 0o600)
	return &Lease{id: id, lock: lock, note: base + ".holder"}, nil
}

func readHolder(path string) Holder {
	var h Holder
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &h)
	}
	return h
}
