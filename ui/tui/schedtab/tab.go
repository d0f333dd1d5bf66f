// Package schedtab is the TUI's Scheduler tab: the table of scheduled
// tasks with the selected task's details, and the modals to create a task,
// confirm a cancel and read a task's run log.
//
// It is a component in the Bubble Tea sense: a plain struct the TUI's one
// model owns and calls. The model decides when: it hands the tab its own
// messages (Update), keys while the side pane is focused on the tab or one
// of the tab's modals is open (Key), scheduler events (OnEvent), and asks
// it to draw (View, Modal) with the theme's styles. The tab never does IO
// in those calls: every scheduler call runs in a command that reports back
// with a message.
package schedtab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/tui/routed"
)

// Tab is the side pane's Scheduler tab: the task table with the
// selected task's details, and the modals to create a task, confirm a
// cancel and read a task's run log.
//
// It follows the TUI's rules: every scheduler call is IO, so it happens in
// a command that reports back with one of the sched*Msg messages below;
// key and view only change and read state. The list stays live through
// the scheduler's Watch channel (one command waits on it and is re-armed
// after each signal) and the scheduler events the model passes on.
// Relative times are refreshed by a tick that runs only while the tab is
// drawn, so an idle TUI with the tab hidden does no work at all.
type Tab struct {
	s         *scheduler.Scheduler
	validate  func(agent string, tools []string) error
	toolNames func() []string

	// ctx bounds every scheduler call and the runs started from the tab;
	// close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	watch      <-chan struct{}
	stopWatch  func()
	watchArmed bool // a command is waiting on watch

	list []scheduler.Task
	// owner is the dedicated scheduler this TUI leaves scheduled runs to,
	// when owned (as of the last List).
	owner   tasks.Peer
	owned   bool
	loaded  bool
	loadErr string
	loading bool // a List is in flight
	dirty   bool // something changed while it was
	table   taskTable
	busy    map[string]bool // runs started here, by task id, until RunNow returns

	status     string
	statusKind statusKind

	confirmID string // the task a cancel waits confirmation for
	form      *taskForm
	logs      *runLog

	// The tick: armed by activity, kept going only while view is called.
	ticking bool
	viewed  bool // view ran since the tick was armed
}

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusErr
)

// The tab's own messages.
type (
	// schedChangedMsg: the scheduler says tasks may have changed, or a
	// failed List is due to be retried.
	schedChangedMsg struct{ retry bool }
	// schedTickMsg refreshes relative times.
	schedTickMsg time.Time
	// schedListMsg carries a List result.
	schedListMsg struct {
		tasks []scheduler.Task
		owner tasks.Peer
		owned bool
		err   error
	}
	// schedChangeMsg is the end of a pause, resume or cancel.
	schedChangeMsg struct {
		verb string
		id   string
		task scheduler.Task
		err  error
	}
	// schedRunMsg is the end of a run started with g or enter.
	schedRunMsg struct {
		id  string
		run scheduler.Run
		err error
	}
	// schedCreatedMsg is the end of the form's Create.
	schedCreatedMsg struct {
		task scheduler.Task
		err  error
	}
	// schedLogsMsg carries a task's run log.
	schedLogsMsg struct {
		id   string
		task scheduler.Task
		runs []scheduler.Run
		err  error
	}
	// schedInputMsg wraps the form's text input messages (a paste), so
	// they come back to the form.
	schedInputMsg struct{ msg tea.Msg }
)

// Tick periods: every second while some shown time is under ten minutes
// away (scheduler.Relative shows seconds then), else every 30 seconds.
const (
	tickFast = time.Second
	tickSlow = 30 * time.Second
	// loadRetry spaces attempts to read the tasks after a failure.
	loadRetry = 5 * time.Second
)

// Options are what the tab works with.
type Options struct {
	// Scheduler is the scheduler the TUI runs.
	Scheduler *scheduler.Scheduler
	// Validate checks a task's agent and tool names (the form's errors);
	// nil accepts any.
	Validate func(agent string, tools []string) error
	// ToolNames lists the tools a task may use, for the form's hint.
	ToolNames func() []string
}

// New returns the tab. Init starts it; Close ends it.
func New(opts Options) *Tab {
	ctx, cancel := context.WithCancel(context.Background())
	return &Tab{s: opts.Scheduler, validate: opts.Validate, toolNames: opts.ToolNames, ctx: ctx, cancel: cancel, busy: map[string]bool{}}
}

// init loads the list and starts watching for changes.
func (t *Tab) Init() tea.Cmd {
	if t.watch == nil {
		t.watch, t.stopWatch = t.s.Watch()
	}
	return tea.Batch(t.reload(), t.waitChange())
}

// close stops watching and cancels the runs started from the tab (their
// ends are still recorded). The model calls it when the program ends.
func (t *Tab) Close() {
	t.cancel()
	if t.stopWatch != nil {
		t.stopWatch()
	}
}

func (t *Tab) ModalOpen() bool { return t.confirmID != "" || t.form != nil || t.logs != nil }

// waitChange waits for the next change signal (or close).
func (t *Tab) waitChange() tea.Cmd {
	ch, done := t.watch, t.ctx.Done()
	if ch == nil || t.watchArmed {
		return nil
	}
	t.watchArmed = true
	return func() tea.Msg {
		select {
		case <-ch:
			return schedChangedMsg{}
		case <-done:
			return nil
		}
	}
}

// reload lists the tasks, one List at a time: changes that arrive while
// one is in flight are covered by a single List after it.
func (t *Tab) reload() tea.Cmd {
	if t.loading {
		t.dirty = true
		return nil
	}
	t.loading = true
	s, ctx := t.s, t.ctx
	return func() tea.Msg {
		list, err := s.List(ctx, "")
		owner, owned := s.Owner()
		return schedListMsg{tasks: list, owner: owner, owned: owned, err: err}
	}
}

// loadLogs reads the open log modal's task and runs.
func (t *Tab) loadLogs() tea.Cmd {
	if t.logs == nil {
		return nil
	}
	s, ctx, id := t.s, t.ctx, t.logs.id
	return func() tea.Msg {
		task, runs, err := s.Logs(ctx, id, logRuns)
		return schedLogsMsg{id: id, task: task, runs: runs, err: err}
	}
}

// shown arms the refresh tick. Anything that happens in the tab calls it;
// the model should also call it when the tab is switched to, so relative
// times start moving at once. The tick keeps going only while view keeps
// being called: hidden, the tab stops ticking after one period.
func (t *Tab) Shown(now time.Time) tea.Cmd {
	if t.ticking {
		return nil
	}
	t.ticking, t.viewed = true, false
	return tea.Every(t.tickPeriod(now), func(at time.Time) tea.Msg { return schedTickMsg(at) })
}

// tickPeriod is fast only while a shown time has seconds in it.
func (t *Tab) tickPeriod(now time.Time) time.Duration {
	near := func(at time.Time) bool { return !at.IsZero() && at.Sub(now).Abs() < 10*time.Minute }
	for _, task := range t.list {
		if task.Running || t.busy[task.ID] || near(task.NextRun) || near(task.LastRun) {
			return tickFast
		}
	}
	return tickSlow
}

func (t *Tab) setStatus(kind statusKind, format string, args ...any) {
	t.status, t.statusKind = fmt.Sprintf(format, args...), kind
}

// onEvent reloads on scheduler events (scheduler_task_start / _end).
func (t *Tab) OnEvent(e events.Event) tea.Cmd {
	switch e.Type {
	case events.SchedulerTaskStart, events.SchedulerTaskEnd:
		return tea.Batch(t.reload(), t.loadLogs())
	}
	return nil
}

// update handles the tab's own messages; ok is false for any other.
func (t *Tab) Update(msg tea.Msg) (tea.Cmd, bool) {
	now := time.Now()
	switch msg := msg.(type) {
	case schedChangedMsg:
		if msg.retry {
			return t.reload(), true
		}
		t.watchArmed = false
		return tea.Batch(t.reload(), t.loadLogs(), t.waitChange()), true
	case schedTickMsg:
		t.ticking = false
		if !t.viewed {
			return nil, true // hidden: stop until something happens
		}
		return t.Shown(time.Time(msg)), true
	case schedListMsg:
		t.loading = false
		var again tea.Cmd
		if msg.err != nil {
			// The database may be held by another process for a while:
			// say so and try again, keeping the list last read.
			t.loadErr = "Cannot read the tasks (retrying in 5s): " + msg.err.Error()
			again = tea.Tick(loadRetry, func(time.Time) tea.Msg { return schedChangedMsg{retry: true} })
		} else {
			t.list, t.loaded, t.loadErr = msg.tasks, true, ""
		}
		t.owner, t.owned = msg.owner, msg.owned
		if t.dirty {
			t.dirty = false
			again = t.reload()
		}
		return tea.Batch(again, t.Shown(now)), true
	case schedChangeMsg:
		return t.changed(msg, now), true
	case schedRunMsg:
		delete(t.busy, msg.id)
		t.ranNow(msg)
		return tea.Batch(t.reload(), t.loadLogs(), t.Shown(now)), true
	case schedCreatedMsg:
		return t.created(msg, now), true
	case schedLogsMsg:
		if t.logs != nil && t.logs.id == msg.id {
			if msg.err != nil {
				t.logs.err = msg.err.Error()
			} else {
				t.logs.setRuns(msg.task, msg.runs)
			}
		}
		return nil, true
	case schedInputMsg:
		if t.form == nil {
			return nil, true
		}
		return wrapInput(t.form.input(msg.msg, now)), true
	}
	return nil, false
}

// changed applies the end of a pause, resume or cancel.
func (t *Tab) changed(msg schedChangeMsg, now time.Time) tea.Cmd {
	if msg.err != nil {
		t.setStatus(statusErr, "%s", describeErr(msg.err))
		return t.reload()
	}
	t.replace(msg.task)
	switch {
	case msg.verb == "resumed" && !msg.task.NextRun.IsZero():
		t.setStatus(statusOK, "Task %s resumed; next run %s (%s).", shortID(msg.task.ID),
			scheduler.Relative(msg.task.NextRun, now), runTime(msg.task.NextRun, now))
	default:
		t.setStatus(statusOK, "Task %s %s.", shortID(msg.task.ID), msg.verb)
	}
	return tea.Batch(t.reload(), t.Shown(now))
}

// ranNow reports how a run started from the tab ended.
func (t *Tab) ranNow(msg schedRunMsg) {
	id := shortID(msg.id)
	switch {
	case msg.err != nil && msg.run.ID == 0:
		t.setStatus(statusErr, "Cannot run task %s: %s", id, describeErr(msg.err))
	case msg.run.Success:
		took := format.Latency(msg.run.FinishedAt.Sub(msg.run.StartedAt).Seconds())
		t.setStatus(statusOK, "✓ Task %s ran in %s: %s", id, took, firstLine(msg.run.Result, "(no output)"))
	default:
		text := firstLine(msg.run.Error, "(no error message)")
		if msg.err != nil {
			text = describeErr(msg.err)
		}
		t.setStatus(statusErr, "✗ Task %s failed: %s", id, text)
	}
	if note := msg.run.DeniedNote(); note != "" && msg.err == nil {
		t.status += " · " + note
	}
}

// created closes the form on success and selects the new task; on failure
// the form stays open with the scheduler's reason.
func (t *Tab) created(msg schedCreatedMsg, now time.Time) tea.Cmd {
	if msg.err != nil {
		if t.form != nil {
			t.form.busy, t.form.failure = false, describeErr(msg.err)
			return nil
		}
		t.setStatus(statusErr, "The task was not created: %s", describeErr(msg.err))
		return nil
	}
	t.form = nil
	t.replace(msg.task)
	t.table.selID = msg.task.ID
	next := "none"
	if !msg.task.NextRun.IsZero() {
		next = scheduler.Relative(msg.task.NextRun, now) + " (" + runTime(msg.task.NextRun, now) + ")"
	}
	t.setStatus(statusOK, "Created task %s, %s; next run %s.", shortID(msg.task.ID), msg.task.Describe(), next)
	return tea.Batch(t.reload(), t.Shown(now))
}

// replace puts a task returned by a change into the list at once, so the
// table shows it before the reload that follows lands.
func (t *Tab) replace(task scheduler.Task) {
	for i := range t.list {
		if t.list[i].ID == task.ID {
			t.list[i] = task
			return
		}
	}
	t.list = append(t.list, task)
}

// describeErr words the scheduler's errors for the status line.
func describeErr(err error) string {
	if errors.Is(err, scheduler.ErrNoRunner) {
		return "this scheduler cannot run tasks (it has no runner)"
	}
	if errors.Is(err, context.Canceled) {
		return "stopped: the TUI is closing"
	}
	return err.Error()
}

func firstLine(s, empty string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return empty
	}
	return line
}

// wrapInput routes the form's text input commands back through the tab.
func wrapInput(cmd tea.Cmd) tea.Cmd {
	return routed.Tag(cmd, func(msg tea.Msg) tea.Msg { return schedInputMsg{msg: msg} })
}

// key handles a key: the open modal's, or the table's when the pane is
// focused on the tab.
func (t *Tab) Key(k tea.KeyMsg, now time.Time) tea.Cmd {
	tick := t.Shown(now)
	switch {
	case t.confirmID != "":
		return tea.Batch(tick, t.confirmKey(k))
	case t.form != nil:
		return tea.Batch(tick, t.formKey(k, now))
	case t.logs != nil:
		if t.logs.key(k) {
			t.logs = nil
		}
		return tick
	}
	rows, _ := t.table.visible(t.list)
	t.table.sync(rows)
	switch k.String() {
	case "up", "k":
		t.table.move(rows, -1)
	case "down", "j":
		t.table.move(rows, 1)
	case "pgup", "ctrl+u":
		t.table.move(rows, -10)
	case "pgdown", "ctrl+d":
		t.table.move(rows, 10)
	case "home":
		t.table.move(rows, -len(rows))
	case "end":
		t.table.move(rows, len(rows))
	case "f":
		t.table.hideDone = !t.table.hideDone
	case "n":
		t.status = ""
		t.form = newTaskForm(t.validate, t.toolNames, t.s.Options().Timeout, now)
	case "p", "r", "x", "enter", "g", "l":
		task, ok := t.table.selected(rows)
		if !ok {
			t.setStatus(statusErr, "No task selected: press n to create one.")
			return tick
		}
		t.status = ""
		return tea.Batch(tick, t.act(k.String(), task))
	}
	return tick
}

// act starts what a key asks for on the selected task.
func (t *Tab) act(key string, task scheduler.Task) tea.Cmd {
	id := shortID(task.ID)
	switch key {
	case "p":
		if task.Status == tasks.Paused {
			t.setStatus(statusInfo, "Task %s is already paused; r resumes it.", id)
			return nil
		}
		return t.change("paused", task.ID, t.s.Pause)
	case "r":
		if task.Status == tasks.Active {
			t.setStatus(statusInfo, "Task %s is already active.", id)
			return nil
		}
		return t.change("resumed", task.ID, t.s.Resume)
	case "x":
		switch task.Status {
		case tasks.Cancelled:
			t.setStatus(statusInfo, "Task %s is already cancelled.", id)
		case tasks.Completed:
			t.setStatus(statusInfo, "Task %s has completed; there is nothing left to cancel.", id)
		default:
			t.confirmID = task.ID
		}
		return nil
	case "l":
		t.logs = &runLog{id: task.ID}
		return t.loadLogs()
	}
	// enter, g: run now.
	if task.Running || t.busy[task.ID] {
		t.setStatus(statusInfo, "Task %s is already running.", id)
		return nil
	}
	t.busy[task.ID] = true
	t.setStatus(statusInfo, "Running task %s…", id)
	s, ctx, full := t.s, t.ctx, task.ID
	return func() tea.Msg {
		run, err := s.RunNow(ctx, full)
		return schedRunMsg{id: full, run: run, err: err}
	}
}

// change runs a pause, resume or cancel.
func (t *Tab) change(verb, id string, fn func(context.Context, string) (scheduler.Task, error)) tea.Cmd {
	ctx := t.ctx
	return func() tea.Msg {
		task, err := fn(ctx, id)
		return schedChangeMsg{verb: verb, id: id, task: task, err: err}
	}
}

// confirmKey answers "Cancel task ID for good? y/n". Only y cancels; n,
// esc and ctrl+c keep the task; other keys are ignored, so a stray key
// neither cancels nor hides the question.
func (t *Tab) confirmKey(k tea.KeyMsg) tea.Cmd {
	id := t.confirmID
	switch k.String() {
	case "y", "Y":
		t.confirmID = ""
		return t.change("cancelled", id, t.s.Cancel)
	case "n", "N", "esc", "ctrl+c", "q":
		t.confirmID = ""
		t.setStatus(statusInfo, "Task %s kept.", shortID(id))
	}
	return nil
}

func (t *Tab) formKey(k tea.KeyMsg, now time.Time) tea.Cmd {
	action, cmd := t.form.key(k, now)
	switch action {
	case formClose:
		t.form = nil
		return nil
	case formSubmit:
		s, ctx, nt := t.s, t.ctx, t.form.newTask()
		return func() tea.Msg {
			task, err := s.Create(ctx, nt)
			return schedCreatedMsg{task: task, err: err}
		}
	}
	return wrapInput(cmd)
}
