// Package store is jarvis's persistence: one database file (storm/v3 on
// bbolt) holding chat sessions, memory documents and their index, scheduled
// tasks and their run logs.
//
// bbolt lets one process hold a file at a time. So that the TUI, a
// `jarvis scheduler start` and a `jarvis scheduler list` can share one file,
// a DB holds the file only while it is in use and lets go of it after a short
// idle period (IdleRelease). A process that finds the file held waits at
// most LockTimeout and then returns a LockedError naming the holder's pid:
// it never hangs. bbolt's copy-on-write pages and fsync on commit mean a
// process killed at any point leaves a file that opens with every committed
// transaction intact.
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
	LockTimeout = 2 * time.Second
	IdleRelease = 300 * time.Millisecond
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
	return fmt.Sprintf("database %s is in use by %s and was not released within %s. Wait for it to finish and try again, or use --db to choose another database file", e.Path, who, LockTimeout)
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
	// The note goes first: once the file lock is released, a waiting
	// process may write its own.
	os.Remove(d.path + ".lock")
	err := d.sdb.Close()
	d.sdb = nil
	return err
}

func (d *DB) tx(writable bool, fn func(storm.Node) error) (err error) {
	sdb, err := d.acquire()
	if err != nil {
		return err
	}
	defer d.release()
	n, err := sdb.Begin(writable)
	if err != nil {
		return fmt.Errorf("database %s: %w", d.path, err)
	}
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

func (d *DB) acquire() (*storm.DB, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.sdb == nil {
		if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
			return nil, fmt.Errorf("cannot create the database directory %s: %w", filepath.Dir(d.path), err)
		}
		sdb, err := storm.Open(d.path, storm.BoltOptions(0o600, &bolt.Options{Timeout: LockTimeout}))
		if err != nil {
			if errors.Is(err, berrors.ErrTimeout) {
				pid, what := readLock(d.path)
				return nil, &LockedError{Path: d.path, PID: pid, What: what}
			}
			return nil, fmt.Errorf("cannot open database %s: %w (if the file is damaged, move it aside; jarvis creates a new one)", d.path, err)
		}
		d.sdb = sdb
		writeLock(d.path, d.what)
	}
	d.users++
	return d.sdb, nil
}

func (d *DB) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users--
	if d.users > 0 || d.hold || d.sdb == nil {
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
