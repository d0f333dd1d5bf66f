package schedtab

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// view draws the tab: a status line when there is something to say, the
// table, the selected task's details as far as they fit, and the key hint
// on the last line. Every line is at most width cells.
func (t *Tab) View(st Styles, width, height int, now time.Time) []string {
	t.viewed = true
	if height <= 0 || width <= 0 {
		return nil
	}
	fit := func(s string) string { return ansi.Truncate(s, width, "…") }
	var top []string
	if t.status != "" {
		style := st.Muted
		switch t.statusKind {
		case statusOK:
			style = st.Success
		case statusErr:
			style = st.Error
		}
		lines := termtext.Wrap(t.status, width)
		for _, l := range lines[:min(len(lines), 2)] {
			top = append(top, style.Render(fit(l)))
		}
	}
	if t.loadErr != "" {
		top = append(top, st.Error.Render(fit(t.loadErr)))
	}
	if t.owned {
		lines := termtext.Wrap(t.owner.Process.String()+" owns the schedule: scheduled runs happen there, not in this TUI (g still runs a task here).", width)
		for _, l := range lines[:min(len(lines), 2)] {
			top = append(top, st.Accent.Render(fit(l)))
		}
	}
	hint := st.Muted.Render(keyHint(width, t.table.hideDone))
	room := height - len(top) - 1
	if room < 1 {
		return append(top[:max(height-1, 0)], hint)[:height]
	}

	rows, hidden := t.table.visible(t.list)
	t.table.sync(rows)
	var body []string
	switch {
	case !t.loaded && t.loadErr != "":
		body = nil
	case !t.loaded:
		body = []string{st.Muted.Render("Loading tasks…")}
	case len(rows) == 0 && hidden > 0:
		body = wrapStyled(st.Muted, fmt.Sprintf("No active or paused tasks (%s hidden; f shows them). Press n to create one.", fmtCount(hidden, "finished task")), width)
	case len(rows) == 0:
		body = wrapStyled(st.Muted, "No scheduled tasks. Press n to create one: a prompt that runs once, every N seconds, or on a cron schedule.", width)
	default:
		body = t.tableAndDetails(st, rows, width, room, now)
	}
	out := append(top, body[:min(len(body), room)]...)
	for len(out) < height-1 {
		out = append(out, "")
	}
	return append(out, hint)
}

// tableAndDetails splits the room between the table and the details of
// the selected task: the table gets what its rows need, but leaves the
// details at least half of a tall pane.
func (t *Tab) tableAndDetails(st Styles, rows []scheduler.Task, width, room int, now time.Time) []string {
	sel, _ := t.table.selected(rows)
	details := taskDetails(st, sel, t.busy[sel.ID], t.s.TimeoutFor(sel), width, now)
	tableH := min(len(rows)+1, room)
	if left := room - tableH; left < len(details)+1 && room >= 12 {
		tableH = min(len(rows)+1, max(room/2, room-len(details)-1))
	}
	out := t.table.render(st, rows, t.busy, width, tableH, now)
	if left := room - len(out); left >= 3 {
		out = append(out, st.Muted.Render(strings.Repeat("─", width)))
		out = append(out, details[:min(len(details), left-1)]...)
	}
	return out
}

func wrapStyled(style lipgloss.Style, text string, width int) []string {
	var out []string
	for _, l := range termtext.Wrap(text, width) {
		out = append(out, style.Render(l))
	}
	return out
}

// modal draws the open modal: the cancel question, the form or the log.
func (t *Tab) Modal(st Styles, width, height int, now time.Time) (string, bool) {
	switch {
	case t.confirmID != "":
		return t.confirmView(st, width), true
	case t.form != nil:
		return t.form.view(st, width, height, now), true
	case t.logs != nil:
		return t.logs.view(st, width, height, now), true
	}
	return "", false
}

func (t *Tab) confirmView(st Styles, width int) string {
	inner := max(min(width-8, 60), 20)
	var task scheduler.Task
	for _, x := range t.list {
		if x.ID == t.confirmID {
			task = x
		}
	}
	lines := []string{st.DialogTitle.Render(ansi.Truncate("Cancel task "+shortID(t.confirmID)+" for good? y/n", inner, "…")), ""}
	if task.ID != "" {
		lines = append(lines, st.Text.Render(ansi.Truncate(safe.Text(format.OneLine(task.Prompt, 0)), inner, "…")),
			st.Muted.Render(ansi.Truncate(task.Describe(), inner, "…")), "")
	}
	note := "It will not run again and cannot be resumed; its run log is kept."
	switch {
	case task.Running && task.RunningIn != nil:
		note = "Its run in progress in " + task.RunningIn.String() + " is stopped. " + note
	case task.Running || t.busy[task.ID]:
		note = "Its run in progress is stopped. " + note
	}
	for _, l := range termtext.Wrap(note, inner) {
		lines = append(lines, st.Muted.Render(l))
	}
	lines = append(lines, "", st.Text.Render("[y] cancel the task   [n/esc] keep it"))
	return boxStyle(st, inner).Render(strings.Join(lines, "\n"))
}
