// Package eventstab is the side pane's Events tab: the live log of the
// bus's events (runs, turns, tool calls, approvals, notices, scheduled
// runs), one line an event cut to the pane, the newest at the bottom.
// With the pane focused, ↑ ↓ (j k) select an event and enter or space
// shows it in full under its time: the whole line, and what the line
// leaves out (a call's arguments and result, the question a run answers,
// a notice's text); pgup pgdn page, home goes to the oldest, end to the
// newest.
package eventstab

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// eventLogSize bounds the Events tab so memory stays flat over long sessions.
const eventLogSize = 1000

// eventDetailLimit caps what an event keeps to be shown in full: a tool
// result is up to events.ResultLimit, and a thousand of them would hold
// ten megabytes for a log few open.
const eventDetailLimit = 4096

// Hint is the tab's key help, on its last line while it has focus.
const Hint = "↑↓ select · enter: in full · end: newest"

// timeWidth is the width of an event's time and the space after it:
// the full text is indented under the line's.
const timeWidth = 13

// Tab is the Events tab.
type Tab struct {
	// A ring of the latest events, the view logScroll events up from
	// the newest, the selected event (logCursor, its number; 0: the
	// newest) and those shown in full.
	log       []logLine
	logStart  int
	logScroll int
	logSeq    int
	logCursor int
	logOpen   map[int]bool

	size    tabs.Size
	focused bool
}

// New makes the tab.
func New() *Tab { return &Tab{} }

// Title is the tab's name.
func (p *Tab) Title() string { return "Events" }

// Hint is the tab's keys.
func (p *Tab) Hint() string { return Hint }

// Update records the bus's events and follows the pane's size and focus.
func (p *Tab) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case events.Event:
		p.Record(msg)
	case tabs.Size:
		p.size = msg
	case tabs.Focus:
		p.focused = msg.Focused
		p.clampLog(p.layout())
	case tabs.Refresh:
		if msg.Visible {
			p.clampLog(p.layout())
		}
	}
	return nil
}

// Key moves the selection, pages, and opens the selected event.
func (p *Tab) Key(k tea.KeyMsg) tea.Cmd {
	lay := p.layout()
	if step, ok := look.PageStep(k.String(), lay.room); ok {
		p.pageLog(step, lay)
		p.clampLog(lay)
		return nil
	}
	switch k.String() {
	case "up", "k":
		p.moveLogCursor(-1, lay)
	case "down", "j":
		p.moveLogCursor(1, lay)
	case " ", "enter":
		p.toggleEvent(lay)
	case "home":
		p.moveLogCursor(-len(p.log), lay)
	case "end":
		p.moveLogCursor(len(p.log), lay)
	}
	p.clampLog(lay)
	return nil
}

// Scroll is how many events the view is up from the newest; SetScroll
// puts it there (Update keeps it in range).
func (p *Tab) Scroll() int     { return p.logScroll }
func (p *Tab) SetScroll(n int) { p.logScroll = n }

// Page is a page of the log: the rows its events take.
func (p *Tab) Page() int { return p.layout().room }

// layout is the tab's width and the rows its events take.
func (p *Tab) layout() logLayout {
	return logLayout{width: p.size.Width, room: logRoom(max(p.size.Height, 1), p.focused)}
}

type logLine struct {
	seq  int // its number among the events recorded, from 1
	at   time.Time
	text string
	// whole is the line uncut, "" when text is; detail is what the line
	// leaves out, "" when nothing.
	whole, detail string
	kind          events.Type
}

// Record adds an event to the log (deltas are not logged one by one). A
// view scrolled up, or with an event other than the newest selected,
// keeps its place as events arrive.
func (p *Tab) Record(e events.Event) {
	text := safe.Text(describeEvent(e))
	if text == "" {
		return
	}
	p.logSeq++
	l := logLine{seq: p.logSeq, at: e.Time, text: text, kind: e.Type, detail: safe.Text(format.Cut(eventDetail(e), eventDetailLimit))}
	if whole := safe.Text(format.Cut(wholeEvent(e), eventDetailLimit)); whole != text {
		l.whole = whole
	}
	if p.logScroll > 0 || p.logCursor != 0 {
		p.logScroll++
	}
	if len(p.log) < eventLogSize {
		p.log = append(p.log, l)
		return
	}
	delete(p.logOpen, p.log[p.logStart].seq)
	p.log[p.logStart] = l
	p.logStart = (p.logStart + 1) % eventLogSize
}

func (p *Tab) logAt(i int) logLine { return p.log[(p.logStart+i)%len(p.log)] }

// describeEvent is the Events tab's line for an event.
func describeEvent(e events.Event) string {
	t := e.Tool
	switch e.Type {
	case events.Token, events.Thinking, events.ToolOutput:
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

// wholeEvent is an event's line without the cuts describeEvent makes
// to keep it to a line (the arguments, a notice's text).
func wholeEvent(e events.Event) string {
	switch e.Type {
	case events.ToolCallStart:
		return fmt.Sprintf("%s %s %s", e.Type, e.Tool.Tool, format.Args(e.Tool.Arguments, 0))
	case events.Token, events.Thinking, events.ToolOutput, events.ToolCallEnd, events.ToolCallDenied, events.ToolCallError, events.ToolTimeout,
		events.ConfirmAsk, events.ConfirmAnswer, events.TurnEnd, events.TurnStart, events.ContextCompacted,
		events.RunStart, events.RunEnd, events.SchedulerTaskStart, events.SchedulerTaskEnd:
		return describeEvent(e)
	}
	return fmt.Sprintf("%s %s", e.Type, strings.TrimSpace(e.Text))
}

// eventDetail is what an event's line leaves out even whole, for showing
// it in full: a call's arguments and result, a run's question, a task's
// prompt and result.
func eventDetail(e events.Event) string {
	var parts []string
	add := func(label, text string) {
		if text = strings.TrimSpace(text); text != "" {
			parts = append(parts, label+text)
		}
	}
	switch e.Type {
	case events.ToolCallStart:
		add("call ", e.Tool.CallID)
	case events.ConfirmAsk, events.ToolCallEnd, events.ToolCallDenied, events.ToolCallError, events.ToolTimeout:
		add("call "+e.Tool.CallID+" · arguments: ", format.Args(e.Tool.Arguments, 0))
		add("result: ", e.Tool.Result)
		add("", e.Text)
	case events.RunStart:
		add("question: ", e.Text)
		add("model: ", e.Run.Model)
	case events.SchedulerTaskStart, events.SchedulerTaskEnd:
		add("task ", e.Task.TaskID)
		add("prompt: ", e.Task.Prompt)
		add("result: ", e.Task.Result)
		add("error: ", e.Task.Error)
	}
	return strings.Join(parts, "\n")
}

// logLayout is the Events tab's width and the rows its events take.
type logLayout struct{ width, room int }

// logRoom is how many of the tab's height lines show events: the hint
// takes the last one while the pane has focus.
func logRoom(height int, focused bool) int {
	if focused {
		height--
	}
	return max(height, 1)
}

// eventRows draws event i: its line, and when it is open its whole text
// and detail under it, each row at most width cells.
func (p *Tab) eventRows(st look.Styles, i, width int, selected bool) []string {
	l := p.logAt(i)
	style := st.Text
	switch l.kind {
	case events.ToolCallEnd, events.RunEnd, events.TurnEnd:
		style = st.Success
	case events.Error, events.ToolCallError, events.ToolTimeout:
		style = st.Error
	case events.ToolCallDenied, events.Notice, events.ConfirmAsk:
		style = st.Warning
	}
	stamp := l.at.Format("15:04:05.000") + " "
	textW := max(width-timeWidth, 5)
	if !p.logOpen[l.seq] {
		head := stamp + ansi.Truncate(l.text, textW, "…")
		if selected {
			return []string{st.Selection.Render(termtext.PadRight(head, width))}
		}
		return []string{st.Muted.Render(stamp) + style.Render(ansi.Truncate(l.text, textW, "…"))}
	}
	text := termtext.Wrap(cmp.Or(l.whole, l.text), textW)
	var detail []string
	if l.detail != "" {
		detail = termtext.Wrap(l.detail, textW)
	}
	out := make([]string, 0, len(text)+len(detail))
	for j, r := range text {
		lead := strings.Repeat(" ", timeWidth)
		if j == 0 {
			lead = stamp
		}
		if j == 0 && selected {
			out = append(out, st.Selection.Render(termtext.PadRight(lead+r, width)))
			continue
		}
		out = append(out, st.Muted.Render(lead)+style.Render(r))
	}
	for _, r := range detail {
		out = append(out, strings.Repeat(" ", timeWidth)+st.Text.Render(r))
	}
	return out
}

// eventHeight is how many rows event i takes.
func (p *Tab) eventHeight(i, width int) int {
	l := p.logAt(i)
	if !p.logOpen[l.seq] {
		return 1
	}
	textW := max(width-timeWidth, 5)
	n := len(termtext.Wrap(cmp.Or(l.whole, l.text), textW))
	if l.detail != "" {
		n += len(termtext.Wrap(l.detail, textW))
	}
	return n
}

// logBottom is the event at the bottom of the view.
func (p *Tab) logBottom() int {
	n := len(p.log)
	return n - 1 - min(max(p.logScroll, 0), n-1)
}

// logSelected is the selected event's place in the log: the newest when
// none was chosen or the chosen one has left the ring.
func (p *Tab) logSelected() int {
	n := len(p.log)
	if p.logCursor == 0 || n == 0 {
		return n - 1
	}
	return min(max(p.logCursor-p.logAt(0).seq, 0), n-1)
}

// logTop is the first event whose line shows when event b is at the
// bottom of room rows.
func (p *Tab) logTop(b, width, room int) int {
	used := 0
	for i := b; i >= 0; i-- {
		used += p.eventHeight(i, width)
		if used > room {
			return min(i+1, b)
		}
	}
	return 0
}

// clampLog keeps the log's view and selection in range: the view never
// scrolls past the point where the oldest event is at the top.
func (p *Tab) clampLog(lay logLayout) {
	width, room := lay.width, lay.room
	n := len(p.log)
	if n == 0 {
		p.logScroll, p.logCursor = 0, 0
		return
	}
	if p.logCursor != 0 && (p.logCursor < p.logAt(0).seq || p.logCursor > p.logAt(n-1).seq) {
		p.logCursor = 0
	}
	// The lowest bottom from which the oldest event is in view.
	lowest, used := n-1, 0
	for i := 0; i < n; i++ {
		if used += p.eventHeight(i, width); used >= room {
			lowest = i
			break
		}
	}
	p.logScroll = min(max(p.logScroll, 0), n-1-lowest)
}

// moveLogCursor selects the event delta events down (up when negative)
// and scrolls the view to show it: its first line, and all of it when it
// fits.
func (p *Tab) moveLogCursor(delta int, lay logLayout) {
	width, room := lay.width, lay.room
	n := len(p.log)
	if n == 0 {
		return
	}
	i := min(max(p.logSelected()+delta, 0), n-1)
	p.logCursor = p.logAt(i).seq
	b := p.logBottom()
	switch {
	case i > b:
		b = i
	case i < p.logTop(b, width, room):
		b = i
		for b+1 < n && p.rowsBetween(i, b+1, width) <= room {
			b++
		}
	}
	p.logScroll = n - 1 - b
	if i == n-1 {
		p.logCursor = 0 // the newest, as events keep coming
	}
}

// rowsBetween counts the rows of events from to to, both included.
func (p *Tab) rowsBetween(from, to, width int) int {
	n := 0
	for i := from; i <= to; i++ {
		n += p.eventHeight(i, width)
	}
	return n
}

// pageLog scrolls the view by delta rows' worth of events and keeps the
// selection in it.
func (p *Tab) pageLog(delta int, lay logLayout) {
	width, room := lay.width, lay.room
	p.logScroll -= delta
	p.clampLog(lay)
	b := p.logBottom()
	top := p.logTop(b, width, room)
	switch i := p.logSelected(); {
	case i > b:
		p.logCursor = p.logAt(b).seq
	case i < top:
		p.logCursor = p.logAt(top).seq
	}
	if p.logCursor != 0 && p.logCursor == p.logAt(len(p.log)-1).seq {
		p.logCursor = 0
	}
}

// toggleEvent shows the selected event in full, or its line again.
func (p *Tab) toggleEvent(lay logLayout) {
	if len(p.log) == 0 {
		return
	}
	seq := p.logAt(p.logSelected()).seq
	if p.logOpen == nil {
		p.logOpen = map[int]bool{}
	}
	if p.logOpen[seq] {
		delete(p.logOpen, seq)
	} else {
		p.logOpen[seq] = true
	}
	p.clampLog(lay)
	p.moveLogCursor(0, lay) // an event opened at the bottom grows upwards into view
}

// eventsView draws the tab: the events up to the one at the bottom of
// the view, and the key hint while the pane has focus.
func (p *Tab) View(st look.Styles, width, height int) []string {
	focused := p.focused
	n := len(p.log)
	if n == 0 {
		return []string{st.Muted.Render("No events yet.")}
	}
	room := logRoom(height, focused)
	b := p.logBottom()
	sel := -1
	if focused {
		sel = p.logSelected()
	}
	var blocks [][]string
	used, i := 0, b
	for ; i >= 0 && used < room; i-- {
		rows := p.eventRows(st, i, width, i == sel)
		blocks = append(blocks, rows)
		used += len(rows)
	}
	var rows []string
	for j := len(blocks) - 1; j >= 0; j-- {
		rows = append(rows, blocks[j]...)
	}
	switch {
	case i < 0 && used < room:
		// The oldest event is in view: newer ones fill the rest.
		for j := b + 1; j < n && len(rows) < room; j++ {
			rows = append(rows, p.eventRows(st, j, width, j == sel)...)
		}
		rows = rows[:min(len(rows), room)]
	case len(blocks[0]) >= room:
		rows = blocks[0][:room] // the bottom event alone fills the view: its start
	default:
		rows = rows[len(rows)-room:]
	}
	if focused {
		for len(rows) < room {
			rows = append(rows, "")
		}
		rows = append(rows, st.Muted.Render(ansi.Truncate(Hint, width, "…")))
	}
	return rows
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
