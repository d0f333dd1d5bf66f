package schedtab

import (
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// logRuns is how many of a task's last runs the log modal shows.
const logRuns = 20

// runLog is the modal listing a task's last runs, newest first. It is
// reloaded when tasks change, so a run that ends while it is open shows up.
type runLog struct {
	id     string
	task   scheduler.Task
	runs   []scheduler.Run // newest first
	loaded bool
	err    string
	scroll int
}

// setRuns takes the runs as the scheduler returns them (newest first).
func (l *runLog) setRuns(t scheduler.Task, runs []scheduler.Run) {
	l.task, l.loaded, l.err, l.runs = t, true, "", runs
}

// key scrolls the log; it reports whether the key closes it.
func (l *runLog) key(k tea.KeyMsg) (closeIt bool) {
	switch k.String() {
	case "esc", "q", "l", "ctrl+c", "enter":
		return true
	case "up", "k":
		l.scroll--
	case "down", "j":
		l.scroll++
	case "pgup", "ctrl+u":
		l.scroll -= 10
	case "pgdown", "ctrl+d", " ":
		l.scroll += 10
	case "home", "g":
		l.scroll = 0
	case "end", "G":
		l.scroll = 1 << 30
	}
	return false
}

// runLines describes one run: when and why it ran, how it ended and how
// long it took, then the first line of its result or error and the tools
// it was denied.
func runLines(st Styles, r scheduler.Run, loc *time.Location, width int, now time.Time) []string {
	kind := "slot"
	if r.Manual {
		kind = "manual"
	}
	outcome, took := "running", "for "+strings.TrimSuffix(scheduler.Relative(r.StartedAt, now), " ago")
	style := st.Accent
	if r.Finished() {
		o := r.OutcomeOrGuess()
		took = format.Latency(r.FinishedAt.Sub(r.StartedAt).Seconds())
		style = outcomeStyle(st, o)
		outcome = outcomeMark(o) + " " + outcomeWord(o)
	}
	head := st.Text.Render(runTimeSeconds(r.StartedAt.In(loc), now)+"  ") + st.Muted.Render(termtext.PadRight(kind, 7)) +
		style.Render(outcome) + st.Muted.Render("  "+took)
	out := []string{ansi.Truncate(head, width, "…")}
	var where []string
	if !r.Process.IsZero() {
		where = append(where, "by "+r.Process.String())
	}
	if !r.Server.IsZero() {
		where = append(where, "on "+r.Server.String())
	}
	if len(where) > 0 {
		out = append(out, st.Muted.Render(ansi.Truncate("  "+strings.Join(where, " "), width, "…")))
	}
	if !r.Manual && !r.Slot.IsZero() && r.Slot.Sub(r.StartedAt).Abs() >= time.Minute {
		out = append(out, st.Muted.Render(ansi.Truncate("  for the slot of "+runTime(r.Slot.In(loc), now), width, "…")))
	}
	// A run's result is the model's text: stripped like a reply.
	first := func(s string) string {
		line, _, _ := strings.Cut(strings.TrimSpace(safe.Text(s)), "\n")
		return format.OneLine(line, 0)
	}
	if e := first(r.Error); e != "" {
		out = append(out, st.Error.Render(ansi.Truncate("  error: "+e, width, "…")))
	}
	if res := first(r.Result); res != "" {
		out = append(out, st.Text.Render(ansi.Truncate("  "+res, width, "…")))
	}
	if len(r.DeniedTools) > 0 {
		out = append(out, st.Warning.Render(ansi.Truncate("  denied: "+strings.Join(r.DeniedTools, ", ")+
			" (need confirmation, not approved for this task)", width, "…")))
	}
	return out
}

// runTimeSeconds is runTime with seconds: runs start at any second, and
// two runs a few seconds apart must read differently.
func runTimeSeconds(t, now time.Time) string { return formatRunTime(t, now, true) }

// view draws the modal, at most width wide and height tall.
func (l *runLog) view(st Styles, width, height int, now time.Time) string {
	boxW := min(width-4, 96)
	inner := max(boxW-4, 20)
	title := "Runs of task " + shortID(l.id)
	if l.loaded {
		title += " · " + l.task.Describe()
	}
	head := []string{
		st.DialogTitle.Render(ansi.Truncate(title, inner, "…")),
	}
	if l.loaded {
		head = append(head, st.Muted.Render(ansi.Truncate(safe.Text(format.OneLine(l.task.Prompt, 0)), inner, "…")))
	}
	head = append(head, "")

	var body []string
	switch {
	case l.err != "":
		for _, s := range termtext.Wrap(l.err, inner) {
			body = append(body, st.Error.Render(s))
		}
	case !l.loaded:
		body = append(body, st.Muted.Render("Loading…"))
	case len(l.runs) == 0:
		body = append(body, st.Muted.Render("No runs yet. g (or enter) in the table runs the task now."))
	default:
		loc := zoneOf(l.task)
		for i, r := range l.runs {
			if i > 0 {
				body = append(body, "")
			}
			body = append(body, runLines(st, r, loc, inner, now)...)
		}
	}

	room := max(height-2-len(head)-2, 3)
	l.scroll = min(max(l.scroll, 0), max(len(body)-room, 0))
	shown := body[l.scroll:min(l.scroll+room, len(body))]
	foot := "esc closes"
	if len(body) > room {
		foot = "↑/↓ pgup/pgdn scroll · lines " + strconv.Itoa(l.scroll+1) + "–" + strconv.Itoa(l.scroll+len(shown)) +
			" of " + strconv.Itoa(len(body)) + " · esc closes"
	}
	if l.loaded && len(l.runs) > 0 {
		foot = "last " + fmtCount(len(l.runs), "run") + ", newest first · " + foot
	}
	lines := append(append(head, shown...), "", st.Muted.Render(ansi.Truncate(foot, inner, "…")))
	return boxStyle(st, inner).Render(strings.Join(lines, "\n"))
}

// boxStyle frames the tab's modals: inner is the text width inside the
// border and padding.
func boxStyle(st Styles, inner int) lipgloss.Style {
	return lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(st.DialogBorder).
		Padding(0, 1).Width(inner + 2)
}
