package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/asdine/storm/v3"
	"github.com/asdine/storm/v3/index"

	"github.com/jarvis-workbench/jarvis/store"
)

// root is the storm bucket under which the scheduler keeps its records.
const root = "scheduler"

// taskRow is a task as stored. Its type and field names are the database
// format: storm names buckets and indexes after them.
//
// Indexes are chosen so that no write scans many entries: storm's list index
// checks every id stored under a value when a record is saved, so a
// low-cardinality index (status) would make each save O(tasks). Due holds
// one distinct value per task, Owner a value per running scheduler.
type taskRow struct {
	ID string `storm:"id"`
	// Ref repeats the id: storm cannot seek on the primary key, and id
	// prefix lookups need a seek.
	Ref           string `storm:"index"`
	Prompt        string
	ScheduleType  ScheduleType
	ScheduleValue string
	Zone          string
	Status        Status
	NextRun       time.Time
	// Due is the key of the due-task index: the next run in Unix
	// nanoseconds as 16 hex digits, then the id, so keys sort by time and
	// are unique. It is empty (and out of the index) unless the task is
	// active, has a next run and is not running.
	Due         string `storm:"index"`
	LastRun     time.Time
	LastOutcome Outcome
	LastResult  string
	LastError   string
	// Owner names the scheduler running the task (see Claim.Owner), empty
	// when no run is in progress; RunID is that run's log row.
	Owner string `storm:"index"`
	RunID int
	// RunIn is the process running the task while Owner is set.
	RunIn     Process
	Agent     string
	Tools     []string
	Approved  []string
	Server    Server
	Timeout   time.Duration
	CreatedAt time.Time
	Metadata  map[string]string
}

// runRow is a run log row as stored. Each task's rows live in a bucket of
// their own (see runs), so a task's log is bounded by KeepRuns and no
// claim or prune touches another task's log: storm keeps a unique index on
// ids whose maintenance scans the bucket on every insert and delete.
type runRow struct {
	ID         int `storm:"id,increment"`
	TaskID     string
	Slot       time.Time
	Manual     bool
	Owner      string
	StartedAt  time.Time
	FinishedAt time.Time
	Success    bool
	Outcome    Outcome
	Result     string
	Error      string
	Denied     []string
	Process    Process
	Server     Server
}

// dueKey computes the row's Due value from its state.
func (r *taskRow) dueKey() string {
	if r.Status != Active || r.NextRun.IsZero() || r.Owner != "" {
		return ""
	}
	return fmt.Sprintf("%016x", clampNanos(r.NextRun)) + r.ID
}

// runs is the node holding one task's run log, under the scheduler root.
func runs(n storm.Node, taskID string) storm.Node { return n.From("runs", taskID) }

// Store keeps tasks and run logs in a store.DB. It is safe for concurrent
// use, also by several processes on one file.
type Store struct {
	db *store.DB
}

// New returns a Store on db.
func New(db *store.DB) *Store { return &Store{db: db} }

// DB returns the database the store uses.
func (s *Store) DB() *store.DB { return s.db }

func (s *Store) view(fn func(n storm.Node) error) error {
	return s.db.View(func(n storm.Node) error { return fn(n.From(root)) })
}

func (s *Store) update(fn func(n storm.Node) error) error {
	return s.db.Update(func(n storm.Node) error { return fn(n.From(root)) })
}

// notFound reports whether err is storm's "nothing there" in any of its
// forms (an empty result, or a bucket or index not created yet).
func notFound(err error) bool {
	return errors.Is(err, storm.ErrNotFound) || errors.Is(err, index.ErrNotFound)
}

// Validate checks a new task without storing it and returns its schedule
// and first run. It is what Create checks, for forms that validate as the
// person types.
func Validate(nt NewTask, now time.Time) (Schedule, time.Time, error) {
	if strings.TrimSpace(nt.Prompt) == "" {
		return Schedule{}, time.Time{}, errors.New("the prompt is empty: say what the task should do")
	}
	sched, err := ParseScheduleAt(nt.ScheduleType, nt.ScheduleValue, nt.TimeZone, now)
	if err != nil {
		return Schedule{}, time.Time{}, err
	}
	if err := CheckTimeout(nt.Timeout); err != nil {
		return Schedule{}, time.Time{}, err
	}
	first, err := sched.First(now)
	if err != nil {
		return Schedule{}, time.Time{}, err
	}
	tools := cleanList(nt.Tools)
	for _, a := range cleanList(nt.ApprovedTools) {
		if !slices.Contains(tools, a) {
			return Schedule{}, time.Time{}, fmt.Errorf("approved tool %q is not one of the task's tools (%s): add it to the tools or leave it out of the approvals", a, listOrNone(tools))
		}
	}
	return sched, first, nil
}

// Create stores a new active task whose first run is computed from now.
// Nothing is stored when the task is invalid.
func (s *Store) Create(nt NewTask, now time.Time) (Task, error) {
	sched, first, err := Validate(nt, now)
	if err != nil {
		return Task{}, err
	}
	row := taskRow{
		Prompt:        strings.TrimSpace(nt.Prompt),
		ScheduleType:  sched.Type,
		ScheduleValue: sched.Value,
		Zone:          sched.Zone,
		Status:        Active,
		NextRun:       first.UTC(),
		Agent:         AgentFor(nt.Agent, nt.Tools),
		Tools:         cleanList(nt.Tools),
		Approved:      cleanList(nt.ApprovedTools),
		Server:        Server{Engine: strings.TrimSpace(nt.Server.Engine), Host: strings.TrimSpace(nt.Server.Host), Model: strings.TrimSpace(nt.Server.Model)},
		Timeout:       nt.Timeout,
		CreatedAt:     now.UTC(),
		Metadata:      nt.Metadata,
	}
	err = s.update(func(n storm.Node) error {
		for range 8 {
			id, err := newID()
			if err != nil {
				return err
			}
			var existing taskRow
			if err := n.One("ID", id, &existing); notFound(err) {
				row.ID, row.Ref = id, id
				row.Due = row.dueKey()
				return n.Save(&row)
			} else if err != nil {
				return err
			}
		}
		return errors.New("could not draw an unused task id")
	})
	if err != nil {
		return Task{}, err
	}
	return row.task(), nil
}

// newID draws 16 hex characters from crypto/rand.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot draw a task id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// resolve finds the task whose id is ref or starts with ref.
func resolve(n storm.Node, ref string) (taskRow, error) {
	given := strings.TrimSpace(ref)
	ref = strings.ToLower(given)
	var row taskRow
	if ref == "" || strings.Trim(ref, "0123456789abcdef") != "" {
		return row, &NotFoundError{ID: given}
	}
	if len(ref) == 16 {
		err := n.One("ID", ref, &row)
		if notFound(err) {
			return row, &NotFoundError{ID: given}
		}
		return row, err
	}
	var rows []taskRow
	if err := n.Prefix("Ref", ref, &rows, storm.Limit(11)); err != nil && !notFound(err) {
		return row, err
	}
	switch len(rows) {
	case 0:
		return row, &NotFoundError{ID: given}
	case 1:
		return rows[0], nil
	}
	ids := make([]string, 0, len(rows))
	for i, r := range rows {
		if i == 10 {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, r.ID)
	}
	return row, &AmbiguousError{Prefix: ref, Matches: ids}
}

// Get returns the task whose id is ref or starts with ref.
func (s *Store) Get(ref string) (Task, error) {
	var row taskRow
	err := s.view(func(n storm.Node) (err error) {
		row, err = resolve(n, ref)
		return err
	})
	if err != nil {
		return Task{}, err
	}
	return row.task(), nil
}

// List returns the tasks with the given status ("" for all): those with a
// next run first, soonest first, then the rest, newest first.
func (s *Store) List(status Status) ([]Task, error) {
	var rows []taskRow
	if err := s.view(func(n storm.Node) error { return n.All(&rows) }); err != nil && !notFound(err) {
		return nil, err
	}
	out := make([]Task, 0, len(rows))
	for i := range rows {
		if status == "" || rows[i].Status == status {
			out = append(out, rows[i].task())
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.NextRun.IsZero() != b.NextRun.IsZero() {
			return !a.NextRun.IsZero()
		}
		if !a.NextRun.Equal(b.NextRun) {
			return a.NextRun.Before(b.NextRun)
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
	return out, nil
}

// change applies fn to the task ref in one write transaction and saves it.
func (s *Store) change(ref string, fn func(r *taskRow) error) (Task, error) {
	var row taskRow
	err := s.update(func(n storm.Node) error {
		var err error
		if row, err = resolve(n, ref); err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return err
		}
		row.Due = row.dueKey()
		return n.Save(&row)
	})
	if err != nil {
		return Task{}, err
	}
	return row.task(), nil
}

// Pause stops an active task from running until it is resumed. Pausing a
// paused task does nothing; a completed or cancelled one cannot be paused.
func (s *Store) Pause(ref string) (Task, error) {
	return s.change(ref, func(r *taskRow) error {
		switch r.Status {
		case Paused:
			return nil
		case Active:
			r.Status, r.NextRun = Paused, time.Time{}
			return nil
		}
		return &StateError{ID: r.ID, Msg: fmt.Sprintf("is %s; only an active task can be paused", r.Status)}
	})
}

// Resume makes a paused task active again with its next run computed from
// now (slots that passed while it was paused are not made up). A once task
// whose time has passed cannot be resumed. Resuming an active task does
// nothing.
func (s *Store) Resume(ref string, now time.Time) (Task, error) {
	return s.change(ref, func(r *taskRow) error {
		switch r.Status {
		case Active:
			return nil
		case Paused:
		default:
			return &StateError{ID: r.ID, Msg: fmt.Sprintf("is %s; only a paused task can be resumed (create a new task instead)", r.Status)}
		}
		sched, err := ParseSchedule(r.ScheduleType, r.ScheduleValue, r.Zone)
		if err != nil {
			return fmt.Errorf("task %s cannot be resumed: its schedule no longer parses: %w", r.ID, err)
		}
		next, err := sched.First(now)
		if err != nil {
			return &StateError{ID: r.ID, Msg: "cannot be resumed: " + err.Error()}
		}
		r.Status, r.NextRun = Active, next.UTC()
		return nil
	})
}

// Cancel ends a task for good and clears its next run. A run in progress is
// not stopped here: the scheduler running it notices the change and stops
// it. Cancelling a cancelled task does nothing; a completed one cannot be
// cancelled.
func (s *Store) Cancel(ref string) (Task, error) {
	return s.change(ref, func(r *taskRow) error {
		switch r.Status {
		case Cancelled:
			return nil
		case Completed:
			return &StateError{ID: r.ID, Msg: "has completed; there is nothing left to cancel"}
		}
		r.Status, r.NextRun = Cancelled, time.Time{}
		return nil
	})
}

// Logs returns the task ref and its last n runs, newest first (n <= 0: all
// that are kept).
func (s *Store) Logs(ref string, n int) (Task, []Run, error) {
	var row taskRow
	var rows []runRow
	err := s.view(func(node storm.Node) error {
		var err error
		if row, err = resolve(node, ref); err != nil {
			return err
		}
		opts := []func(*index.Options){storm.Reverse()}
		if n > 0 {
			opts = append(opts, storm.Limit(n))
		}
		if err := runs(node, row.ID).All(&rows, opts...); err != nil && !notFound(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return Task{}, nil, err
	}
	out := make([]Run, len(rows))
	for i := range rows {
		out[i] = rows[i].public()
	}
	return row.task(), out, nil
}

// Statuses returns the status of each task in ids that still exists, in
// one read: what a scheduler checks to notice that a task it is running
// was cancelled or paused by another process.
func (s *Store) Statuses(ids []string) (map[string]Status, error) {
	out := make(map[string]Status, len(ids))
	err := s.view(func(n storm.Node) error {
		for _, id := range ids {
			var row taskRow
			if err := n.One("ID", id, &row); notFound(err) {
				continue
			} else if err != nil {
				return err
			}
			out[id] = row.Status
		}
		return nil
	})
	return out, err
}

func (r *taskRow) loc() *time.Location {
	loc, _, err := LoadZone(r.Zone)
	if err != nil {
		return time.UTC
	}
	return loc
}

func (r *taskRow) task() Task {
	loc := r.loc()
	in := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.In(loc)
	}
	return Task{
		ID:            r.ID,
		Prompt:        r.Prompt,
		ScheduleType:  r.ScheduleType,
		ScheduleValue: r.ScheduleValue,
		TimeZone:      r.Zone,
		Status:        r.Status,
		NextRun:       in(r.NextRun),
		LastRun:       in(r.LastRun),
		LastOutcome:   r.LastOutcome,
		LastResult:    r.LastResult,
		LastError:     r.LastError,
		Running:       r.Owner != "",
		RunningIn:     runningIn(r),
		Agent:         r.Agent,
		Tools:         nonNil(r.Tools),
		ApprovedTools: nonNil(r.Approved),
		Server:        r.Server,
		Timeout:       r.Timeout,
		CreatedAt:     in(r.CreatedAt),
		Metadata:      r.Metadata,
	}
}

func runningIn(r *taskRow) *Process {
	if r.Owner == "" || r.RunIn.IsZero() {
		return nil
	}
	p := r.RunIn
	return &p
}

func (r *runRow) public() Run {
	return Run{
		ID:          r.ID,
		TaskID:      r.TaskID,
		Slot:        r.Slot,
		Manual:      r.Manual,
		StartedAt:   r.StartedAt,
		FinishedAt:  r.FinishedAt,
		Success:     r.Success,
		Outcome:     r.Outcome,
		Result:      r.Result,
		Error:       r.Error,
		DeniedTools: r.Denied,
		Process:     r.Process,
		Server:      r.Server,
	}
}

// cleanList trims names and drops blanks and repeats, keeping the order.
func cleanList(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
