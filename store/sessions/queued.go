package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// A chat must never lose a message because another process held the
// database at the moment it was saved. The Queued methods validate at
// once and hand the write to the database's queue (store.Queue), which
// applies it in order and retries it until it lands, so the caller (a
// reply still streaming) never waits for the file. A reader in the same
// process that must see them first flushes the queue (Store.Flush).

// The kinds of queued writes; they are part of the journal format.
const (
	opCreate    = "sessions.create"
	opAppend    = "sessions.append"
	opMeta      = "sessions.meta"
	opBranch    = "sessions.branch"
	opSetBranch = "sessions.setbranch"
	opFork      = "sessions.fork"
)

func init() {
	store.RegisterOp(opCreate, func(n storm.Node, data json.RawMessage) error {
		var row sessionRow
		if err := json.Unmarshal(data, &row); err != nil {
			return err
		}
		node := n.From(root)
		var existing sessionRow
		if err := node.One("ID", row.ID, &existing); err == nil {
			return nil // already there: a write replayed after a crash
		} else if !notFound(err) {
			return err
		}
		return node.Save(&row)
	})
	store.RegisterOp(opAppend, func(n storm.Node, data json.RawMessage) error {
		var op appendOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		// The message times were set when the messages were handed over.
		return appendTx(n.From(root), op.ID, op.At, op.Messages)
	})
	store.RegisterOp(opMeta, func(n storm.Node, data json.RawMessage) error {
		var op metaOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		return changeTx(n.From(root), op.ID, op.apply)
	})
	store.RegisterOp(opBranch, func(n storm.Node, data json.RawMessage) error {
		var op branchOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		node := n.From(root)
		if row, err := resolve(node, op.ID); err == nil && row.hasBranch(op.Branch.ID) {
			return nil // already there: a write replayed after a crash
		}
		return branchTx(node, op.ID, op.Branch)
	})
	store.RegisterOp(opSetBranch, func(n storm.Node, data json.RawMessage) error {
		var op setBranchOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		return setBranchTx(n.From(root), op.ID, op.Branch)
	})
	store.RegisterOp(opFork, func(n storm.Node, data json.RawMessage) error {
		var op forkOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		node := n.From(root)
		var existing sessionRow
		if err := node.One("ID", op.Row.ID, &existing); err == nil {
			return nil // already there
		} else if !notFound(err) {
			return err
		}
		return forkTx(node, op.Row, op.Branch, op.UpTo)
	})
}

type branchOp struct {
	ID     string `json:"id"`
	Branch Branch `json:"branch"`
}

type setBranchOp struct {
	ID     string `json:"id"`
	Branch string `json:"branch"`
}

type forkOp struct {
	Row    sessionRow `json:"row"`
	Branch string     `json:"branch"`
	UpTo   int        `json:"up_to"`
}

type appendOp struct {
	ID       string    `json:"id"`
	At       time.Time `json:"at"`
	Messages []Message `json:"messages"`
}

type metaOp struct {
	ID   string `json:"id"`
	Meta Meta   `json:"meta"`
}

func (op metaOp) apply(row *sessionRow) {
	row.Model, row.Agent, row.Tools, row.NumCtx = op.Meta.Model, op.Meta.Agent, slices.Clone(op.Meta.Tools), op.Meta.NumCtx
	if t := strings.TrimSpace(op.Meta.Title); t != "" {
		row.Title = t
	}
}

// CreateQueued returns a new session at once and queues its creation.
func (s *Store) CreateQueued(m Meta) (Session, error) {
	row := s.newRow(m)
	op, err := store.NewOp(opCreate, "the new session "+row.ID, row)
	if err != nil {
		return Session{}, err
	}
	s.db.Queue().Enqueue(op)
	return row.Session, nil
}

// AppendQueued validates msgs and queues them to be appended to session id
// (a full id: a prefix could match another session by the time the write
// lands). Messages without a time get the time they were handed over.
func (s *Store) AppendQueued(id string, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if id == "" {
		return errors.New("no session id given")
	}
	if err := checkRoles(msgs); err != nil {
		return err
	}
	now := s.clock()
	msgs = slices.Clone(msgs)
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = now
		}
	}
	what := "a message of session " + id
	if len(msgs) > 1 {
		what = fmt.Sprintf("%d messages of session %s", len(msgs), id)
	}
	op, err := store.NewOp(opAppend, what, appendOp{ID: id, At: now, Messages: msgs})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// SetMetaQueued queues SetMeta.
func (s *Store) SetMetaQueued(id string, m Meta) error {
	op, err := store.NewOp(opMeta, "the settings of session "+id, metaOp{ID: id, Meta: m})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// Flush waits until the session writes this process queued have landed,
// or ctx ends.
func (s *Store) Flush(ctx context.Context) error { return s.db.Flush(ctx) }

// NewBranchQueued queues NewBranch (id a full id). Messages appended
// after it, with the branch's id, land on it.
func (s *Store) NewBranchQueued(id string, b Branch) error {
	if id == "" {
		return errors.New("no session id given")
	}
	if strings.TrimSpace(b.ID) == "" {
		return errors.New("a branch needs an id")
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = s.clock()
	}
	op, err := store.NewOp(opBranch, "a new branch of session "+id, branchOp{ID: id, Branch: b})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// SetBranchQueued queues SetBranch.
func (s *Store) SetBranchQueued(id, branch string) error {
	if id == "" {
		return errors.New("no session id given")
	}
	op, err := store.NewOp(opSetBranch, "the current branch of session "+id, setBranchOp{ID: id, Branch: branch})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// ForkQueued returns the new session at once and queues Fork: the copy is
// made from the parent as it is when the write lands, after the writes
// queued before it. upTo must be given (the message the copy ends with);
// id must be a full id.
func (s *Store) ForkQueued(id, branch string, upTo int, m Meta) (Session, error) {
	if id == "" {
		return Session{}, errors.New("no session id given")
	}
	row := s.newRow(m)
	row.Parent, row.ParentSeq = id, upTo
	op, err := store.NewOp(opFork, "a fork of session "+id, forkOp{Row: row, Branch: branch, UpTo: upTo})
	if err != nil {
		return Session{}, err
	}
	s.db.Queue().Enqueue(op)
	return row.Session, nil
}
