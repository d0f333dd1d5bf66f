package schedtab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/tools"
)

// schedDriver runs a Tab the way the program would: it executes the
// commands the tab returns, each in its own goroutine, and feeds their
// messages back to update. Two of the tab's commands wait by design (the
// change watcher and the refresh tick); they are told apart by their code
// and not waited for, so settle returns once the tab has finished
// everything else it started.
type schedDriver struct {
	t       *testing.T
	tab     *Tab
	s       *scheduler.Scheduler
	db      *store.DB
	st      Styles
	msgs    chan driven
	pending int // commands that end on their own
	waiting int // the watcher and the tick
	long    map[uintptr]bool
}

type driven struct {
	msg  tea.Msg
	long bool
}

func codeOf(cmd tea.Cmd) uintptr { return reflect.ValueOf(cmd).Pointer() }

var testTools = []string{"calculator", "code_interpreter", "file_read"}

// testServer is the server the driver's scheduler is configured for.
var testServer = tasks.Server{Engine: "ollama", Host: "http://127.0.0.1:11434", Model: "qwen3:8b"}

func testValidate(agentName string, names []string) error {
	if !slices.Contains(agent.Names, agentName) {
		return fmt.Errorf("unknown agent %q", agentName)
	}
	for _, n := range names {
		if !slices.Contains(testTools, n) {
			return fmt.Errorf("unknown tool %q: the tools are %s", n, strings.Join(testTools, ", "))
		}
	}
	return nil
}

func newSchedDriver(t *testing.T, runner scheduler.RunnerFunc) *schedDriver {
	t.Helper()
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.Ascii)
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if runner == nil {
		runner = func(context.Context, scheduler.Task, tools.Confirmer) (string, error) { return "done", nil }
	}
	s := scheduler.New(db, scheduler.Options{Runner: runner, Validate: testValidate, Command: "tui", Server: testServer})
	theme, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	st := StylesOf(theme)
	d := &schedDriver{t: t, s: s, st: st, db: db, msgs: make(chan driven, 64),
		tab: New(Options{Scheduler: s, Validate: testValidate, ToolNames: func() []string { return testTools }})}
	// Closures made by one function literal share their code pointer.
	probe := &Tab{watch: make(chan struct{}), ctx: context.Background()}
	d.long = map[uintptr]bool{
		codeOf(probe.waitChange()): true,
		codeOf(tea.Every(time.Hour, func(time.Time) tea.Msg { return nil })): true,
		codeOf(tea.Tick(time.Hour, func(time.Time) tea.Msg { return nil })):  true,
	}
	// Close first, then let commands still in flight end before the
	// database closes and the directory is removed.
	t.Cleanup(func() {
		d.tab.Close()
		d.settle()
	})
	d.run(d.tab.Init())
	d.settle()
	return d
}

func (d *schedDriver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	long := d.long[codeOf(cmd)]
	if long {
		d.waiting++
	} else {
		d.pending++
	}
	go func() { d.msgs <- driven{msg: cmd(), long: long} }()
}

func (d *schedDriver) feed(msg tea.Msg) {
	switch m := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range m {
			d.run(c)
		}
	default:
		cmd, ok := d.tab.Update(msg)
		if !ok {
			d.t.Fatalf("the tab did not take its own message %T", msg)
		}
		d.run(cmd)
	}
}

// next waits for one command to end and feeds its message.
func (d *schedDriver) next(what string) {
	d.t.Helper()
	select {
	case r := <-d.msgs:
		if r.long {
			d.waiting--
		} else {
			d.pending--
		}
		d.feed(r.msg)
	case <-time.After(10 * time.Second):
		d.t.Fatalf("timed out waiting for %s", what)
	}
}

// settle waits until every command but the watcher and the tick ended.
func (d *schedDriver) settle() {
	d.t.Helper()
	for d.pending > 0 {
		d.next("the tab's commands")
	}
}

// await feeds messages until cond holds (for changes made outside the
// tab, which arrive through the watcher).
func (d *schedDriver) await(what string, cond func() bool) {
	d.t.Helper()
	for !cond() {
		d.next(what)
	}
}

func keyOf(s string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"ctrl+s": tea.KeyCtrlS, "ctrl+u": tea.KeyCtrlU, "backspace": tea.KeyBackspace,
	}
	if k, ok := special[s]; ok {
		return tea.KeyMsg{Type: k}
	}
	if s == " " {
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// press sends keys one at a time, letting each key's work finish.
func (d *schedDriver) press(keys ...string) {
	d.t.Helper()
	for _, k := range keys {
		d.send(k)
		d.settle()
	}
}

// send sends a key and leaves its work running.
func (d *schedDriver) send(k string) { d.run(d.tab.Key(keyOf(k), time.Now())) }

// typeText types s character by character, as a person would.
func (d *schedDriver) typeText(s string) {
	d.t.Helper()
	for _, r := range s {
		d.press(string(r))
	}
}

// screen is the tab at the given size, checked to fit, without styling.
func (d *schedDriver) screen(width, height int) string {
	d.t.Helper()
	lines := d.tab.View(d.st, width, height, time.Now())
	if len(lines) > height {
		d.t.Errorf("the tab drew %d lines in a height of %d", len(lines), height)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			d.t.Errorf("line wider than %d (%d): %q", width, w, ansi.Strip(l))
		}
	}
	return ansi.Strip(strings.Join(lines, "\n"))
}

// modal is the open modal at the given screen size, checked to fit.
func (d *schedDriver) modal(width, height int) string {
	d.t.Helper()
	box, ok := d.tab.Modal(d.st, width, height, time.Now())
	if !ok {
		d.t.Fatal("no modal is open")
	}
	for _, l := range strings.Split(box, "\n") {
		if w := ansi.StringWidth(l); w > width {
			d.t.Errorf("modal line wider than %d (%d): %q", width, w, ansi.Strip(l))
		}
	}
	return ansi.Strip(box)
}

func (d *schedDriver) create(nt scheduler.NewTask) scheduler.Task {
	d.t.Helper()
	task, err := d.s.Create(context.Background(), nt)
	if err != nil {
		d.t.Fatal(err)
	}
	d.await("the new task in the table", func() bool {
		return slices.ContainsFunc(d.tab.list, func(x scheduler.Task) bool { return x.ID == task.ID })
	})
	return task
}

func (d *schedDriver) status(id string) tasks.Status {
	d.t.Helper()
	task, err := d.s.Get(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return task.Status
}

func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}

func TestSchedTabListsTasksLive(t *testing.T) {
	d := newSchedDriver(t, nil)
	mustContain(t, d.screen(64, 20), "No scheduled tasks. Press n")

	// Created outside the tab: the watcher brings them in.
	a := d.create(scheduler.NewTask{Prompt: "check the mail", ScheduleType: tasks.Interval, ScheduleValue: "3600", TimeZone: "UTC"})
	// The cron task's hour is half a day from now, so it always runs after
	// the hourly one whatever the time the test runs at.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	cron := fmt.Sprintf("0 %d * * 1-5", (time.Now().In(paris).Hour()+12)%24)
	b := d.create(scheduler.NewTask{Prompt: "morning report", ScheduleType: tasks.Cron, ScheduleValue: cron, TimeZone: "Europe/Paris"})

	wide := d.screen(110, 30)
	mustContain(t, wide, "ID", "STATUS", "NEXT", "SCHEDULE", "PROMPT",
		shortID(a.ID), shortID(b.ID), "active", "every 1h", "in 1h", "never",
		"cron "+cron+" (Europe/Paris)", "check the mail", "morning report")
	// The first row (soonest next run) is selected and described in full.
	mustContain(t, wide, "Task     "+a.ID, "Zone     UTC", "Agent    simple · tools: none")
	if n := strings.Count(wide, "UTC (in 1h)"); n != 1 {
		t.Errorf("the next run should show once with its relative time, got %d in:\n%s", n, wide)
	}

	// j moves the selection, and the details follow.
	d.press("j")
	mustContain(t, d.screen(110, 30), "Task     "+b.ID, "Zone     Europe/Paris")
	// The selection stays on the task when the list reloads.
	d.create(scheduler.NewTask{Prompt: "third", ScheduleType: tasks.Interval, ScheduleValue: "60"})
	mustContain(t, d.screen(110, 30), "Task     "+b.ID)
}

func TestSchedTabCreateFormValidatesAndCreates(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.press("n")
	if !d.tab.ModalOpen() {
		t.Fatal("n did not open the form")
	}
	form := d.modal(100, 40)
	mustContain(t, form, "New scheduled task", "Prompt", "Schedule", "Value", "Time zone", "Agent", "Tools", "Approve",
		"type a prompt to create")

	d.typeText("daily digest")
	d.press("tab", "c") // schedule type: cron
	d.press("tab")
	mustContain(t, d.modal(100, 40), "[cron]", "minute hour day-of-month month day-of-week")
	d.typeText("0 25 * * *")
	form = d.modal(100, 40)
	mustContain(t, form, `the hour field "25" is wrong`, "fix the fields marked above")
	if strings.Contains(form, "ctrl+s create") {
		t.Errorf("submit offered while the schedule is invalid:\n%s", form)
	}
	d.press("ctrl+s")
	if !d.tab.ModalOpen() {
		t.Fatal("an invalid form closed on ctrl+s")
	}
	if list, _ := d.s.List(context.Background(), ""); len(list) != 0 {
		t.Fatalf("an invalid form created %d tasks", len(list))
	}

	d.press("ctrl+u")
	d.typeText("0 9 * * *")
	d.press("tab", "ctrl+u")
	d.typeText("UTC")
	form = d.modal(100, 40)
	mustContain(t, form, "Runs cron 0 9 * * * (UTC)", "ctrl+s create")
	if n := len(regexp.MustCompile(`(?m)^│\s+\w{3} (\d{4}-)?\d{2}[- ]\w{2,3}.* 09:00 UTC  in `).FindAllString(form, -1)); n != 5 {
		t.Errorf("want a preview of 5 run times, got %d in:\n%s", n, form)
	}

	// Tools are checked against what exists, approvals against the tools.
	d.press("tab", "tab") // agent, tools
	d.typeText("calculator, nosuch")
	mustContain(t, d.modal(100, 40), `unknown tool "nosuch"`)
	d.press("backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
	d.press("tab")
	d.typeText("code_interpreter")
	mustContain(t, d.modal(100, 40), `"code_interpreter" is not one of the task's tools`)
	d.press("ctrl+u")
	// With tools and no agent chosen, the agent follows the tools.
	mustContain(t, d.modal(100, 40), "[orchestrator]")

	d.press("enter") // to the time limit
	d.typeText("5 minutes")
	mustContain(t, d.modal(100, 40), `"5 minutes" is not a duration`)
	d.press("ctrl+u")
	d.typeText("5m")
	d.press("enter") // on the last field, enter creates
	if d.tab.ModalOpen() {
		t.Fatalf("the form stayed open:\n%s", d.modal(100, 40))
	}
	list, err := d.s.List(context.Background(), "")
	if err != nil || len(list) != 1 {
		t.Fatalf("want one task, got %v, %v", list, err)
	}
	got := list[0]
	if got.Prompt != "daily digest" || got.ScheduleType != tasks.Cron || got.ScheduleValue != "0 9 * * *" ||
		got.TimeZone != "UTC" || !slices.Equal(got.Tools, []string{"calculator"}) || got.Agent != tasks.ToolsAgent || got.Timeout != 5*time.Minute {
		t.Errorf("created %+v", got)
	}
	screen := d.screen(100, 30)
	mustContain(t, screen, "Created task "+shortID(got.ID), shortID(got.ID), "daily digest", "cron 0 9 * * * (UTC)")
}

func TestSchedTabFormEscCreatesNothing(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.press("n")
	d.typeText("never mind")
	d.press("esc")
	if d.tab.ModalOpen() {
		t.Fatal("esc did not close the form")
	}
	if list, _ := d.s.List(context.Background(), ""); len(list) != 0 {
		t.Fatalf("esc created %d tasks", len(list))
	}
}

func TestSchedTabFormOnceInThePast(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.press("n")
	d.typeText("remind me")
	d.press("tab", "o", "tab")
	d.typeText("2001-01-01T09:00")
	mustContain(t, d.modal(100, 40), "has already passed")
	d.press("ctrl+u")
	d.typeText(time.Now().Add(48 * time.Hour).Format("2006-01-02T15:04"))
	form := d.modal(100, 40)
	mustContain(t, form, "Runs once at ")
	d.press("ctrl+s")
	list, _ := d.s.List(context.Background(), "")
	if len(list) != 1 || list[0].ScheduleType != tasks.Once {
		t.Fatalf("want one once task, got %+v", list)
	}
}

func TestSchedTabPauseResumeCancel(t *testing.T) {
	d := newSchedDriver(t, nil)
	task := d.create(scheduler.NewTask{Prompt: "water the plants", ScheduleType: tasks.Interval, ScheduleValue: "1h"})
	id := shortID(task.ID)

	d.press("p")
	if got := d.status(task.ID); got != tasks.Paused {
		t.Fatalf("after p: %s", got)
	}
	mustContain(t, d.screen(64, 24), "Task "+id+" paused.", "paused", "none while paused")

	d.press("r")
	if got := d.status(task.ID); got != tasks.Active {
		t.Fatalf("after r: %s", got)
	}
	mustContain(t, d.screen(64, 24), "Task "+id+" resumed; next run in 1h")

	d.press("x")
	mustContain(t, d.modal(80, 24), "Cancel task "+id+" for good? y/n", "water the plants")
	d.press("z") // a stray key neither cancels nor closes the question
	if !d.tab.ModalOpen() || d.status(task.ID) != tasks.Active {
		t.Fatal("a stray key answered the cancel question")
	}
	d.press("n")
	if d.tab.ModalOpen() || d.status(task.ID) != tasks.Active {
		t.Fatal("n should keep the task")
	}
	d.press("x", "y")
	if got := d.status(task.ID); got != tasks.Cancelled {
		t.Fatalf("after x y: %s", got)
	}
	mustContain(t, d.screen(64, 24), "Task "+id+" cancelled.", "cancelled")

	// The scheduler's refusal shows as an error line in the tab.
	d.tab.list[0].Status = tasks.Paused // as if the list were stale
	d.press("r")
	mustContain(t, d.screen(64, 24), "only a paused task can be")
	if d.tab.statusKind != statusErr {
		t.Error("a refused change is not shown as an error")
	}

	// f hides finished tasks.
	d.press("f")
	mustContain(t, d.screen(64, 24), "No active or paused tasks (1 finished task hidden")
}

func TestSchedTabRunNowAndLogs(t *testing.T) {
	release, release2 := make(chan struct{}), make(chan struct{})
	runner := func(ctx context.Context, task scheduler.Task, c tools.Confirmer) (string, error) {
		if task.Prompt == "fails" {
			<-release2
			c.Confirm(ctx, tools.ConfirmRequest{Spec: tools.Spec{Name: "code_interpreter", RequiresConfirmation: true}})
			return "", errors.New("could not run the code\nsecond line")
		}
		<-release
		return "the answer is 42\nmore detail", nil
	}
	d := newSchedDriver(t, runner)
	task := d.create(scheduler.NewTask{Prompt: "answer", ScheduleType: tasks.Interval, ScheduleValue: "1h"})
	id := shortID(task.ID)

	d.send("g")
	screen := d.screen(64, 24)
	mustContain(t, screen, "Running task "+id+"…", "running")
	close(release)
	d.await("the run's end", func() bool { return len(d.tab.busy) == 0 })
	d.settle()
	screen = d.screen(64, 24)
	mustContain(t, screen, "✓ Task "+id+" ran in", "the answer is 42", "✓ success")
	mustContain(t, d.screen(100, 30), "Server   ollama http://127.0.0.1:11434\n", "Model    qwen3:8b", "Limit    10m (default)")

	d.press("l")
	logs := d.modal(100, 30)
	mustContain(t, logs, "Runs of task "+id, "manual", "✓ success", "the answer is 42", "last 1 run, newest first",
		fmt.Sprintf("by tui (pid %d) on ollama http://127.0.0.1:11434 · qwen3:8b", os.Getpid()))
	if strings.Contains(logs, "more detail") {
		t.Errorf("the log should show the result's first line only:\n%s", logs)
	}
	d.press("esc")
	if d.tab.ModalOpen() {
		t.Fatal("esc did not close the log")
	}

	// A failed run with a denied tool: the status line and the log say so.
	bad := d.create(scheduler.NewTask{Prompt: "fails", ScheduleType: tasks.Interval, ScheduleValue: "2h", Tools: []string{"code_interpreter"}})
	d.tab.table.selID = bad.ID
	d.send("enter")
	close(release2)
	d.await("the failed run's end", func() bool { return len(d.tab.busy) == 0 })
	d.settle()
	mustContain(t, d.screen(100, 24), "✗ Task "+shortID(bad.ID)+" failed: could not run the code", "denied: code_interpreter")
	d.press("l")
	logs = d.modal(100, 30)
	mustContain(t, logs, "✗ failed", "error: could not run the code", "denied: code_interpreter")
}

func TestSchedTabCloseStopsRuns(t *testing.T) {
	started := make(chan struct{})
	runner := func(ctx context.Context, _ scheduler.Task, _ tools.Confirmer) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}
	d := newSchedDriver(t, runner)
	task := d.create(scheduler.NewTask{Prompt: "long", ScheduleType: tasks.Interval, ScheduleValue: "1h"})
	d.send("g")
	<-started
	d.tab.Close()
	d.await("the cancelled run", func() bool { return len(d.tab.busy) == 0 })
	_, runs, err := d.s.Logs(context.Background(), task.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].Success || !strings.Contains(runs[0].Error, "cancel") {
		t.Fatalf("want the run recorded as cancelled, got %+v, %v", runs, err)
	}
}

func TestSchedTabFitsNarrowPanes(t *testing.T) {
	d := newSchedDriver(t, nil)
	long := strings.Repeat("a very long prompt with many words ", 10)
	for i, v := range []string{"60", "0 9 * * 1-5", "3600"} {
		typ := tasks.Interval
		if i == 1 {
			typ = tasks.Cron
		}
		d.create(scheduler.NewTask{Prompt: long, ScheduleType: typ, ScheduleValue: v, TimeZone: "America/Argentina/Buenos_Aires",
			Tools: []string{"calculator", "file_read"}, ApprovedTools: []string{"file_read"}})
	}
	d.tab.setStatus(statusErr, "%s", "an error message long enough to need wrapping in a narrow pane, and then some more")
	for w := 30; w <= 64; w++ {
		for _, h := range []int{3, 8, 30} {
			d.screen(w, h) // checks every line's width
		}
	}
	mustContain(t, d.screen(30, 30), "ID", "STATUS", "NEXT")
	// Modals at the smallest terminal the TUI accepts.
	d.press("n")
	d.typeText("x")
	d.press("tab", "c", "tab")
	d.typeText("61 * * * *")
	d.modal(60, 14)
	d.press("esc", "l")
	d.modal(60, 14)
	d.press("esc", "x")
	d.modal(60, 14)
}

func TestSchedTabTickOnlyWhileShown(t *testing.T) {
	d := newSchedDriver(t, nil)
	now := time.Now()
	d.tab.ticking = false
	if d.tab.Shown(now) == nil || !d.tab.ticking {
		t.Fatal("activity did not arm the tick")
	}
	if d.tab.Shown(now) != nil {
		t.Fatal("a second tick was armed while one is pending")
	}
	// Drawn since the tick was armed: it re-arms.
	d.tab.View(d.st, 40, 10, now)
	if cmd, _ := d.tab.Update(schedTickMsg(now)); cmd == nil {
		t.Fatal("the tick stopped while the tab is shown")
	}
	// Not drawn for a whole period (the tab is hidden): it stops.
	if cmd, _ := d.tab.Update(schedTickMsg(now)); cmd != nil || d.tab.ticking {
		t.Fatal("the tick kept going while the tab is hidden")
	}

	if got := d.tab.tickPeriod(now); got != tickSlow {
		t.Errorf("no tasks: tick every %s, want %s", got, tickSlow)
	}
	d.tab.list = []scheduler.Task{{ID: "x", NextRun: now.Add(5 * time.Minute)}}
	if got := d.tab.tickPeriod(now); got != tickFast {
		t.Errorf("a run 5 minutes away: tick every %s, want %s", got, tickFast)
	}
	d.tab.list = []scheduler.Task{{ID: "x", NextRun: now.Add(5 * time.Hour)}}
	if got := d.tab.tickPeriod(now); got != tickSlow {
		t.Errorf("a run 5 hours away: tick every %s, want %s", got, tickSlow)
	}
}

func TestSchedTabReloadsOnSchedulerEvents(t *testing.T) {
	d := newSchedDriver(t, nil)
	task, err := d.s.Create(context.Background(), scheduler.NewTask{Prompt: "evented", ScheduleType: tasks.Interval, ScheduleValue: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := d.tab.OnEvent(events.Event{Type: events.SchedulerTaskEnd, Task: &events.TaskPayload{TaskID: task.ID}})
	if cmd == nil {
		t.Fatal("a scheduler event did not reload the list")
	}
	if d.tab.OnEvent(events.Event{Type: events.Token}) != nil {
		t.Error("an unrelated event reloaded the list")
	}
	d.run(cmd)
	d.await("the reload", func() bool { return len(d.tab.list) == 1 })
}

func TestLayoutColumnsFit(t *testing.T) {
	for w := 20; w <= 200; w++ {
		cols := layoutColumns(w, 31)
		total := markerWidth
		for i, c := range cols {
			if i > 0 {
				total++
			}
			total += c.width
		}
		if total > w {
			t.Fatalf("width %d: columns take %d", w, total)
		}
		if w >= 30 && len(cols) < 3 {
			t.Fatalf("width %d: id, status and next must show, got %v", w, cols)
		}
	}
	if cols := layoutColumns(110, 31); len(cols) != 6 || cols[4].width < 31 {
		t.Errorf("a wide pane should show every column and the whole schedule: %v", cols)
	}
}

func TestSchedTabShowsReadErrors(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.create(scheduler.NewTask{Prompt: "kept on screen", ScheduleType: tasks.Interval, ScheduleValue: "1h"})
	// A directory where the database file was: every read fails.
	if err := d.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d.db.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(d.db.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	d.run(d.tab.reload())
	d.settle()
	screen := d.screen(64, 20)
	mustContain(t, screen, "Cannot read the tasks (retrying in 5s)", "kept on screen")
	if !strings.Contains(d.tab.loadErr, d.db.Path()) {
		t.Errorf("the error should come from the store: %q", d.tab.loadErr)
	}
}

// The tab says when a dedicated scheduler owns the schedule.
func TestSchedTabSaysWhoOwnsTheSchedule(t *testing.T) {
	d := newSchedDriver(t, nil)
	owner := tasks.ThisProcess("scheduler start")
	now := time.Now()
	if err := d.s.Store().Beat(tasks.Peer{ID: "owner", Process: owner, Dedicated: true, Started: now, Beat: now,
		Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); d.s.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	want := fmt.Sprintf("scheduler start (pid %d) owns the schedule", owner.PID)
	d.await("the owner line", func() bool { return strings.Contains(d.screen(64, 20), want) })
	mustContain(t, d.screen(64, 20), "not in this TUI")
}

// Choosing the simple agent for a task with tools is allowed, with a
// warning that the tools will not be used.
func TestSchedTabFormWarnsSimpleAgentWithTools(t *testing.T) {
	d := newSchedDriver(t, nil)
	d.press("n")
	d.typeText("add up the invoices")
	d.press("tab", "tab", "tab", "tab") // schedule, value, zone, agent
	d.press("s")                        // simple
	d.press("tab")
	d.typeText("calculator")
	mustContain(t, d.modal(100, 40), "[simple]", "the simple agent never calls tools", "ctrl+s create")
	d.press("ctrl+s")
	if d.tab.ModalOpen() {
		t.Fatalf("a warning kept the form from creating:\n%s", d.modal(100, 40))
	}
	list, _ := d.s.List(context.Background(), "")
	if len(list) != 1 || list[0].Agent != "simple" {
		t.Errorf("created %+v", list)
	}
}
