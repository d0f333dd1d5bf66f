// Package tasks is the scheduler's persistence: scheduled tasks, their
// schedules (cron, interval, once, each in its own time zone) and their run
// logs, kept in jarvis's database (store.DB, storm/v3 on bbolt).
//
// Its central promise is that a slot runs once. A run starts with a claim:
// one write transaction that checks the task is still due for that slot,
// moves next_run past it and records the run. bbolt serialises write
// transactions, across processes too (one holds the file at a time), so two
// schedulers sharing the database can race for a slot and only one wins.
// Slots missed while nothing was running collapse into the claim: a task
// that should have run ten times overnight runs once in the morning.
//
// Due tasks are found through a storm index on their next run (in Unix
// nanoseconds), so the lookup is a B+tree seek, not a scan of every task.
//
// The package sits below the tools and the agents: the scheduler tools
// (tools/scheduler) and the loop that runs tasks (agent/scheduler) both use
// its types.
package tasks

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is where a task is in its life.
type Status string

// Task statuses. Only active tasks run on schedule.
const (
	Active    Status = "active"
	Paused    Status = "paused"
	Completed Status = "completed"
	Cancelled Status = "cancelled"
)

// Statuses lists every status, for flag checks and help texts.
var Statuses = []Status{Active, Paused, Completed, Cancelled}

// ParseStatus checks a status name; "" is allowed and means any.
func ParseStatus(s string) (Status, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", nil
	}
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown task status %q: use active, paused, completed or cancelled", s)
}

// Outcome is how a task's last run ended.
type Outcome string

// Run outcomes. OutcomeNone means the task never ran.
const (
	OutcomeNone        Outcome = ""
	OutcomeSuccess     Outcome = "success"
	OutcomeFailed      Outcome = "failed"
	OutcomeInterrupted Outcome = "interrupted"
)

// DefaultAgent runs a task when none is named.
const DefaultAgent = "simple"

// Task is a scheduled task as the tools, the CLI and the TUI see it. Times
// are in the task's zone; zero times mean "none" and are left out of JSON.
type Task struct {
	ID            string       `json:"id"`
	Prompt        string       `json:"prompt"`
	ScheduleType  ScheduleType `json:"schedule_type"`
	ScheduleValue string       `json:"schedule_value"`
	TimeZone      string       `json:"timezone"`
	Status        Status       `json:"status"`
	NextRun       time.Time    `json:"next_run,omitzero"`
	LastRun       time.Time    `json:"last_run,omitzero"`
	// LastOutcome, LastResult and LastError describe the last finished run;
	// LastResult is cut to SummaryLimit (the run log keeps the whole text).
	LastOutcome Outcome `json:"last_outcome,omitempty"`
	LastResult  string  `json:"last_result,omitempty"`
	LastError   string  `json:"last_error,omitempty"`
	// Running is true while a run of the task is in progress, in this
	// process or another one.
	Running bool   `json:"running"`
	Agent   string `json:"agent"`
	// Tools are the tools the agent gets; ApprovedTools those among them
	// that need confirmation and were approved when the task was created.
	// Any other call needing confirmation is denied in the task's runs.
	Tools         []string          `json:"tools"`
	ApprovedTools []string          `json:"approved_tools"`
	CreatedAt     time.Time         `json:"created_at"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

// Schedule returns the task's parsed schedule.
func (t Task) Schedule() (Schedule, error) {
	return ParseSchedule(t.ScheduleType, t.ScheduleValue, t.TimeZone)
}

// Describe puts the task's schedule in words ("every 1h"); a schedule that
// no longer parses (a zone removed from the system) is shown as stored.
func (t Task) Describe() string {
	s, err := t.Schedule()
	if err != nil {
		return fmt.Sprintf("%s %s (%s)", t.ScheduleType, t.ScheduleValue, t.TimeZone)
	}
	return s.Describe()
}

// NewTask is what creating a task takes.
type NewTask struct {
	Prompt        string
	ScheduleType  ScheduleType
	ScheduleValue string
	// TimeZone is an IANA name; "" means the local zone.
	TimeZone string
	// Agent defaults to DefaultAgent.
	Agent string
	Tools []string
	// ApprovedTools must be among Tools. Only a person approves: a task a
	// model creates through the schedule_task tool never has any.
	ApprovedTools []string
	Metadata      map[string]string
}

// Run is one run of a task, as its log shows it.
type Run struct {
	ID     int    `json:"id"`
	TaskID string `json:"task_id"`
	// Slot is the scheduled time the run was claimed for; zero for a run
	// started by hand.
	Slot       time.Time `json:"slot,omitzero"`
	Manual     bool      `json:"manual,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Success    bool      `json:"success"`
	Outcome    Outcome   `json:"outcome,omitempty"`
	Result     string    `json:"result"`
	Error      string    `json:"error"`
	// DeniedTools are the tools whose calls were refused because they need
	// confirmation and were not approved for the task.
	DeniedTools []string `json:"denied_tools,omitempty"`
}

// Finished reports whether the run has ended (or was found interrupted).
func (r Run) Finished() bool { return !r.FinishedAt.IsZero() }

// DeniedNote explains the denied calls for a log, or "" when none were.
func (r Run) DeniedNote() string {
	if len(r.DeniedTools) == 0 {
		return ""
	}
	return fmt.Sprintf("denied: %s (these tools need confirmation and were not approved for this task; create the task with --approve %s to allow them)",
		strings.Join(r.DeniedTools, ", "), strings.Join(r.DeniedTools, ","))
}

// Finish is how a run ended, as the scheduler reports it.
type Finish struct {
	At          time.Time
	Success     bool
	Result      string
	Error       string
	DeniedTools []string
	// Interrupted marks a run that did not get to report its own end.
	Interrupted bool
}

// Size limits: a run log keeps up to ResultLimit bytes of a result, a task
// shows SummaryLimit bytes of its last one, and KeepRuns rows per task are
// kept (the oldest are dropped), so a task running every minute does not
// grow the database without bound.
const (
	ResultLimit  = 64 * 1024
	SummaryLimit = 500
	KeepRuns     = 200
)

// NotFoundError says no task has the given id or id prefix.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return "Task not found: " + e.ID }

// AmbiguousError says an id prefix matches several tasks.
type AmbiguousError struct {
	Prefix  string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("task id prefix %q matches %d tasks (%s): give more characters of the id",
		e.Prefix, len(e.Matches), strings.Join(e.Matches, ", "))
}

// StateError says a transition is not possible from the task's status
// (resuming a cancelled task, say).
type StateError struct {
	ID  string
	Msg string
}

func (e *StateError) Error() string { return fmt.Sprintf("task %s %s", e.ID, e.Msg) }

// ErrSlotTaken is returned by a claim that lost: the slot was claimed by
// another scheduler, or the task changed (paused, cancelled, rescheduled)
// since it was seen due.
var ErrSlotTaken = errors.New("the slot was already claimed or the task changed")

// ErrRunning is returned when starting a run of a task that is running.
var ErrRunning = errors.New("the task is already running")

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return s[:i] + "…"
}
