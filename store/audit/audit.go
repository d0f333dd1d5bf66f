// Package audit keeps the log of confirmation decisions in the jarvis
// database: for each call that needed confirmation (and each call a config
// setting let run unasked), when, which tool, with which arguments (as
// they ran, and as first asked when a person edited them), what was
// decided, by whom or what, where, for which session or task, and why.
//
// A decision must never be lost because another process held the file:
// Record hands the entry to the database's write queue (store.Queue),
// which applies it when the file is free or keeps it in its journal for
// the next jarvis. Readers flush this process's queue first, then wait
// their turn for the file like any reader.
//
// Layering: store sits below tools, so Entry mirrors tools.AuditEntry;
// callers convert (the arguments are already redacted when they arrive).
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// root is the storm bucket holding the log.
const root = "audit"

// opRecord is the kind of a queued entry; it is part of the journal format.
const opRecord = "audit.record"

// Entry is one decision (see tools.AuditEntry, which it mirrors).
type Entry struct {
	// ID orders entries by time; it is unique, so an entry replayed from
	// the journal after a crash is written once.
	ID        string         `storm:"id" json:"id"`
	Time      time.Time      `storm:"index" json:"time"`
	Tool      string         `storm:"index" json:"tool"`
	Via       string         `json:"via,omitempty"`
	Args      map[string]any `json:"args"`
	AskedArgs map[string]any `json:"asked_args,omitempty"`
	Decision  string         `json:"decision"`
	By        string         `json:"by"`
	Source    string         `json:"source"`
	Session   string         `json:"session,omitempty"`
	Task      string         `json:"task,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	// Grant is the grant that let the call run or that the answer gave.
	Grant  string `json:"grant,omitempty"`
	CallID string `json:"call_id,omitempty"`
}

func init() {
	store.RegisterOp(opRecord, func(n storm.Node, data json.RawMessage) error {
		var op queued
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		op.Entry.ID = op.ID
		return n.From(root).Save(&op.Entry)
	})
}

// queued is an entry as queued, its ID given when it was recorded.
type queued struct {
	ID    string `json:"id"`
	Entry Entry  `json:"entry"`
}

// Log writes and reads the audit log of one database.
type Log struct {
	db *store.DB
	// Logf reports an entry that could not be queued (it cannot be
	// encoded); nil discards.
	Logf func(format string, args ...any)
}

// New returns the log kept in db.
func New(db *store.DB) *Log { return &Log{db: db} }

// Record queues e. It returns at once: the entry lands when the file is
// free.
func (l *Log) Record(e Entry) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	op, err := store.NewOp(opRecord, "an audit entry for "+e.Tool, queued{ID: newID(e.Time), Entry: e})
	if err != nil {
		if l.Logf != nil {
			l.Logf("audit: %v", err)
		}
		return
	}
	l.db.Queue().Enqueue(op)
}

// newID orders by time, then by chance for entries of one nanosecond.
func newID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%020d-%s", max(t.UnixNano(), 0), hex.EncodeToString(b[:]))
}

// Filter selects entries.
type Filter struct {
	// Tool keeps the entries of this tool (or of calls made via it, such
	// as mcp_adapter); "" keeps all.
	Tool string
	// Since keeps entries at or after this time; zero keeps all.
	Since time.Time
	// Limit keeps the newest Limit entries; 0 keeps all.
	Limit int
}

// flushWait bounds how long a reader waits for this process's queued
// entries before reading what has landed.
const flushWait = 5 * time.Second

// List returns the entries that match f, oldest first.
func (l *Log) List(ctx context.Context, f Filter) ([]Entry, error) {
	fctx, cancel := context.WithTimeout(ctx, flushWait)
	l.db.Flush(fctx)
	cancel()
	var out []Entry
	floor := ""
	if !f.Since.IsZero() {
		floor = newIDFloor(f.Since)
	}
	tool := strings.TrimSpace(f.Tool)
	err := l.db.View(func(n storm.Node) error {
		out = out[:0]
		// Keys are IDs, which order by time: walk back from the newest
		// and stop at Since or Limit.
		return n.From(root).Select().Reverse().Each(new(Entry), func(rec any) error {
			e := rec.(*Entry)
			if e.ID < floor {
				return errStop
			}
			if tool != "" && e.Tool != tool && e.Via != tool {
				return nil
			}
			out = append(out, *e)
			if f.Limit > 0 && len(out) >= f.Limit {
				return errStop
			}
			return nil
		})
	})
	if errors.Is(err, errStop) || errors.Is(err, storm.ErrNotFound) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// errStop ends a walk that has what it needs.
var errStop = errors.New("stop")

// newIDFloor is the smallest ID of an entry at t.
func newIDFloor(t time.Time) string { return fmt.Sprintf("%020d-", max(t.UnixNano(), 0)) }
