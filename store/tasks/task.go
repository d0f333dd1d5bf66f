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
// A task records the model server it runs on and its time limit; a run
// records the process that claimed it and the server it ran on. A slot no
// scheduler could serve is recorded as skipped by a claim and its end in
// one transaction, so it too happens once. Serving schedulers keep an entry
// each among the peers (a heartbeat), so each can see the others.
//
// The package sits below the tools and the agents: the scheduler tools
// (tools/scheduler) and the loop that runs tasks (agent/scheduler) both use
// its types.
package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	OutcomeNone    Outcome = ""
	OutcomeSuccess Outcome = "success"
	OutcomeFailed  Outcome = "failed"
	// OutcomeInterrupted: the run's process stopped or died before the run
	// could report its end.
	OutcomeInterrupted Outcome = "interrupted"
	// OutcomeTimedOut: the run went past its time limit and was stopped.
	OutcomeTimedOut Outcome = "timed_out"
	// OutcomeCancelled: the task was cancelled or paused while it ran, and
	// the run was stopped.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeSkipped: the slot passed without a run because no scheduler
	// could reach the task's server.
	OutcomeSkipped Outcome = "skipped"
)

// Agents that run a task when none is named: DefaultAgent for a task
// without tools, ToolsAgent for one with tools (the simple agent never
// calls a tool).
const (
	DefaultAgent = "simple"
	ToolsAgent   = "orchestrator"
)

// AgentFor returns the agent a task runs with: the one named, else the
// default for whether it has tools.
func AgentFor(agent string, tools []string) string {
	if a := strings.TrimSpace(agent); a != "" {
		return a
	}
	if len(cleanList(tools)) > 0 {
		return ToolsAgent
	}
	return DefaultAgent
}

// Time limits of a run. A task whose Timeout is zero gets the limit of the
// scheduler that runs it (DefaultTimeout unless configured otherwise).
const (
	DefaultTimeout = 10 * time.Minute
	MinTimeout     = time.Second
	MaxTimeout     = 7 * 24 * time.Hour
)

// CheckTimeout checks a task's run time limit (zero: the default).
func CheckTimeout(d time.Duration) error {
	switch {
	case d == 0:
		return nil
	case d < MinTimeout:
		return fmt.Errorf("the time limit must be at least 1s, got %s", d)
	case d > MaxTimeout:
		return fmt.Errorf("the time limit %s is longer than the maximum of 7 days", d)
	}
	return nil
}

// Server is the model server a task runs on: the kind of engine that
// speaks to it ("ollama"), its base URL and the model, when one was set.
// A task created before tasks recorded their server has the zero Server
// and runs on the server of whichever scheduler claims it.
type Server struct {
	Engine string `json:"engine"`
	Host   string `json:"host"`
	Model  string `json:"model,omitempty"`
}

// IsZero reports whether no server is recorded.
func (s Server) IsZero() bool { return s.Engine == "" && s.Host == "" }

// Key identifies the server for reachability: the model does not matter.
func (s Server) Key() string { return s.Engine + " " + s.Host }

// String is how logs show the server: "ollama http://gpu:11434 · qwen3:8b".
func (s Server) String() string {
	if s.IsZero() {
		return "none"
	}
	out := strings.TrimSpace(s.Engine + " " + s.Host)
	if s.Model != "" {
		out += " · " + s.Model
	}
	return out
}

// Process names a jarvis process that claimed a run: the machine, the
// pid and what it was (tui, scheduler start, scheduler run).
type Process struct {
	Machine string `json:"machine,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Command string `json:"command,omitempty"`
}

// IsZero reports whether no process is recorded (runs from before logs
// named their process).
func (p Process) IsZero() bool { return p.PID == 0 && p.Command == "" }

// String is how logs show the process: "scheduler start (pid 4242)", with
// the machine when it is not this one.
func (p Process) String() string {
	if p.IsZero() {
		return "unknown process"
	}
	cmd := p.Command
	if cmd == "" {
		cmd = "jarvis"
	}
	out := fmt.Sprintf("%s (pid %d", cmd, p.PID)
	if host, _ := os.Hostname(); p.Machine != "" && p.Machine != host {
		out += " on " + p.Machine
	}
	return out + ")"
}

// ThisProcess describes the calling process as command.
func ThisProcess(command string) Process {
	host, _ := os.Hostname()
	return Process{Machine: host, PID: os.Getpid(), Command: command}
}

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
	// process or another one; RunningIn is the process running it.
	Running   bool     `json:"running"`
	RunningIn *Process `json:"running_in,omitempty"`
	Agent     string   `json:"agent"`
	// Tools are the tools the agent gets; ApprovedTools those among them
	// that need confirmation and were approved when the task was created.
	// Any other call needing confirmation is denied in the task's runs.
	Tools         []string `json:"tools"`
	ApprovedTools []string `json:"approved_tools"`
	// Server is the model server the task runs on (zero for a task created
	// before tasks recorded one).
	Server Server `json:"server,omitzero"`
	// Timeout limits each run; zero means the running scheduler's default.
	// JSON writes it as a duration ("10m0s"), empty for the default.
	Timeout   time.Duration     `json:"-"`
	CreatedAt time.Time         `json:"created_at"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// taskJSON is Task as JSON, with the timeout in words.
type taskJSON struct {
	plainTask
	Timeout string `json:"timeout,omitempty"`
}

type plainTask Task

// MarshalJSON writes the timeout as a duration ("10m0s").
func (t Task) MarshalJSON() ([]byte, error) {
	j := taskJSON{plainTask: plainTask(t)}
	if t.Timeout > 0 {
		j.Timeout = t.Timeout.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Task) UnmarshalJSON(b []byte) error {
	var j taskJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = Task(j.plainTask)
	if j.Timeout != "" {
		d, err := time.ParseDuration(j.Timeout)
		if err != nil {
			return fmt.Errorf("task timeout %q: %w", j.Timeout, err)
		}
		t.Timeout = d
	}
	return nil
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
	// Agent defaults to AgentFor(Agent, Tools).
	Agent string
	Tools []string
	// ApprovedTools must be among Tools. Only a person approves: a task a
	// model creates through the schedule_task tool never has any.
	ApprovedTools []string
	// Server is the model server the task is for (the creating process's).
	Server Server
	// Timeout limits each run (zero: the default of the scheduler that
	// runs it).
	Timeout  time.Duration
	Metadata map[string]string
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
	// Process is the jarvis process that claimed the run, Server the model
	// server it ran on (the model filled in once the run picked one).
	Process Process `json:"process,omitzero"`
	Server  Server  `json:"server,omitzero"`
}

// Finished reports whether the run has ended (or was found interrupted).
func (r Run) Finished() bool { return !r.FinishedAt.IsZero() }

// OutcomeOrGuess returns the run's outcome; rows written before outcomes
// were recorded get theirs from Success.
func (r Run) OutcomeOrGuess() Outcome {
	switch {
	case r.Outcome != OutcomeNone || !r.Finished():
		return r.Outcome
	case r.Success:
		return OutcomeSuccess
	}
	return OutcomeFailed
}

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
	// Outcome, when set, says how a run that did not succeed ended
	// (OutcomeTimedOut, OutcomeCancelled); otherwise it follows from
	// Success and Interrupted.
	Outcome Outcome
	// Model is the model the run used, when the task named none.
	Model string
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
