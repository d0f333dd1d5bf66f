package store

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bbolt never gives pages back to the file system: after a large forget
// or a re-index the file keeps its size, with the freed pages reused only
// by later writes. Compact rewrites the database into a new file without
// them and puts it in place of the old one.
//
// It holds the file for as long as the copy takes (seconds for a large
// database), so it is a command a person runs, never something jarvis
// does behind their back. The new file replaces the old one while the old
// one is still locked, and every process checks, once it has the lock,
// that the file it locked is still the database (see open): a process
// that opened the old file a moment before the rename lets go and opens
// the new one.

// CompactResult says what Compact did.
type CompactResult struct {
	Before, After int64
	Took          time.Duration
}

// ErrInUse means a transaction of this process is running: Compact needs
// the database to itself.
var ErrInUse = errors.New("the database is in use by this process; compact it when nothing else runs")

// Compact rewrites the database without its free pages.
func (d *DB) Compact() (CompactResult, error) {
	start := time.Now()
	sdb, err := d.acquire()
	if err != nil {
		return CompactResult{}, err
	}
	d.mu.Lock()
	busy := d.users > 1
	d.mu.Unlock()
	if busy {
		d.release()
		return CompactResult{}, ErrInUse
	}
	res := CompactResult{}
	if info, err := os.Stat(d.path); err == nil {
		res.Before = info.Size()
	}
	tmp := d.path + ".compacting"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		d.release()
		return res, fmt.Errorf("cannot create %s for the compacted copy: %w", tmp, err)
	}
	err = bolt.Compact(dst, sdb.Bolt, 16<<20)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.path)
	}
	if err != nil {
		os.Remove(tmp)
		d.release()
		return res, fmt.Errorf("compacting %s: %w (the database is unchanged)", d.path, err)
	}
	// The handle still points at the old file: let it go, so the next
	// transaction opens the compacted one.
	d.mu.Lock()
	d.users--
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.closeLocked()
	d.mu.Unlock()
	if info, err := os.Stat(d.path); err == nil {
		res.After = info.Size()
	}
	res.Took = time.Since(start)
	return res, nil
}
