package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The waiting line. bbolt's file lock is not fair: a process that closes
// the file and opens it again a moment later (an index committing batch
// after batch) wins the lock over one that polls for it, and the other
// waits until the long work ends. So every process that has to open the
// file first takes a ticket: an empty file named after the time it
// arrived and its pid, in a directory beside the database. It opens the
// file only when no live process holds an older ticket, and a holder that
// finishes a transaction while someone holds a ticket closes the file at
// once instead of keeping it for its next transaction. Each process then
// waits for at most the transaction in progress and the ones queued
// before it.

// ticket is one place in the waiting line.
type ticket struct {
	dir  string
	name string
	seq  int64
}

// waitDir is the directory of the line for the database at path.
func waitDir(path string) string { return path + ".waiting" }

// takeTicket joins the line. A ticket that cannot be written (a read-only
// directory) is not an error: the process then waits without one, as
// before the line existed.
func takeTicket(path string) *ticket {
	dir := waitDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	var r [4]byte
	rand.Read(r[:])
	seq := time.Now().UnixNano()
	t := &ticket{dir: dir, seq: seq,
		name: strconv.FormatInt(seq, 10) + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])}
	f, err := os.OpenFile(filepath.Join(dir, t.name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	f.Close()
	return t
}

// leave gives the ticket back.
func (t *ticket) leave() {
	if t != nil {
		os.Remove(filepath.Join(t.dir, t.name))
	}
}

// first reports whether no live process holds an older ticket. Tickets of
// processes that died are removed on the way.
func (t *ticket) first() bool {
	if t == nil {
		return true
	}
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return true
	}
	for _, e := range entries {
		if e.Name() == t.name {
			continue
		}
		seq, pid, ok := parseTicket(e.Name())
		if !ok {
			continue
		}
		if !ProcessAlive(pid) || staleTicket(t.dir, e.Name()) {
			os.Remove(filepath.Join(t.dir, e.Name()))
			continue
		}
		if seq < t.seq || seq == t.seq && e.Name() < t.name {
			return false
		}
	}
	return true
}

// othersWaiting reports whether anyone holds a ticket for the database at
// path: the holder should let go of the file. A handle never holds a
// ticket while it holds the file, so a ticket with this process's pid is
// another handle's. It costs one directory read.
func othersWaiting(path string) bool {
	entries, err := os.ReadDir(waitDir(path))
	if err != nil {
		return false
	}
	for _, e := range entries {
		_, pid, ok := parseTicket(e.Name())
		if ok && ProcessAlive(pid) && !staleTicket(waitDir(path), e.Name()) {
			return true
		}
	}
	return false
}

// ticketLifetime bounds how long a ticket counts. A waiter gives up long
// before (its timeout), so an older ticket belongs to a process that was
// stopped (SIGSTOP, a debugger) or whose pid was reused.
const ticketLifetime = 5 * time.Minute

func staleTicket(dir, name string) bool {
	info, err := os.Stat(filepath.Join(dir, name))
	return err == nil && time.Since(info.ModTime()) > ticketLifetime
}

func parseTicket(name string) (seq int64, pid int, ok bool) {
	parts := strings.SplitN(name, "-", 3)
	if len(parts) != 3 {
		return 0, 0, false
	}
	seq, err1 := strconv.ParseInt(parts[0], 10, 64)
	pid, err2 := strconv.Atoi(parts[1])
	return seq, pid, err1 == nil && err2 == nil && pid > 0
}

// ProcessAlive reports whether a process with pid exists (on this
// machine). A process of another user counts as alive.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
