package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"

	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// panelState is where a tool call is in its life.
type panelState int

const (
	panelWaiting panelState = iota // asking the person
	panelRunning
	panelOK
	panelFailed
	panelDenied
	panelTimeout
	panelCancelled
)

// toolPanel is one tool call on screen.
type toolPanel struct {
	tool, callID string
	index        int // the call's place among its turn's calls
	args         map[string]any
	state        panelState
	started      time.Time
	latency      float64
	cost         float64
	estimate     float64 // the spec's cost estimate, shown with ~ when no cost was measured
	result       string  // stripped of escape sequences and controls
	// diff is the change a call made to files (drawn safe); live the
	// tail of what a running call printed so far (raw: a chunk may end
	// inside a character or an escape sequence, so it is made safe whole
	// when drawn).
	diff    string
	live    []byte
	version int
	// cache holds the collapsed [0] and expanded [1] renderings.
	cache [2]cached
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (p *toolPanel) active() bool { return p.state == panelWaiting || p.state == panelRunning }

// render draws the panel at width. Running panels are redrawn every tick
// (their timer moves); finished ones come from the cache.
func (p *toolPanel) render(rc renderCtx, width int) []string {
	if p.active() {
		return p.draw(rc, width)
	}
	k := rc.panelKey()
	k.width = width
	return p.cache[b2i(rc.expand)].get(k, p.version, func() []string { return p.draw(rc, width) })
}

// setResult stores a tool's result once, made safe to draw: a file or a
// web page read by a tool can hold escape sequences (clear the screen, set
// the title, write the clipboard) and carriage returns.
func (p *toolPanel) setResult(s string) { p.result = safe.Text(s) }

func (p *toolPanel) icon(rc renderCtx) (string, lipgloss.Style, string) {
	st := rc.st
	switch p.state {
	case panelWaiting:
		return "?", st.warning, "waiting for your approval"
	case panelRunning:
		frame := int(rc.now.Sub(p.started)/(100*time.Millisecond)) % len(spinnerFrames)
		return spinnerFrames[max(frame, 0)], st.accent, "running " + elapsed(rc.now.Sub(p.started))
	case panelOK:
		return "✓", st.success, p.costText()
	case panelFailed:
		return "✗", st.errorText, "failed · " + p.costText()
	case panelDenied:
		return "⊘", st.denied, "denied"
	case panelTimeout:
		return "⏱", st.timeout, "timed out · " + format.Latency(p.latency)
	case panelCancelled:
		return "■", st.cancelled, "cancelled"
	}
	return " ", st.text, ""
}

func (p *toolPanel) costText() string {
	cost := format.Cost(p.cost, false)
	if p.cost == 0 && p.estimate > 0 {
		cost = format.Cost(p.estimate, true)
	}
	return format.Latency(p.latency) + " · " + cost
}

func elapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func (p *toolPanel) draw(rc renderCtx, width int) []string {
	st := rc.st
	inner := max(width-4, 10)
	icon, iconStyle, right := p.icon(rc)
	title := iconStyle.Render(icon) + " " + st.panelTitle.Render(p.tool)
	main, whole := mainArgument(p.args)
	if main != "" && !rc.expand {
		title += st.muted.Render(" " + main)
	}
	rightText := st.muted.Render(right)
	gap := inner - ansi.StringWidth(title) - ansi.StringWidth(rightText)
	if gap < 1 {
		title = ansi.Truncate(title, max(inner-ansi.StringWidth(rightText)-1, 1), "…")
		gap = inner - ansi.StringWidth(title) - ansi.StringWidth(rightText)
		whole = false
	}
	body := []string{title + strings.Repeat(" ", max(gap, 1)) + rightText}

	if rc.expand {
		for _, l := range argLines(p.args, inner) {
			body = append(body, st.muted.Render(l))
		}
	} else if !whole {
		// What the title could not hold, wrapped rather than cut: a URL
		// or a hash is read to its end.
		lines := hang(safe.Text(format.Args(p.args, 0)), inner, "")
		for i, l := range lines {
			if i == collapsedArgRows && len(lines) > collapsedArgRows+1 {
				body = append(body, st.muted.Render("… "+format.Count(len(lines)-i, "more line")+" of arguments (ctrl+e expands)"))
				break
			}
			body = append(body, st.muted.Render(l))
		}
	}

	switch p.state {
	case panelRunning:
		body = append(body, p.liveLines(rc, inner)...)
	case panelWaiting:
	default:
		if p.diff != "" && p.state == panelOK {
			body = append(body, p.diffRows(rc, inner)...)
			if !rc.expand {
				break
			}
		}
		limit, more := 3, " (ctrl+e expands)"
		if rc.expand {
			// The whole result, up to what a transcript can page through;
			// beyond that the export has it.
			limit, more = expandedResultLines, ": /export writes the whole result with the session"
		}
		result := strings.TrimRight(p.result, "\n")
		if result == "" {
			result = "(no output)"
		}
		lines := wrapText(result, inner-2)
		resStyle := st.text
		if p.state != panelOK {
			resStyle = iconStyle
		}
		for i, l := range lines {
			if i == limit {
				body = append(body, st.muted.Render("… "+format.Count(len(lines)-limit, "more line")+more))
				break
			}
			prefix := "  "
			if i == 0 {
				prefix = "→ "
			}
			body = append(body, resStyle.Render(prefix+l))
		}
	}
	border := st.border
	switch p.state {
	case panelOK:
		border = colorOf(st.success)
	case panelFailed:
		border = colorOf(st.errorText)
	case panelDenied, panelTimeout, panelCancelled, panelWaiting:
		border = colorOf(st.warning)
	}
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(border).Padding(0, 1).Width(width - 2)
	return strings.Split(box.Render(strings.Join(body, "\n")), "\n")
}

// colorOf returns a style's foreground colour for use as a border colour.
func colorOf(s lipgloss.Style) lipgloss.TerminalColor { return s.GetForeground() }

// expandedResultLines bounds the result an expanded panel shows.
const expandedResultLines = 5000

// collapsedArgRows is how many rows a collapsed panel gives the
// arguments its title could not hold.
const collapsedArgRows = 3

// mainArgument is the argument shown in the panel title: the first string
// argument, quoted and cut, which for most tools is the one that matters
// (expression, path, url, query, code). whole is false when the title does
// not show every argument in full. The quoting keeps the value's spaces
// and shows its line breaks as \n, so code keeps its indentation.
func mainArgument(args map[string]any) (main string, whole bool) {
	for _, k := range []string{"expression", "path", "url", "query", "code", "prompt", "thought", "command", "message"} {
		if v, ok := args[k].(string); ok {
			full := k + "=" + strconv.Quote(v)
			main = safe.Text(format.Cut(full, 60))
			return main, len(args) == 1 && main == full
		}
	}
	return "", len(args) == 0
}

// argLines lays out a call's arguments for reading, width cells wide, as
// format.ArgLines does: code keeps its lines and indentation, and a code
// line too long for the width continues on marked rows.
func argLines(args map[string]any, width int) []string {
	var out []string
	for _, l := range format.ArgLines(args) {
		cont := "  "
		if l.Code {
			cont = codeCont
		}
		out = append(out, hang(l.Indent+expandTabs(safe.Text(l.Text)), width, cont)...)
	}
	return out
}

// codeCont starts the rows that continue a code line too long for the
// width: marked, so they cannot be taken for lines of their own.
const codeCont = "  ↪ "

// hang breaks one line of plain text into rows of width cells, the rows
// after the first starting with cont. It breaks anywhere, not at spaces:
// code and arguments must read exactly as they will run, and rejoining
// word-wrapped pieces would add or drop spaces.
func hang(line string, width int, cont string) []string {
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	if width <= ansi.StringWidth(cont)+1 {
		cont = ""
	}
	var out []string
	var row strings.Builder
	room, used := max(width, 1), 0
	gr := uniseg.NewGraphemes(line)
	for gr.Next() {
		g, w := gr.Str(), gr.Width()
		if used+w > room && used > 0 {
			out = append(out, row.String())
			row.Reset()
			row.WriteString(cont)
			room, used = width-ansi.StringWidth(cont), 0
		}
		row.WriteString(g)
		used += w
	}
	return append(out, row.String())
}

// renderGroup lays out a turn's panels: side by side when they are parallel
// and the width allows, stacked otherwise.
func renderGroup(rc renderCtx, panels []*toolPanel) []string {
	if len(panels) == 0 {
		return nil
	}
	width := rc.width
	if len(panels) > 1 && width/len(panels) >= 36 && len(panels) <= 3 {
		each := width / len(panels)
		cols := make([]string, len(panels))
		for i, p := range panels {
			cols[i] = strings.Join(p.render(rc, each), "\n")
		}
		head := rc.st.muted.Render(fmt.Sprintf("⇉ %d calls in parallel", len(panels)))
		return append([]string{head}, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, cols...), "\n")...)
	}
	var out []string
	if len(panels) > 1 {
		out = append(out, rc.st.muted.Render(fmt.Sprintf("⇉ %d calls in parallel", len(panels))))
	}
	for _, p := range panels {
		out = append(out, p.render(rc, width)...)
	}
	return out
}

// liveTail is how much of a running call's output a panel keeps, and
// liveRows how many of its last lines it shows.
const (
	liveTail = 16 << 10
	liveRows = 6
)

// addLive appends output a running call produced.
func (p *toolPanel) addLive(text string) {
	p.live = append(p.live, text...)
	if over := len(p.live) - liveTail; over > 0 {
		p.live = append(p.live[:0], p.live[over:]...)
	}
	p.version++
}

// liveLines are the last lines a running call printed.
func (p *toolPanel) liveLines(rc renderCtx, inner int) []string {
	if len(p.live) == 0 {
		return nil
	}
	text := strings.TrimRight(safe.Text(strings.ToValidUTF8(string(p.live), "\uFFFD")), "\n")
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		rows = append(rows, hang(expandTabs(l), inner-2, "  ")...)
	}
	if len(rows) > liveRows {
		rows = rows[len(rows)-liveRows:]
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rc.st.muted.Render("│ " + r)
	}
	return out
}

// diffRows show a call's change to files: a summary line, and when
// expanded the whole diff.
func (p *toolPanel) diffRows(rc renderCtx, inner int) []string {
	if !rc.expand {
		return []string{rc.st.success.Render("→ "+ansiCut(diffSummary(p.diff), inner-20)) + rc.st.muted.Render(" (ctrl+e shows the diff)")}
	}
	lines := diffLines(rc.st, p.diff, inner)
	if len(lines) > expandedResultLines {
		lines = append(lines[:expandedResultLines:expandedResultLines], rc.st.muted.Render("… /changes shows the whole diff"))
	}
	return lines
}

// ansiCut cuts plain text to width cells.
func ansiCut(s string, width int) string { return ansi.Truncate(s, max(width, 10), "…") }
