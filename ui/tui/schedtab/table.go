package schedtab

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// taskTable is the Scheduler tab's list of tasks. The selection follows a
// task's id rather than a row number: tasks are sorted by next run, which
// moves every time one runs, and the cursor must stay on the task the person
// chose when a reload reorders the list.
type taskTable struct {
	selID    string
	cursor   int
	offset   int
	hideDone bool // leave out completed and cancelled tasks
}

// finished reports whether a task can no longer run on schedule.
func finished(t scheduler.Task) bool {
	return !t.Running && (t.Status == tasks.Completed || t.Status == tasks.Cancelled)
}

// visible returns the tasks the table shows and how many it hides.
func (tb *taskTable) visible(list []scheduler.Task) (rows []scheduler.Task, hidden int) {
	if !tb.hideDone {
		return list, 0
	}
	rows = make([]scheduler.Task, 0, len(list))
	for _, t := range list {
		if finished(t) {
			hidden++
			continue
		}
		rows = append(rows, t)
	}
	return rows, hidden
}

// sync puts the cursor back on the selected task after the rows changed,
// or on the nearest row when that task is gone.
func (tb *taskTable) sync(rows []scheduler.Task) {
	for i, t := range rows {
		if t.ID == tb.selID {
			tb.cursor = i
			return
		}
	}
	tb.cursor = min(max(tb.cursor, 0), max(len(rows)-1, 0))
	tb.selID = ""
	if len(rows) > 0 {
		tb.selID = rows[tb.cursor].ID
	}
}

// move moves the cursor by delta rows, stopping at the ends.
func (tb *taskTable) move(rows []scheduler.Task, delta int) {
	if len(rows) == 0 {
		return
	}
	tb.cursor = min(max(tb.cursor+delta, 0), len(rows)-1)
	tb.selID = rows[tb.cursor].ID
}

// selected returns the task under the cursor.
func (tb *taskTable) selected(rows []scheduler.Task) (scheduler.Task, bool) {
	if len(rows) == 0 || tb.cursor < 0 || tb.cursor >= len(rows) {
		return scheduler.Task{}, false
	}
	return rows[tb.cursor], true
}

// Table columns, in the order they appear.
type colKind int

const (
	colID colKind = iota
	colStatus
	colNext
	colLast
	colSchedule
	colPrompt
)

var colTitles = map[colKind]string{
	colID: "ID", colStatus: "STATUS", colNext: "NEXT", colLast: "LAST", colSchedule: "SCHEDULE", colPrompt: "PROMPT",
}

type column struct {
	kind  colKind
	width int
}

// Fixed column widths: an 8-character id, the longest status word
// ("completed", "cancelled"), a relative time ("in 23h59m"), and an outcome
// mark with a relative time ("✓ 23h59m").
const (
	idWidth     = 8
	statusWidth = 9
	nextWidth   = 9
	lastWidth   = 9
	minSchedW   = 10
	minPromptW  = 8
	markerWidth = 2 // "› " before each row
)

// layoutColumns chooses the columns that fit width. The id, status and next
// run always show (the pane is at least 30 columns, which is what they
// take); then the prompt (what the task is), then the last run, then the
// schedule. Extra room goes to the schedule, up to its longest text, and
// to the prompt.
func layoutColumns(width, longestSchedule int) []column {
	rest := width - markerWidth
	var cols []column
	for _, c := range []column{{colID, idWidth}, {colStatus, statusWidth}, {colNext, nextWidth}} {
		need := c.width
		if len(cols) > 0 {
			need++
		}
		if rest < need {
			break
		}
		cols, rest = append(cols, c), rest-need
	}
	if len(cols) < 3 {
		return cols
	}
	prompt, last, sched := false, false, false
	if rest >= 1+minPromptW {
		prompt, rest = true, rest-1-minPromptW
	}
	if rest >= 1+lastWidth {
		last, rest = true, rest-1-lastWidth
	}
	if rest >= 1+minSchedW {
		sched, rest = true, rest-1-minSchedW
	}
	schedW, promptW := minSchedW, minPromptW
	if sched {
		grow := min(max(longestSchedule-minSchedW, 0), rest)
		if prompt {
			// The prompt keeps half the extra room, or 16 columns when
			// the whole schedule fits beside that.
			grow = min(grow, max(rest/2, rest-(16-minPromptW)))
		}
		schedW, rest = schedW+grow, rest-grow
	}
	if prompt {
		promptW += rest
	}
	if last {
		cols = append(cols, column{colLast, lastWidth})
	}
	if sched {
		cols = append(cols, column{colSchedule, schedW})
	}
	if prompt {
		cols = append(cols, column{colPrompt, promptW})
	}
	return cols
}

// statusLabel is a task's state as the table shows it: "running" while a
// run is in progress (here or in another process), else its status.
func statusLabel(t scheduler.Task, busy bool) string {
	if t.Running || busy {
		return "running"
	}
	return string(t.Status)
}

func statusStyle(st Styles, label string) lipgloss.Style {
	switch label {
	case "running":
		return st.Accent
	case string(tasks.Active):
		return st.Success
	case string(tasks.Paused):
		return st.Warning
	case string(tasks.Cancelled):
		return st.Cancelled
	}
	return st.Muted
}

// outcomeMark is the one-character sign for how a run ended.
func outcomeMark(o tasks.Outcome) string {
	switch o {
	case tasks.OutcomeSuccess:
		return "✓"
	case tasks.OutcomeFailed:
		return "✗"
	case tasks.OutcomeInterrupted:
		return "↯"
	case tasks.OutcomeTimedOut:
		return "⧖"
	case tasks.OutcomeCancelled:
		return "⊘"
	case tasks.OutcomeSkipped:
		return "↷"
	}
	return "·"
}

// outcomeWord writes an outcome for people ("timed out").
func outcomeWord(o tasks.Outcome) string { return strings.ReplaceAll(string(o), "_", " ") }

func outcomeStyle(st Styles, o tasks.Outcome) lipgloss.Style {
	switch o {
	case tasks.OutcomeSuccess:
		return st.Success
	case tasks.OutcomeFailed, tasks.OutcomeTimedOut:
		return st.Error
	case tasks.OutcomeInterrupted, tasks.OutcomeSkipped:
		return st.Warning
	case tasks.OutcomeCancelled:
		return st.Cancelled
	}
	return st.Muted
}

// nextText is the next run as a relative time; a time already passed
// means the task is due and about to be claimed.
func nextText(t scheduler.Task, now time.Time) string {
	if t.NextRun.IsZero() {
		return "-"
	}
	if !t.NextRun.After(now) {
		return "due"
	}
	return scheduler.Relative(t.NextRun, now)
}

// lastText is the last run's outcome and how long ago it started (the
// column title says it is in the past, so "ago" is left out).
func lastText(t scheduler.Task, busy bool, now time.Time) string {
	if t.LastRun.IsZero() {
		if busy {
			return "…"
		}
		return "never"
	}
	mark := outcomeMark(t.LastOutcome)
	if t.Running || busy {
		mark = "…"
	}
	return mark + " " + strings.TrimSuffix(scheduler.Relative(t.LastRun, now), " ago")
}

// cell returns a task's text in a column and the style to draw it with.
func cell(st Styles, c colKind, t scheduler.Task, busy bool, now time.Time) (string, lipgloss.Style) {
	switch c {
	case colID:
		return shortID(t.ID), st.Accent
	case colStatus:
		l := statusLabel(t, busy)
		return l, statusStyle(st, l)
	case colNext:
		s := nextText(t, now)
		if s == "due" {
			return s, st.Warning
		}
		return s, st.Text
	case colLast:
		if t.Running || busy {
			return lastText(t, busy, now), st.Accent
		}
		if t.LastRun.IsZero() {
			return lastText(t, busy, now), st.Muted
		}
		return lastText(t, busy, now), outcomeStyle(st, t.LastOutcome)
	case colSchedule:
		return t.Describe(), st.Muted
	}
	return safe.Text(format.OneLine(t.Prompt, 0)), st.Text
}

// render draws the header and as many rows as fit in height, scrolled so
// the cursor is on screen. Cells are cut as plain text and styled after,
// so a cut never lands inside an escape sequence.
func (tb *taskTable) render(st Styles, rows []scheduler.Task, busy map[string]bool, width, height int, now time.Time) []string {
	if height < 2 || len(rows) == 0 {
		return nil
	}
	longest := 0
	for _, t := range rows {
		longest = max(longest, ansi.StringWidth(t.Describe()))
	}
	cols := layoutColumns(width, longest)
	var head []string
	for _, c := range cols {
		head = append(head, termtext.PadRight(colTitles[c.kind], c.width))
	}
	out := []string{st.Muted.Render(ansi.Truncate(strings.Repeat(" ", markerWidth)+strings.Join(head, " "), width, ""))}

	room := height - 1
	tb.offset = min(max(tb.offset, tb.cursor-room+1, 0), tb.cursor, max(len(rows)-room, 0))
	for i := tb.offset; i < min(tb.offset+room, len(rows)); i++ {
		t := rows[i]
		if i == tb.cursor {
			var plain []string
			for _, c := range cols {
				text, _ := cell(st, c.kind, t, busy[t.ID], now)
				plain = append(plain, termtext.PadRight(text, c.width))
			}
			out = append(out, st.Selection.Render(termtext.PadRight("› "+strings.Join(plain, " "), width)))
			continue
		}
		var cells []string
		for _, c := range cols {
			text, style := cell(st, c.kind, t, busy[t.ID], now)
			if finished(t) && c.kind != colStatus {
				style = st.Muted
			}
			cells = append(cells, style.Render(termtext.PadRight(text, c.width)))
		}
		out = append(out, "  "+strings.Join(cells, " "))
	}
	return out
}

// Details labels are this wide, so values line up.
const detailLabel = 9

// details describes a task in full for the area under the table: the whole
// prompt, how and where it runs, its next three runs and how the last one
// ended. Lines are at most width cells.
func taskDetails(st Styles, t scheduler.Task, busy bool, limit time.Duration, width int, now time.Time) []string {
	valueW := max(width-detailLabel, 8)
	var out []string
	field := func(label, value string, style lipgloss.Style) {
		for i, l := range termtext.Wrap(value, valueW) {
			lead := termtext.PadRight(label, detailLabel)
			if i > 0 {
				lead = strings.Repeat(" ", detailLabel)
			}
			out = append(out, st.Muted.Render(lead)+style.Render(ansi.Truncate(l, valueW, "…")))
		}
	}
	label := statusLabel(t, busy)
	if len(t.ID)+1+len(label) <= valueW {
		out = append(out, st.Muted.Render(termtext.PadRight("Task", detailLabel))+st.Accent.Render(t.ID)+" "+statusStyle(st, label).Render(label))
	} else {
		field("Task", t.ID, st.Accent)
		field("Status", label, statusStyle(st, label))
	}
	field("Prompt", strings.TrimSpace(t.Prompt), st.Text)
	field("Schedule", t.Describe(), st.Text)
	field("Zone", t.TimeZone, st.Text)
	agentLine := orNone(t.Agent) + " · tools: " + listOrNone(t.Tools)
	if len(t.ApprovedTools) > 0 {
		agentLine += " · approved: " + strings.Join(t.ApprovedTools, ", ")
	}
	field("Agent", agentLine, st.Text)
	if t.Server.IsZero() {
		field("Server", "any: made before tasks recorded their server, it runs on the server of the process that claims it", st.Muted)
	} else {
		field("Server", strings.TrimSpace(t.Server.Engine+" "+t.Server.Host), st.Text)
	}
	if t.Server.Model != "" {
		field("Model", t.Server.Model, st.Text)
	} else {
		field("Model", "none named: each run takes the server's first model that can chat (one that calls tools first)", st.Muted)
	}
	limitText := tasks.FormatDuration(limit)
	if t.Timeout == 0 {
		limitText += " (default)"
	}
	field("Limit", limitText, st.Text)

	loc := zoneOf(t)
	next := nextRuns(t, 3)
	switch {
	case len(next) == 0 && t.Status == tasks.Paused:
		field("Next", "none while paused (r resumes)", st.Muted)
	case len(next) == 0:
		field("Next", "none", st.Muted)
	default:
		seconds := shortInterval(next)
		for i, n := range next {
			label := "Next"
			if i > 0 {
				label = ""
			}
			text := formatRunTime(n.In(loc), now, seconds)
			if i == 0 {
				text += " (" + nextText(t, now) + ")"
			}
			field(label, text, st.Text)
		}
	}

	switch {
	case t.Running || busy:
		where := ""
		if t.RunningIn != nil {
			where = " in " + t.RunningIn.String()
		}
		field("Last", "running, started "+scheduler.Relative(t.LastRun, now)+where, st.Accent)
	case t.LastRun.IsZero():
		field("Last", "never ran", st.Muted)
	default:
		word := outcomeWord(t.LastOutcome)
		if word == "" {
			word = "ran"
		}
		field("Last", outcomeMark(t.LastOutcome)+" "+word+" "+scheduler.Relative(t.LastRun, now)+
			" ("+formatRunTime(t.LastRun.In(loc), now, shortInterval(next))+")", outcomeStyle(st, t.LastOutcome))
		if t.LastError != "" {
			field("Error", t.LastError, st.Error)
		}
		if t.LastResult != "" {
			field("Result", t.LastResult, st.Text)
		}
	}
	return out
}

// nextRuns returns up to n run times from the task's next run on, on its
// own schedule (an interval task's grid, a cron task's matches).
func nextRuns(t scheduler.Task, n int) []time.Time {
	if t.NextRun.IsZero() || t.Status != tasks.Active {
		return nil
	}
	out := []time.Time{t.NextRun}
	sched, err := t.Schedule()
	if err != nil {
		return out
	}
	for len(out) < n {
		next := sched.Next(out[len(out)-1])
		if next.IsZero() {
			break
		}
		out = append(out, next)
	}
	return out
}

// zoneOf returns the task's zone, for showing its times as its owner reads
// them; UTC when the zone no longer loads.
func zoneOf(t scheduler.Task) *time.Location {
	if loc, _, err := tasks.LoadZone(t.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// runTime writes a run time compactly; the year shows only when it is not
// the current one.
func runTime(t, now time.Time) string { return formatRunTime(t, now, false) }

// formatRunTime is runTime, with the seconds when asked.
func formatRunTime(t, now time.Time, seconds bool) string {
	clock := "15:04"
	if seconds {
		clock = "15:04:05"
	}
	if t.Year() != now.Year() {
		return t.Format("Mon 2006-01-02 " + clock + " MST")
	}
	return t.Format("Mon 02 Jan " + clock + " MST")
}

// shortInterval reports whether runs come less than ten minutes apart
// (under ten minutes, scheduler.Relative counts seconds too): their times
// are written with seconds, or a task run every ten seconds would show
// five runs at the same minute.
func shortInterval(runs []time.Time) bool {
	for i := 1; i < len(runs); i++ {
		if runs[i].Sub(runs[i-1]) < 10*time.Minute {
			return true
		}
	}
	return false
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// keyHint is the tab's one-line key help, the longest that fits width.
func keyHint(width int, hideDone bool) string {
	filter := "f: hide finished"
	if hideDone {
		filter = "f: show all"
	}
	for _, h := range []string{
		"n new · p pause · r resume · x cancel · ⏎/g run now · l logs · " + filter,
		"n new · p pause · r resume · x cancel · g run · l logs",
		"n new p pause r resume x cancel g run l logs",
		"n p r x g l · ↑↓",
	} {
		if ansi.StringWidth(h) <= width {
			return h
		}
	}
	return ansi.Truncate("n p r x g l", width, "")
}

// fmtCount says "1 task" or "3 tasks".
func fmtCount(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
