// Package store is jarvis's persistence: one database file (storm/v3 on
// bbolt) holding chat sessions, memory documents and their index, scheduled
// tasks and their run logs.
//
// Several jarvis processes share the file: the TUI, a `jarvis scheduler
// start`, a `jarvis memory index` and one-off commands. bbolt lets one
// process hold a file at a time, so:
//
//   - A DB holds the file only while it is in use, and lets go of it after
//     a short idle period (IdleRelease), or at once when another process is
//     waiting for it.
//   - Processes wait their turn in a fair line (see turns.go): long work,
//     which commits in short transactions, lets a waiting process in
//     between two of them, so nobody waits for more than the transaction in
//     progress and the ones queued before it.
//   - A waiter gives up after its timeout (LockTimeout by default) with a
//     LockedError naming the holder's pid and what it is doing; it never
//     hangs.
//   - Writes that must not be lost (a chat message, the end of a task run)
//     go through the DB's Queue, which keeps them in order and retries them
//     until they land, and keeps them in a recovery file if the process has
//     to stop first (see queue.go).
//
// bbolt's copy-on-write pages and fsync on commit mean a process killed at
// any point leaves a file that opens with every committed transaction
// intact.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asdine/storm/v3"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Timing of the file hand-over between processes.
const (
	// LockTimeout is how long an operation waits for the file before it
	// fails. Waiting is cheap and fair, so it is long: a reader waits for
	// an index to let it in rather than failing.
	LockTimeout = 30 * time.Second
	// IdleRelease is how long an idle holder keeps the file for its next
	// transaction when nobody else is waiting for it.
	IdleRelease = 100 * time.Millisecond
	// pollInterval is how often a waiter checks its place in the line and
	// tries the lock.
	pollInterval = 5 * time.Millisecond
	// waitNotice is how long a wait lasts before the DB's OnWait hook is
	// told, so a command can say what it is waiting for.
	waitNotice = time.Second
)

// DefaultPath is $JARVIS_DB, else $XDG_DATA_HOME/jarvis/jarvis.db, else
// ~/.local/share/jarvis/jarvis.db.
func DefaultPath() string {
	if p := os.Getenv("JARVIS_DB"); p != "" {
		return p
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "jarvis", "jarvis.db")
}

// LockedError says another process holds the database file.
type LockedError struct {
	Path string
	PID  int    // 0 when unknown
	What string // what the holder said it was doing, when known
	// Waited is how long this process waited.
	Waited time.Duration
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID == os.Getpid() {
		return fmt.Sprintf("database %s is held by another handle in this same process (pid %d) and was not released within %s; this is a bug in jarvis, please report it", e.Path, e.PID, LockTimeout)
	}
	if e.PID > 0 {
		who = fmt.Sprintf("another jarvis process (pid %d", e.PID)
		if e.What != "" {
			who += ", " + e.What
		}
		who += ")"
	}
	return fmt.Sprintf("database %s is in use by %s and was not released within %s. Wait for it to finish and try again, or use --db to choose another database file", e.Path, who, e.Waited.Round(time.Second))
}

// DB is the database file. It is safe for concurrent use.
type DB struct {
	path string
	what string

	mu    sync.Mutex
	sdb   *storm.DB
	users int
	timer *time.Timer
	hold  bool
	// opening is set while one goroutine waits for the file for all.
	opening chan struct{}
	// timeout bounds a wait for the file (LockTimeout when 0).
	timeout time.Duration
	// onWait, when set, is called once per wait that lasts waitNotice,
	// with the holder's pid and purpose (0 and "" when unknown).
	onWait func(pid int, what string)

	queueOnce sync.Once
	queue     *Queue
}

// Open prepares the database at path (creating its directory and the file
// when missing) and checks that it can be opened. It does not keep the file.
// what is a short description of this process ("tui", "scheduler") that
// another process will see if it has to wait.
func Open(path, what string) (*DB, error) {
	d, err := New(path, what)
	if err != nil {
		return nil, err
	}
	if err := d.Update(func(storm.Node) error { return nil }); err != nil {
		return nil, err
	}
	return d, nil
}

// New returns a handle on the database at path without touching the file:
// the first transaction creates and opens it. Commands that may never need
// the database (listing tools) use it so they never wait for another
// process's lock.
func New(path, what string) (*DB, error) {
	if path == "" {
		path = DefaultPath()
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("database path %q: %w", path, err)
		}
		path = filepath.Join(home, path[1:])
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	return &DB{path: abs, what: what}, nil
}

// SetPurpose changes what other processes waiting for the file are told
// this one is doing.
func (d *DB) SetPurpose(what string) {
	d.mu.Lock()
	d.what = what
	d.mu.Unlock()
}

// SetTimeout changes how long an operation waits for the file before it
// fails with a LockedError (LockTimeout when d <= 0).
func (d *DB) SetTimeout(t time.Duration) {
	d.mu.Lock()
	d.timeout = t
	d.mu.Unlock()
}

// OnWait sets a function called once for each wait for the file that lasts
// longer than a second, with the holder's pid and what it said it was
// doing, so a command can tell the person why nothing happens yet. It runs
// on the waiting goroutine.
func (d *DB) OnWait(fn func(pid int, what string)) {
	d.mu.Lock()
	d.onWait = fn
	d.mu.Unlock()
}

// Path is the database file's absolute path.
func (d *DB) Path() string { return d.path }

// View runs fn in a read-only transaction.
func (d *DB) View(fn func(storm.Node) error) error { return d.tx(false, fn) }

// Update runs fn in a read-write transaction, committed when fn returns nil
// and rolled back otherwise: a failed operation leaves no half-written record.
func (d *DB) Update(fn func(storm.Node) error) error { return d.tx(true, fn) }

// Hold keeps the file open until release is called, for a batch of
// transactions that should not reopen the file between them. Other
// processes wait for it like for any transaction.
func (d *DB) Hold() (release func(), err error) {
	if _, err := d.acquire(); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(d.release) }, nil
}

// KeepOpen makes the DB hold the file until Close, for benchmarks and
// single-process tools that want no reopen cost.
func (d *DB) KeepOpen() error {
	d.mu.Lock()
	d.hold = true
	d.mu.Unlock()
	_, err := d.acquire()
	if err == nil {
		d.release()
	}
	return err
}

// Close releases the file now.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold = false
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.sdb == nil {
		return nil
	}
	os.Remove(d.path + ".lock")
	err := d.sdb.Close()
	d.sdb = nil
	return err
}

func (d *DB) tx(writable bool, fn func(storm.Node) error) error {
	return d.txWithin(0, writable, fn)
}

// txWithin runs fn in a transaction, waiting at most timeout for the file
// (the DB's own timeout when 0).
func (d *DB) txWithin(timeout time.Duration, writable bool, fn func(storm.Node) error) (err error) {
	sdb, err := d.acquireWithin(timeout)
	if err != nil {
		return err
	}
	defer d.release()
	tx, err := sdb.Bolt.Begin(writable)
	if err != nil {
		return fmt.Errorf("database %s: %w", d.path, err)
	}
	n := txNode{Node: sdb.WithTransaction(tx), tx: tx}
	defer func() {
		if p := recover(); p != nil {
			n.Rollback()
			err = fmt.Errorf("database operation failed: %v", p)
		}
	}()
	if err := fn(n); err != nil {
		n.Rollback()
		return err
	}
	if !writable {
		return n.Rollback()
	}
	if err := n.Commit(); err != nil {
		return fmt.Errorf("database %s: commit: %w", d.path, err)
	}
	return nil
}

// txNode is the Node a transaction's function gets: storm's, and the
// bbolt transaction under it for BoltTx.
type txNode struct {
	storm.Node
	tx *bolt.Tx
}

// BoltTx returns the bbolt transaction of a Node given to View, Update or
// an OpFunc, nil for any other Node. A package whose records are raw bytes
// (the memory index) reads and writes its buckets through it directly:
// storm's key/value calls look up the bucket path and its metadata again
// on every call, which costs more than the write itself.
func BoltTx(n storm.Node) *bolt.Tx {
	if t, ok := n.(txNode); ok {
		return t.tx
	}
	return nil
}

func (d *DB) acquire() (*storm.DB, error) { return d.acquireWithin(0) }

// acquireWithin returns the open file, opening it when this process does
// not hold it: after taking a ticket and waiting for its turn (see
// turns.go). One goroutine opens while the others of the process wait for
// it; the mutex is not held while waiting, so Close and the bookkeeping
// of other goroutines never wait for the line.
func (d *DB) acquireWithin(timeout time.Duration) (*storm.DB, error) {
	for {
		d.mu.Lock()
		if d.timer != nil {
			d.timer.Stop()
			d.timer = nil
		}
		if d.sdb != nil {
			d.users++
			sdb := d.sdb
			d.mu.Unlock()
			return sdb, nil
		}
		if d.opening != nil {
			ch := d.opening
			d.mu.Unlock()
			<-ch
			continue
		}
		if timeout <= 0 {
			timeout = d.timeout
		}
		if timeout <= 0 {
			timeout = LockTimeout
		}
		ch := make(chan struct{})
		d.opening = ch
		onWait := d.onWait
		d.mu.Unlock()

		sdb, err := d.open(timeout, onWait)

		d.mu.Lock()
		d.opening = nil
		close(ch)
		if err != nil {
			d.mu.Unlock()
			return nil, err
		}
		d.sdb = sdb
		writeLock(d.path, d.what)
		d.users++
		d.mu.Unlock()
		return sdb, nil
	}
}

// open waits for this process's turn and opens the file. It tries the
// lock without bbolt's own 50 ms polling, so a turn is taken within
// pollInterval of the file being released.
func (d *DB) open(timeout time.Duration, onWait func(int, string)) (*storm.DB, error) {
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the database directory %s: %w", filepath.Dir(d.path), err)
	}
	start := time.Now()
	var t *ticket
	defer func() { t.leave() }()
	if othersWaiting(d.path) {
		// Someone is in line: barging in would let a process that
		// commits batch after batch keep the file for good.
		t = takeTicket(d.path)
	}
	told := false
	for {
		if t == nil || t.first() {
			before, _ := os.Stat(d.path)
			sdb, err := storm.Open(d.path, storm.BoltOptions(0o600, &bolt.Options{Timeout: time.Nanosecond}))
			if err == nil {
				// A compaction may have put a new file in place between
				// the open and the lock: then what is locked is the old
				// file, and the database is the new one.
				if after, serr := os.Stat(d.path); before == nil || serr != nil || os.SameFile(before, after) {
					return sdb, nil
				}
				sdb.Close()
				continue
			}
			if !errors.Is(err, berrors.ErrTimeout) {
				return nil, fmt.Errorf("cannot open database %s: %w (if the file is damaged, move it aside; jarvis creates a new one)", d.path, err)
			}
		}
		waited := time.Since(start)
		if waited >= timeout {
			pid, what := readLock(d.path)
			return nil, &LockedError{Path: d.path, PID: pid, What: what, Waited: waited}
		}
		if t == nil {
			// Only a process that has to wait joins the line: the
			// first try, with nobody in line, costs no file of its own.
			t = takeTicket(d.path)
		}
		if !told && waited >= waitNotice && onWait != nil {
			told = true
			pid, what := readLock(d.path)
			onWait(pid, what)
		}
		time.Sleep(pollInterval)
	}
}

func (d *DB) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users--
	if d.users > 0 || d.hold || d.sdb == nil {
		return
	}
	if othersWaiting(d.path) {
		d.closeLocked()
		return
	}
	d.timer = time.AfterFunc(IdleRelease, d.closeIfIdle)
}

func (d *DB) closeIfIdle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.users > 0 || d.hold || d.sdb == nil {
		return
	}
	d.closeLocked()
}

// closeLocked lets go of the file; d.mu is held. The note goes first: once
// the file lock is released, a waiting process may write its own.
func (d *DB) closeLocked() {
	os.Remove(d.path + ".lock")
	d.sdb.Close()
	d.sdb = nil
}

// writeLock records who holds the file, so a waiting process can say so.
// It is advisory: bbolt's flock is the real lock.
func writeLock(path, what string) {
	os.WriteFile(path+".lock", []byte(strconv.Itoa(os.Getpid())+"\n"+what+"\n"), 0o600)
}

func readLock(path string) (int, string) {
	b, err := os.ReadFile(path + ".lock")
	if err != nil {
		return 0, ""
	}
	lines := strings.SplitN(string(b), "\n", 3)
	pid, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
	what := ""
	if len(lines) > 1 {
		what = strings.TrimSpace(lines[1])
	}
	return pid, what
}
