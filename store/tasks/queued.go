package tasks

import (
	"encoding/json"
	"errors"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// The end of a run must not be lost because another process held the
// database when the run ended: FinishQueued hands it to the database's
// queue (store.Queue), which applies it when the file is free, or keeps it
// in its journal for the next jarvis if this one stops first. Until it
// lands the run stays claimed, so no other scheduler starts the task again.

// opFinish is the kind of a queued run end; it is part of the journal
// format.
const opFinish = "tasks.finish"

type finishOp struct {
	Claim  Claim  `json:"claim"`
	Finish Finish `json:"finish"`
}

func init() {
	store.RegisterOp(opFinish, func(n storm.Node, data json.RawMessage) error {
		var op finishOp
		if err := json.Unmarshal(data, &op); err != nil {
			return err
		}
		_, _, err := finish(n.From(root), op.Claim, op.Finish)
		if errors.Is(err, ErrFinished) {
			return nil // recorded already (the run was recovered meanwhile)
		}
		return err
	})
}

// FinishQueued queues Finish.
func (s *Store) FinishQueued(c Claim, f Finish) error {
	op, err := store.NewOp(opFinish, "the end of task "+c.Task.ID+"'s run", finishOp{Claim: c, Finish: f})
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}
