package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// Side pane tabs.
const (
	tabTools = iota
	tabEvents
	tabScheduler
	tabContext
	tabCount
)

var tabNames = [tabCount]string{"Tools", "Events", "Scheduler", "Context"}

// eventLogSize bounds the Events tab so memory stays flat over long sessions.
const eventLogSize = 1000

// sidePane is the right-hand pane: what the model is told about its tools,
// the live event log, and the scheduler.
type sidePane struct {
	visible bool
	tab     int

	// Tools tab.
	toolCursor   int
	showCategory bool
	showCost     bool
	descScroll   int
	// question is asked before a change that lets more run (A).
	question *paneQuestion

	// Events tab: a ring of the latest events.
	log       []logLine
	logStart  int
	logScroll int // lines up from the newest
}

type logLine struct {
	at   time.Time
	text string
	kind events.Type
}

func newSidePane() *sidePane { return &sidePane{showCategory: true} }

// record adds an event to the log (deltas are not logged one by one).
func (p *sidePane) record(e events.Event) {
	text := safe.Text(describeEvent(e))
	if text == "" {
		return
	}
	l := logLine{at: e.Time, text: text, kind: e.Type}
	if len(p.log) < eventLogSize {
		p.log = append(p.log, l)
		return
	}
	p.log[p.logStart] = l
	p.logStart = (p.logStart + 1) % eventLogSize
}

func (p *sidePane) logAt(i int) logLine { return p.log[(p.logStart+i)%len(p.log)] }

// describeEvent is the Events tab's line for an event.
func describeEvent(e events.Event) string {
	t := e.Tool
	switch e.Type {
	case events.Token, events.Thinking:
		return ""
	case events.ToolCallStart:
		return fmt.Sprintf("%s %s %s", e.Type, t.Tool, format.Args(t.Arguments, 40))
	case events.ToolCallEnd:
		mark := "ok"
		if !t.Success {
			mark = t.Status
		}
		return fmt.Sprintf("%s %s %s %s %s", e.Type, t.Tool, mark, format.Latency(t.LatencySeconds), format.Cost(t.CostUSD, false))
	case events.ToolCallDenied, events.ToolCallError, events.ToolTimeout, events.ConfirmAsk:
		return fmt.Sprintf("%s %s", e.Type, t.Tool)
	case events.ConfirmAnswer:
		return fmt.Sprintf("%s %s: %s", e.Type, t.Tool, e.Text)
	case events.TurnEnd:
		return fmt.Sprintf("%s #%d %s", e.Type, e.Turn.Turn, format.Usage(e.Turn.Usage, 0))
	case events.TurnStart:
		if c := e.Turn.Context; c != nil && c.Window > 0 {
			return fmt.Sprintf("%s #%d %s %s", e.Type, e.Turn.Turn, e.Turn.Model, format.WindowUse(c.PromptTokens, c.Window, c.Estimated))
		}
		return fmt.Sprintf("%s #%d %s", e.Type, e.Turn.Turn, e.Turn.Model)
	case events.ContextCompacted:
		c := e.Turn.Context
		return fmt.Sprintf("%s %s, %s → %s tokens", e.Type, format.Count(c.Replaced, "message"), format.Tokens(c.Before), format.Tokens(c.After))
	case events.RunStart:
		return fmt.Sprintf("%s %s", e.Type, e.Run.Agent)
	case events.RunEnd:
		return string(e.Type) + " " + format.Count(e.Turn.Turn, "turn")
	case events.SchedulerTaskStart:
		return fmt.Sprintf("%s %s", e.Type, shortID(e.Task.TaskID))
	case events.SchedulerTaskEnd:
		mark := "ok"
		if !e.Task.Success {
			mark = "failed"
		}
		return fmt.Sprintf("%s %s %s", e.Type, shortID(e.Task.TaskID), mark)
	}
	return fmt.Sprintf("%s %s", e.Type, format.OneLine(e.Text, 60))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// toolRow is one line of the Tools tab's list.
type toolRow struct {
	name    string
	enabled bool
	confirm bool
	mcp     string // "unavailable" for an MCP tool whose server is down
	// header rows name an MCP server and its state; ok is true when it is
	// ready.
	header, ok bool
	// tokens is what the tool's definition costs in the prompt.
	tokens int
	// always: the tool is always allowed (it runs without asking).
	always bool
}

// view draws the pane.
func (p *sidePane) view(st *styles, width, height int, focused bool, rows []toolRow, described string, sched []string, ctxView func(width, height int) []string) []string {
	var tabs []string
	for i, n := range tabNames {
		if i == p.tab {
			tabs = append(tabs, st.tabActive.Render(" "+n+" "))
		} else {
			tabs = append(tabs, st.tabInactive.Render(" "+n+" "))
		}
	}
	out := []string{strings.Join(tabs, "")}
	body := height - 1
	width-- // one column of air after the separator
	switch p.tab {
	case tabTools:
		out = append(out, p.toolsView(st, width, body, focused, rows, described)...)
	case tabEvents:
		out = append(out, p.eventsView(st, width, body)...)
	case tabScheduler:
		for _, l := range sched {
			out = append(out, ansi.Truncate(l, width, "…"))
		}
	case tabContext:
		for _, l := range ctxView(width, body) {
			out = append(out, ansi.Truncate(l, width, "…"))
		}
	}
	for len(out) < height {
		out = append(out, "")
	}
	for i, l := range out[:height] {
		out[i] = " " + padRight(l, width)
	}
	return out[:height]
}

// toolsRooms splits the Tools tab's height between the list of nrows
// tools and the description, under the note (notes lines: the key hint
// or the pane's question) and the rule between them.
func toolsRooms(height, nrows, notes int) (list, desc int) {
	list = min(nrows, max(height/3, 3))
	return list, max(height-list-notes-1, 0)
}

// toolsKeys are the Tools tab's keys, as its hint lists them.
var toolsKeys = []string{"tab: focus", "space: on/off", "A: always", "c: category", "$: cost"}

// toolsNote is what stands between the list and the description, width
// cells wide: the question the pane asks, or the key hint, wrapped
// between its keys so that each shows whole at any pane width.
func (p *sidePane) toolsNote(width int) []string {
	if q := p.question; q != nil {
		return wrapLine(q.text, width)
	}
	var out []string
	line := ""
	for _, k := range toolsKeys {
		switch {
		case line == "":
			line = k
		case ansi.StringWidth(line+" · "+k) <= width:
			line += " · " + k
		default:
			out = append(out, line)
			line = k
		}
	}
	return append(out, line)
}

// toolsView draws the Tools tab. Positions out of range (the list or the
// description changed since they were set) are clamped here for drawing
// only; Update clamps the stored ones.
func (p *sidePane) toolsView(st *styles, width, height int, focused bool, rows []toolRow, described string) []string {
	var out []string
	note := p.toolsNote(width)
	listRoom, room := toolsRooms(height, len(rows), len(note))
	cursor := min(max(p.toolCursor, 0), max(len(rows)-1, 0))
	start := min(max(cursor-listRoom+1, 0), max(len(rows)-listRoom, 0))
	for i := start; i < min(start+listRoom, len(rows)); i++ {
		r := rows[i]
		if r.header {
			style := st.warning
			if r.ok {
				style = st.success
			}
			line := style.Render("◆ " + r.name)
			if focused && i == cursor {
				line = st.selection.Render(padRight("◆ "+r.name, width))
			}
			out = append(out, ansi.Truncate(line, width, "…"))
			continue
		}
		box := "[ ]"
		if r.enabled {
			box = "[x]"
		}
		line := box + " " + r.name
		if strings.Contains(r.name, "__") {
			line = "  " + line // under its server
		}
		if r.confirm {
			line += " ⚠"
		}
		if r.always {
			line += " always"
		}
		if r.tokens > 0 {
			line += " " + st.muted.Render(format.Tokens(r.tokens)+" tok")
		}
		if r.mcp != "" {
			line += " (" + r.mcp + ")"
		}
		if focused && i == cursor {
			line = st.selection.Render(padRight(line, width))
		} else if r.enabled {
			line = st.text.Render(line)
		} else {
			line = st.muted.Render(line)
		}
		out = append(out, line)
	}
	style := st.muted
	if p.question != nil {
		style = st.warning
	}
	for _, l := range note {
		out = append(out, style.Render(ansi.Truncate(l, width, "…")))
	}
	out = append(out, st.muted.Render(strings.Repeat("─", width)))
	desc := wrapDescription(described, width)
	scroll := min(max(p.descScroll, 0), max(len(desc)-room, 0))
	for _, l := range desc[scroll:min(scroll+room, len(desc))] {
		out = append(out, st.text.Render(l))
	}
	return out
}

func (p *sidePane) eventsView(st *styles, width, height int) []string {
	n := len(p.log)
	if n == 0 {
		return []string{st.muted.Render("No events yet.")}
	}
	end := n - min(max(p.logScroll, 0), max(n-height, 0))
	start := max(end-height, 0)
	var out []string
	for i := start; i < end; i++ {
		l := p.logAt(i)
		style := st.text
		switch l.kind {
		case events.ToolCallEnd, events.RunEnd, events.TurnEnd:
			style = st.success
		case events.Error, events.ToolCallError, events.ToolTimeout:
			style = st.errorText
		case events.ToolCallDenied, events.Notice, events.ConfirmAsk:
			style = st.warning
		}
		out = append(out, st.muted.Render(l.at.Format("15:04:05.000"))+" "+style.Render(ansi.Truncate(l.text, max(width-13, 5), "…")))
	}
	return out
}

// rowsFor lists the built-in tools with whether each is enabled (MCP tools,
// named SERVER__TOOL, are listed under their servers instead).
func rowsFor(registry *tools.Registry, enabled map[string]bool, specs map[string]tools.Spec, tokens map[string]int, isMCP func(string) bool) []toolRow {
	var rows []toolRow
	for _, n := range registry.Names() {
		if isMCP(n) {
			continue
		}
		s := specs[n]
		rows = append(rows, toolRow{name: n, enabled: enabled[n], confirm: s.RequiresConfirmation, tokens: tokens[n]})
	}
	return rows
}

// wrapDescription wraps BuildToolDescriptions text, indenting the
// continuation of a parameter line under its text so the list stays legible
// in a narrow pane.
func wrapDescription(text string, width int) []string {
	var out []string
	for _, line := range strings.Split(safe.Text(text), "\n") {
		if !strings.HasPrefix(line, "  - ") || width < 20 {
			out = append(out, wrapLine(line, width)...)
			continue
		}
		for i, l := range wrapLine(strings.TrimPrefix(line, "  - "), width-4) {
			if i == 0 {
				out = append(out, "  - "+l)
			} else {
				out = append(out, "    "+l)
			}
		}
	}
	return out
}
