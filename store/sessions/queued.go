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
	opCreate = "sessions.create"
	opAppend = "sessions.append"
	opMeta   = "sessions.meta"
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
	row.Model, row.Agent, row.Tools = op.Meta.Model, op.Meta.Agent, slices.Clone(op.Meta.Tools)
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
