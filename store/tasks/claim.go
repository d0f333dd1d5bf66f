package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/asdine/storm/v3"
)

// This file holds a run's life in the store: finding due tasks, claiming
// a slot (or a run by hand), skipping a slot, and recording the end.

// NextDue returns the earliest next run of a task that can be claimed (ok is
// false when there is none). It is one index seek however many tasks exist.
func (s *Store) NextDue() (next time.Time, ok bool, err error) { return s.firstDue("0") }

// firstDue returns the earliest next run among claimable tasks whose due
// key is at least from.
func (s *Store) firstDue(from string) (next time.Time, ok bool, err error) {
	err = s.view(func(n storm.Node) error {
		var rows []taskRow
		if err := n.Range("Due", from, "g", &rows, storm.Limit(1)); err != nil {
			return err
		}
		if len(rows) == 1 {
			next, ok = rows[0].NextRun, true
		}
		return nil
	})
	if notFound(err) {
		err = nil
	}
	return next, ok, err
}

// Claim is a run that a scheduler has reserved: the task as it was when
// claimed, and the log row that will record the run.
type Claim struct {
	Task  Task
	RunID int
	// Slot is the scheduled time claimed, zero for a run started by hand.
	Slot      time.Time
	StartedAt time.Time
	// Owner identifies the claiming scheduler, so a later scheduler can
	// tell a run in progress elsewhere from one whose process died.
	Owner string
	// Process is the claiming process; Server is the server the run uses:
	// the task's, or the claimant's for a task that records none.
	Process Process
	Server  Server
}

// Claimant is the scheduler claiming a run.
type Claimant struct {
	// Owner is unique per scheduler (see Claim.Owner).
	Owner   string
	Process Process
	// Server is the claimant's own server, on which tasks that record none
	// run.
	Server Server
}

// ServerFor returns the server a task's runs use when by claims them.
func (by Claimant) ServerFor(t Task) Server {
	if t.Server.IsZero() {
		return by.Server
	}
	return t.Server
}

// ClaimDue claims up to limit tasks due at now, in one write transaction:
// each gets its next run moved past now and a run log row. A task claimed
// here cannot be claimed again until its next slot, by anyone.
func (s *Store) ClaimDue(now time.Time, limit int, by Claimant) ([]Claim, error) {
	if limit <= 0 {
		return nil, nil
	}
	var claims []Claim
	err := s.update(func(n storm.Node) error {
		rows, err := dueRows(n, now, limit)
		if err != nil {
			return err
		}
		for i := range rows {
			c, ok, err := claim(n, &rows[i], rows[i].NextRun, now, by, false)
			if err != nil {
				return err
			}
			if ok {
				claims = append(claims, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// dueRows returns up to limit claimable tasks whose next run is at or
// before now, soonest first: one seek in the Due index, then a cursor walk
// over the due entries only.
func dueRows(n storm.Node, now time.Time, limit int) ([]taskRow, error) {
	var rows []taskRow
	max := fmt.Sprintf("%016x", clampNanos(now)) + "g"
	if err := n.Range("Due", "0", max, &rows, storm.Limit(limit)); err != nil && !notFound(err) {
		return nil, err
	}
	return rows, nil
}

// Due returns up to limit claimable tasks (active, not running) whose next
// run is at or before now, soonest first, without claiming them: a
// scheduler looks at them to choose which to claim (those whose server it
// can reach) with ClaimSlots.
func (s *Store) Due(now time.Time, limit int) ([]Task, error) {
	var rows []taskRow
	err := s.view(func(n storm.Node) (err error) {
		rows, err = dueRows(n, now, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Task, len(rows))
	for i := range rows {
		out[i] = rows[i].task()
	}
	return out, nil
}

// NextAfter returns the earliest next run after t among claimable tasks
// (ok is false when there is none): when a scheduler should look again
// for due tasks once those due now are dealt with.
func (s *Store) NextAfter(t time.Time) (next time.Time, ok bool, err error) {
	return s.firstDue(fmt.Sprintf("%016x", clampNanos(t)+1))
}

// Slot names a task and the run time a scheduler saw it due for.
type Slot struct {
	TaskID string
	At     time.Time
}

// ClaimSlots claims the given slots in one write transaction. A slot that
// is no longer the task's next run (another scheduler took it, the task was
// paused or changed) is left out of the result, without an error.
func (s *Store) ClaimSlots(slots []Slot, now time.Time, by Claimant) ([]Claim, error) {
	var claims []Claim
	err := s.update(func(n storm.Node) error {
		claims = claims[:0]
		for _, sl := range slots {
			var row taskRow
			if err := n.One("ID", sl.TaskID, &row); notFound(err) {
				continue
			} else if err != nil {
				return err
			}
			c, ok, err := claim(n, &row, sl.At, now, by, false)
			if err != nil {
				return err
			}
			if ok {
				claims = append(claims, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// ClaimSlot claims one task for the slot the caller saw due. It fails with
// ErrSlotTaken when the task's next run is no longer that slot (another
// scheduler claimed it) or the task is not claimable (paused, running).
func (s *Store) ClaimSlot(id string, slot, now time.Time, by Claimant) (Claim, error) {
	var c Claim
	var ok bool
	err := s.update(func(n storm.Node) error {
		row, err := resolve(n, id)
		if err != nil {
			return err
		}
		c, ok, err = claim(n, &row, slot, now, by, false)
		return err
	})
	if err == nil && !ok {
		err = fmt.Errorf("task %s: %w", id, ErrSlotTaken)
	}
	return c, err
}

// Skip records that a slot passed without a run, with why (no scheduler
// could reach the task's server): it claims the slot and ends the run as
// OutcomeSkipped in one transaction, so a slot is skipped at most once and
// the task moves on to its next slot (a once task completes). ok is false
// when the slot was no longer the task's to skip.
func (s *Store) Skip(sl Slot, now time.Time, by Claimant, reason string) (task Task, run Run, ok bool, err error) {
	err = s.update(func(n storm.Node) error {
		var row taskRow
		if err := n.One("ID", sl.TaskID, &row); notFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		c, claimed, err := claim(n, &row, sl.At, now, by, false)
		if err != nil || !claimed {
			return err
		}
		ok = true
		task, run, err = finish(n, c, Finish{At: now, Outcome: OutcomeSkipped, Error: reason})
		return err
	})
	return task, run, ok, err
}

// ClaimManual starts a run of a task by hand, now, whatever its schedule,
// which does not change. A paused task may run this way; a cancelled or
// completed one may not (it is over: create a new task), and a task
// already running cannot be started again.
func (s *Store) ClaimManual(ref string, now time.Time, by Claimant) (Claim, error) {
	var c Claim
	err := s.update(func(n storm.Node) error {
		row, err := resolve(n, ref)
		if err != nil {
			return err
		}
		switch row.Status {
		case Cancelled:
			return &StateError{ID: row.ID, Msg: "is cancelled, so it cannot run again. To run its prompt, create a new task"}
		case Completed:
			return &StateError{ID: row.ID, Msg: "has completed: its one-time run is over. To run its prompt again, create a new task"}
		}
		if row.Owner != "" {
			return fmt.Errorf("task %s: %w (started %s by %s)", row.ID, ErrRunning, row.LastRun.In(row.loc()).Format(displayLayout), row.RunIn)
		}
		c, _, err = claim(n, &row, time.Time{}, now, by, true)
		return err
	})
	return c, err
}

// claim checks that row may run for slot and records the claim. ok is
// false, with no error, when the task is not claimable for that slot.
func claim(n storm.Node, row *taskRow, slot, now time.Time, by Claimant, manual bool) (c Claim, ok bool, err error) {
	if !manual && (row.Status != Active || row.Owner != "" || !row.NextRun.Equal(slot)) {
		return Claim{}, false, nil
	}
	if !manual {
		sched, err := ParseSchedule(row.ScheduleType, row.ScheduleValue, row.Zone)
		if err != nil {
			// A schedule that stopped parsing (its zone vanished from the
			// system) must not stay due forever: pause it and say why.
			row.Status, row.NextRun, row.LastError = Paused, time.Time{}, "paused: "+err.Error()
			row.Due = row.dueKey()
			return Claim{}, false, n.Save(row)
		}
		row.NextRun = sched.After(slot, now).UTC()
	}
	server := by.ServerFor(row.task())
	run := runRow{TaskID: row.ID, Slot: slot.UTC(), Manual: manual, Owner: by.Owner, StartedAt: now.UTC(),
		Process: by.Process, Server: server}
	if err := runs(n, row.ID).Save(&run); err != nil {
		return Claim{}, false, err
	}
	row.LastRun, row.Owner, row.RunID, row.RunIn = now.UTC(), by.Owner, run.ID, by.Process
	row.Due = row.dueKey()
	if err := n.Save(row); err != nil {
		return Claim{}, false, err
	}
	return Claim{Task: row.task(), RunID: run.ID, Slot: slot, StartedAt: now, Owner: by.Owner,
		Process: by.Process, Server: server}, true, nil
}

// ErrFinished is returned by Finish for a run whose end is already
// recorded (a run given up at shutdown that returned later).
var ErrFinished = errors.New("the run's end is already recorded")

// Finish records how a claimed run ended, releases the task, and drops the
// task's oldest log rows beyond KeepRuns. A task with no next run (a once
// task) becomes completed.
func (s *Store) Finish(c Claim, f Finish) (task Task, run Run, err error) {
	err = s.update(func(n storm.Node) (err error) {
		task, run, err = finish(n, c, f)
		return err
	})
	if err != nil {
		return Task{}, Run{}, err
	}
	return task, run, nil
}

func finish(n storm.Node, c Claim, f Finish) (Task, Run, error) {
	var row taskRow
	var run runRow
	err := func() error {
		log := runs(n, c.Task.ID)
		if err := log.One("ID", c.RunID, &run); err != nil {
			if notFound(err) {
				return fmt.Errorf("run %d of task %s is not in the log", c.RunID, c.Task.ID)
			}
			return err
		}
		if !run.FinishedAt.IsZero() {
			return ErrFinished
		}
		run.FinishedAt = f.At.UTC()
		run.Success = f.Success && !f.Interrupted
		run.Result = cut(f.Result, ResultLimit)
		run.Error = f.Error
		run.Denied = cleanList(f.DeniedTools)
		if f.Model != "" && run.Server.Model == "" {
			run.Server.Model = f.Model
		}
		switch {
		case f.Interrupted:
			run.Outcome = OutcomeInterrupted
		case run.Success:
			run.Outcome = OutcomeSuccess
		case f.Outcome != OutcomeNone:
			run.Outcome = f.Outcome
		default:
			run.Outcome = OutcomeFailed
		}
		if err := log.Save(&run); err != nil {
			return err
		}
		if err := n.One("ID", run.TaskID, &row); err != nil {
			return err
		}
		if row.RunID == run.ID {
			row.Owner, row.RunID, row.RunIn = "", 0, Process{}
			row.LastOutcome = run.Outcome
			row.LastResult = cut(run.Result, SummaryLimit)
			row.LastError = cut(run.Error, SummaryLimit)
		}
		// A task with no run left is done, also when it was paused while
		// its last run went on (resuming could not give it a next run).
		if (row.Status == Active || row.Status == Paused) && row.NextRun.IsZero() && row.ScheduleType == Once {
			row.Status = Completed
		} else if row.Status == Active && row.NextRun.IsZero() {
			row.Status = Completed
		}
		row.Due = row.dueKey()
		if err := n.Save(&row); err != nil {
			return err
		}
		return prune(log)
	}()
	if err != nil {
		return Task{}, Run{}, err
	}
	return row.task(), run.public(), nil
}

// prune deletes a task's log rows beyond the newest KeepRuns.
func prune(log storm.Node) error {
	var old []runRow
	err := log.All(&old, storm.Reverse(), storm.Skip(KeepRuns))
	if notFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := range old {
		if err := log.DeleteStruct(&old[i]); err != nil {
			return err
		}
	}
	return nil
}

// Running returns the claims of every run in progress, in any process, so
// a starting scheduler can find those whose process died.
func (s *Store) Running() ([]Claim, error) {
	var rows []taskRow
	err := s.view(func(n storm.Node) error { return n.AllByIndex("Owner", &rows) })
	if err != nil && !notFound(err) {
		return nil, err
	}
	var out []Claim
	for i := range rows {
		if rows[i].Owner == "" {
			continue
		}
		out = append(out, Claim{Task: rows[i].task(), RunID: rows[i].RunID, StartedAt: rows[i].LastRun, Owner: rows[i].Owner,
			Process: rows[i].RunIn})
	}
	return out, nil
}
