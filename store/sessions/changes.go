package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asdine/storm/v3"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/jarvis-workbench/jarvis/store"
)

// Every file a tool changes is recorded in its session: the content
// before and after (or that the file was absent), so that /undo can put
// it back and /changes, `jarvis changes` and the export can show what was
// done. A record is written through the database's queue right after the
// file is, so a busy database never loses one, and it is never changed
// after, except to say it was undone.
//
// Storage: the changes of a session in a bucket of their own
// ("changes", then the session's id), keyed by the change's id, which is
// time-ordered, so reading the bucket gives them in the order they were
// made.

// Change is one file one tool call changed.
type Change struct {
	// ID is time-ordered (see changeID); RecordChangeQueued sets it.
	ID     string    `storm:"id" json:"id"`
	At     time.Time `json:"at"`
	CallID string    `json:"call_id,omitempty"`
	Tool   string    `json:"tool"`
	// Path is the file, resolved; Shown is how it was named to the
	// person (relative to the working directory when inside it).
	Path  string `json:"path"`
	Shown string `json:"shown,omitempty"`
	// Before and After are the content; BeforeExists and AfterExists
	// whether the file was there (false: created, deleted).
	Before       string `json:"before,omitempty"`
	BeforeExists bool   `json:"before_exists"`
	After        string `json:"after,omitempty"`
	AfterExists  bool   `json:"after_exists"`
	// Mode is the permission bits the file had (or was created with).
	Mode uint32 `json:"mode,omitempty"`
	// UndoneAt is when /undo (or `jarvis undo`) put Before back; zero
	// while the change stands.
	UndoneAt time.Time `json:"undone_at"`
}

// Undone reports whether the change was taken back.
func (c Change) Undone() bool { return !c.UndoneAt.IsZero() }

// Name is how to name the changed file to a person.
func (c Change) Name() string {
	if c.Shown != "" {
		return c.Shown
	}
	return c.Path
}

// The kinds of queued change writes; part of the journal format.
const (
	opChange = "sessions.change"
	opUndo   = "sessions.undo"
)

type changeOp struct {
	Session string `json:"session"`
	Change  Change `json:"change"`
}

type undoOp struct {
	Session string    `json:"session"`
	IDs     []string  `json:"ids"`
	At      time.Time `json:"at"`
}

func init() {
	registerDecoded(opChange, func(n storm.Node, op changeOp) error { return recordChangeTx(n, op.Session, op.Change) })
	registerDecoded(opUndo, func(n storm.Node, op undoOp) error { return undoTx(n, op.Session, op.IDs, op.At) })
}

// registerDecoded registers a queued write whose payload is a T, applied
// under the package's root bucket.
func registerDecoded[T any](kind string, apply func(n storm.Node, op T) error) {
	store.RegisterOp(kind, func(n storm.Node, data json.RawMessage) error {
		var op T
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		return apply(n.From(root), op)
	})
}

func changes(n storm.Node, id string) storm.Node { return n.From("changes", id) }

func recordChangeTx(n storm.Node, id string, c Change) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	node := changes(n, row.ID)
	var existing Change
	if err := node.One("ID", c.ID, &existing); err == nil {
		return nil // already there: a write replayed after a crash
	} else if !notFound(err) {
		return err
	}
	if err := node.Save(&c); err != nil {
		return fmt.Errorf("cannot record the change of %s in session %s: %w", c.Name(), row.ID, err)
	}
	row.Changes++
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot save session %s: %w", row.ID, err)
	}
	return nil
}

func undoTx(n storm.Node, id string, ids []string, at time.Time) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	node := changes(n, row.ID)
	for _, cid := range ids {
		var c Change
		if err := node.One("ID", cid, &c); err != nil {
			if notFound(err) {
				continue
			}
			return err
		}
		if c.Undone() {
			continue
		}
		c.UndoneAt = at
		if err := node.Save(&c); err != nil {
			return fmt.Errorf("cannot record the undo of %s in session %s: %w", c.Name(), row.ID, err)
		}
	}
	return nil
}

// RecordChangeQueued queues c for session id (a full id) and returns it
// with its id and time set.
func (s *Store) RecordChangeQueued(id string, c Change) (Change, error) {
	if id == "" {
		return c, errors.New("no session id given")
	}
	c.At = s.clock()
	c.ID = changeID(c.At)
	c.UndoneAt = time.Time{}
	op, err := store.NewOp(opChange, "the change of "+c.Name()+" in session "+id, changeOp{Session: id, Change: c})
	if err != nil {
		return c, err
	}
	s.db.Queue().Enqueue(op)
	return c, nil
}

// UndoQueued queues marking the changes ids of session id as undone.
func (s *Store) UndoQueued(id string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	op, err := store.NewOp(opUndo, "an undo in session "+id, undoOp{Session: id, IDs: slices.Clone(ids), At: s.clock()})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// Changes returns the changes recorded in session id (or a unique prefix
// of it), oldest first, with the session.
func (s *Store) Changes(id string) (Session, []Change, error) {
	var sess Session
	var out []Change
	err := s.view(func(n storm.Node) error {
		row, err := resolve(n, id)
		if err != nil {
			return err
		}
		sess = row.Session
		if row.Changes == 0 {
			return nil
		}
		if err := changes(n, row.ID).All(&out); err != nil && !notFound(err) {
			return fmt.Errorf("cannot read the changes of session %s: %w", row.ID, err)
		}
		slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.ID, b.ID) })
		return nil
	})
	return sess, out, err
}

// dropChanges removes a deleted session's changes (the bucket exists
// once a change was recorded).
func dropChanges(n storm.Node, row sessionRow) error {
	if row.Changes == 0 {
		return nil
	}
	if err := n.From("changes").Drop(row.ID); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("cannot delete the changes of session %s: %w", row.ID, err)
	}
	return nil
}

// ChangeGroup is the changes one turn made: Turn counts the person's
// questions from 1 (0 for changes whose call is not among the messages),
// Question is that turn's question.
type ChangeGroup struct {
	Turn     int
	Question string
	Changes  []Change
}

// GroupChanges puts changes (oldest first) under the turn whose calls
// made them, from the session's messages: a turn is a user message and
// what follows it until the next one.
func GroupChanges(msgs []Message, list []Change) []ChangeGroup {
	turnOf := map[string]int{}
	questions := map[int]string{}
	turn := 0
	for _, m := range msgs {
		switch {
		case m.Role == RoleUser && !IsToolResult(m):
			turn++
			questions[turn] = m.Content
		case m.Role == RoleAssistant:
			for _, tc := range m.ToolCalls {
				if tc.ID != "" {
					turnOf[tc.ID] = turn
				}
			}
		case IsToolResult(m) && m.ToolCallID != "":
			if _, ok := turnOf[m.ToolCallID]; !ok {
				turnOf[m.ToolCallID] = turn
			}
		}
	}
	var out []ChangeGroup
	for _, c := range list {
		t := turnOf[c.CallID]
		if len(out) == 0 || out[len(out)-1].Turn != t {
			out = append(out, ChangeGroup{Turn: t, Question: questions[t]})
		}
		g := &out[len(out)-1]
		g.Changes = append(g.Changes, c)
	}
	return out
}

// lastChange is the time of the last change id this process made, so ids
// made within one clock tick still sort in the order the changes were
// made (an undo takes the last one back, and must find the right one).
var lastChange struct {
	sync.Mutex
	nanos int64
}

// changeID is the change's time in nanoseconds as 16 hex digits, never
// earlier than the process's last one, then 4 random characters that keep
// two processes' ids apart.
func changeID(at time.Time) string {
	lastChange.Lock()
	n := max(at.UnixNano(), lastChange.nanos+1)
	lastChange.nanos = n
	lastChange.Unlock()
	return fmt.Sprintf("%016x", n) + newID(at)[12:]
}
