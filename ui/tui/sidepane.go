package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

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

	// Events tab (eventstab.go): a ring of the latest events, the view
	// logScroll events up from the newest, the selected event (logCursor,
	// its number; 0: the newest) and those shown in full.
	log       []logLine
	logStart  int
	logScroll int
	logSeq    int
	logCursor int
	logOpen   map[int]bool
}

func newSidePane() *sidePane { return &sidePane{showCategory: true} }

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
		out = append(out, p.eventsView(st, width, body, focused)...)
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
