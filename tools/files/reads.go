package files

import (
	"crypto/sha256"
	"sync"
	"time"
)

// A model that edits a file must have read it as it is now: a file the
// person (or a command, or git) changed since the model read it would be
// edited from a stale picture, and the person's work overwritten. So every
// read is noted, per session, by the file's content hash (and its mtime,
// to name the moment in messages); a write or an edit of an existing file
// is refused unless the file is still what the model last read, or last
// wrote, and the refusal tells the model to read it again. Creating a file
// that does not exist needs no read.
//
// The notes live in memory for the life of the process: after a restart
// the model reads a file again before changing it, which costs one call
// and is never wrong.

// readNote is what a session last saw of one file.
type readNote struct {
	sum   [32]byte
	mtime time.Time
}

// readLog holds the notes of every session, keyed by session then by
// resolved path.
type readLog struct {
	mu    sync.Mutex
	notes map[string]map[string]readNote
}

// reads is the process's log: file_read writes it, the write tools read
// it. One log for the process, as sessions are one per conversation.
var reads = &readLog{notes: map[string]map[string]readNote{}}

// maxTrackedSessions bounds the log: a long-running process (the
// workbench going through many sessions, a scheduler) forgets the oldest
// session's notes past it, which only makes a model read again.
const maxTrackedSessions = 256

// saw notes that session saw real (a resolved path) with this content.
func (l *readLog) saw(session, real string, data []byte, mtime time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.notes[session]
	if !ok {
		if len(l.notes) >= maxTrackedSessions {
			for k := range l.notes { // any one: maps have no order, and forgetting costs a read
				delete(l.notes, k)
				break
			}
		}
		m = map[string]readNote{}
		l.notes[session] = m
	}
	m[real] = readNote{sum: sha256.Sum256(data), mtime: mtime}
}

// last returns what session last saw of real.
func (l *readLog) last(session, real string) (readNote, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.notes[session][real]
	return n, ok
}

// forget drops what session saw of real (the file was deleted).
func (l *readLog) forget(session, real string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.notes[session], real)
}

// current reports whether data is what session last saw of real.
func (l *readLog) current(session, real string, data []byte) (seen, same bool) {
	n, ok := l.last(session, real)
	if !ok {
		return false, false
	}
	return true, n.sum == sha256.Sum256(data)
}
