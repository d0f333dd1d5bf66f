package tui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// quitWindow is how long the first ctrl+c on an idle prompt waits for the
// second.
const quitWindow = 2 * time.Second

func (m *model) handleKey(k tea.KeyMsg) tea.Cmd {
	// gap is how long the keyboard has been quiet: since the last key
	// typed as text (tab, arrows and scrolling are not typing).
	// Keys typed into a form of the side pane are deliberate input there,
	// not prose that lost its way.
	now := m.now()
	gap := now.Sub(m.lastTypedAt)
	if (typingKey(k) || k.Type == tea.KeyEnter) && (m.sched == nil || !m.sched.ModalOpen()) {
		m.lastTypedAt = now
	}
	if m.width < MinWidth || m.height < MinHeight {
		if k.String() == "ctrl+c" {
			return m.ctrlC()
		}
		return nil
	}
	if m.dialog.open() {
		return m.dialogKey(k, gap)
	}
	if m.held != nil {
		if k.String() == "ctrl+c" {
			m.held = nil
			return m.ctrlC()
		}
		m.breakHold(k)
		return nil
	}
	if m.overlay != overlayNone {
		return m.overlayKey(k)
	}
	if m.sched != nil && m.sched.ModalOpen() {
		// Typing into the pane's form is working in the pane: what
		// came before it was not prose for the prompt.
		m.paneTyped, m.lastTypedAt = nil, time.Time{}
		return m.sched.Key(k, m.now())
	}
	if cmd, handled := m.convoKey(k); handled {
		return cmd
	}
	rc := m.renderCtx(m.transcriptWidth())
	switch k.String() {
	case "ctrl+c":
		return m.ctrlC()
	case "esc":
		if m.running {
			m.cancelRun()
			return nil
		}
		if m.cancelEval() || m.stopPull() || m.dismissOffer() {
			return nil
		}
		if m.focusPane {
			m.focusPane = false
			return nil
		}
		m.suggest = nil
		m.layout()
		return nil
	case "ctrl+home":
		m.transcript.top(rc)
		return nil
	case "ctrl+end":
		m.transcript.bottom()
		return nil
	case "ctrl+e":
		m.expand = !m.expand
		return nil
	case "ctrl+r":
		m.showThinking = !m.showThinking
		return nil
	case "ctrl+t":
		m.pane.visible = !m.pane.visible
		if !m.pane.visible {
			m.focusPane = false
		}
		m.layout()
		return m.paneShown()
	case "f3", "f4", "f5", "f6":
		m.pane.visible = true
		m.pane.tab = int(k.String()[1] - '3')
		m.layout()
		return m.paneShown()
	case "f2":
		return m.toggleMouse()
	case "ctrl+y":
		return m.copyLast()
	case "ctrl+p":
		if cmd, ok := m.acceptOffer(); ok {
			return cmd
		}
		if cmd, ok := m.acceptFork(); ok {
			return cmd
		}
	}
	if m.focusPane {
		if m.pane.question != nil {
			return m.questionKey(k)
		}
		if cmd, handled := m.paneGuard(k, gap); handled {
			return cmd
		}
		return m.paneKey(k)
	}
	page := max(m.transcript.height-2, 1)
	empty := m.input.value() == ""
	switch k.String() {
	case "pgup":
		m.transcript.scroll(rc, -page)
		return nil
	case "pgdown":
		m.transcript.scroll(rc, page)
		return nil
	case "ctrl+u":
		m.transcript.scroll(rc, -page/2)
		return nil
	case "ctrl+d":
		m.transcript.scroll(rc, page/2)
		return nil
	case "home":
		if empty {
			m.transcript.top(rc)
			return nil
		}
	case "end":
		if empty {
			m.transcript.bottom()
			return nil
		}
	case "?":
		if empty {
			m.overlay, m.helpScroll = overlayHelp, 0
			return nil
		}
	case "tab":
		if empty && m.pane.visible {
			m.focusPane = true
			return nil
		}
		if strings.HasPrefix(m.input.value(), "/") {
			m.suggest = m.input.complete(m.completions)
			m.layout()
			return nil
		}
	case "up":
		if m.input.historyUp() {
			return nil
		}
	case "down":
		if m.input.historyDown() {
			return nil
		}
	case "enter":
		return m.submit()
	}
	cmd := m.input.update(k)
	if len(m.suggest) > 0 && !strings.HasPrefix(m.input.value(), "/") {
		m.suggest = nil
		m.layout()
	}
	return cmd
}

// ctrlC is what ctrl+c does wherever it is pressed (an overlay, the
// too-small screen): cancel the running turn; else clear the prompt
// (what it held goes to the history); else
// quit when pressed twice within quitWindow. A turn already cancelling
// counts as idle, so a turn that will not stop cannot keep jarvis open.
func (m *model) ctrlC() tea.Cmd {
	if m.running && m.cancel != nil {
		m.cancelRun()
		return nil
	}
	if text := m.input.value(); text != "" {
		// Cleared, not lost: ↑ brings it back.
		m.input.remember(strings.TrimSpace(text))
		m.input.reset()
		return nil
	}
	if m.quitting || !m.quitArmed.IsZero() && m.now().Sub(m.quitArmed) < quitWindow {
		return m.quit()
	}
	m.quitArmed = m.now()
	return m.setStatusFor("press ctrl+c again to quit", quitWindow)
}

// submit sends the prompt or runs the slash command.
func (m *model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.value())
	if text == "" {
		return nil
	}
	if m.suggest != nil {
		m.suggest = nil
		m.layout()
	}
	if strings.HasPrefix(text, "/") {
		m.input.remember(text)
		m.input.reset()
		return m.runCommand(text)
	}
	if m.running {
		return m.setStatus("a turn is running: wait for it, or esc to cancel it")
	}
	if m.lease.elsewhere != nil {
		return m.holdAgain() // the text stays in the prompt
	}
	if m.convo.editing != nil {
		return m.submitEdit(text)
	}
	m.input.remember(text)
	m.input.reset()
	return m.startRun(text)
}

func (m *model) paneKey(k tea.KeyMsg) tea.Cmd {
	if m.pane.tab == tabScheduler && m.sched != nil {
		switch k.String() {
		case "tab", "left", "right":
		default:
			return m.sched.Key(k, m.now())
		}
	}
	switch k.String() {
	case "tab":
		m.focusPane, m.pane.question = false, nil
	case "left":
		m.pane.tab = (m.pane.tab + tabCount - 1) % tabCount
		return m.paneShown()
	case "right":
		m.pane.tab = (m.pane.tab + 1) % tabCount
		return m.paneShown()
	case "up", "k":
		m.paneScroll(-1, false)
	case "down", "j":
		m.paneScroll(1, false)
	case "pgup":
		m.paneScroll(-m.panePage(), true)
	case "pgdown":
		m.paneScroll(m.panePage(), true)
	case "ctrl+u":
		m.paneScroll(-max(m.panePage()/2, 1), true)
	case "ctrl+d":
		m.paneScroll(max(m.panePage()/2, 1), true)
	case " ", "enter":
		if m.pane.tab == tabEvents {
			m.pane.toggleEvent(m.logLayout())
		}
	case "c":
		m.pane.showCategory = !m.pane.showCategory
	case "$":
		m.pane.showCost = !m.pane.showCost
	case "r":
		if m.pane.tab == tabContext {
			return m.renderContext()
		}
	case "home":
		switch m.pane.tab {
		case tabContext:
			m.ctab.scroll = 0
		case tabEvents:
			m.pane.moveLogCursor(-len(m.pane.log), m.logLayout())
		}
	case "end":
		if m.pane.tab == tabEvents {
			m.pane.moveLogCursor(len(m.pane.log), m.logLayout())
		}
	}
	m.clampPane()
	return nil
}

// paneScroll moves the focused tab's content by delta lines (positive is
// down): on the Tools tab the cursor, or the description for pages; on
// the Events tab the selected event, or the log for pages (its newest
// event is at the bottom).
func (m *model) paneScroll(delta int, page bool) {
	switch {
	case m.pane.tab == tabContext:
		m.ctab.scroll += delta
	case m.pane.tab == tabEvents && page:
		m.pane.pageLog(delta, m.logLayout())
	case m.pane.tab == tabEvents:
		m.pane.moveLogCursor(delta, m.logLayout())
	case page:
		m.pane.descScroll += delta
	default:
		m.pane.toolCursor += delta
	}
}

// logLayout is the Events tab's width and the rows its events take.
func (m *model) logLayout() logLayout {
	body := max(m.transcript.height-1, 1) // under the tab names
	return logLayout{width: m.paneWidth() - 1, room: logRoom(body, m.focusPane)}
}

// panePage is a page of the focused tab: what its scrolling part shows.
func (m *model) panePage() int {
	body := max(m.transcript.height-1, 1) // under the tab names
	switch m.pane.tab {
	case tabEvents:
		return m.logLayout().room
	case tabContext:
		return body
	}
	_, desc := toolsRooms(body, len(m.toolRows()), len(m.pane.toolsNote(m.paneWidth()-1)))
	return max(desc, 1)
}

// clampPane keeps the pane's cursor and scroll positions in range for
// what it shows now. It runs in Update (after keys, resizes and tool
// changes) so View only reads them.
func (m *model) clampPane() {
	p := m.pane
	rows := m.toolRows()
	p.toolCursor = min(max(p.toolCursor, 0), max(len(rows)-1, 0))
	if !p.visible {
		return
	}
	body := max(m.transcript.height-1, 1)
	p.clampLog(m.logLayout())
	_, room := toolsRooms(body, len(rows), len(p.toolsNote(m.paneWidth()-1)))
	desc := wrapDescription(m.describeTools(), m.paneWidth()-1)
	p.descScroll = min(max(p.descScroll, 0), max(len(desc)-room, 0))
	if p.tab == tabContext {
		n := len(m.ctab.lines(m.st, m.paneWidth()-1, m.agentName, len(m.conv.Messages)))
		m.ctab.scroll = min(max(m.ctab.scroll, 0), max(n-body, 0))
	}
}

// toggleTool enables or disables the tool under the pane's cursor.
func (m *model) toggleTool() tea.Cmd {
	rows := m.toolRows()
	if len(rows) == 0 {
		return nil
	}
	row := rows[min(max(m.pane.toolCursor, 0), len(rows)-1)]
	if row.header {
		return nil
	}
	name := row.name
	next := make([]string, 0, len(m.enabled)+1)
	on := false
	for _, n := range m.enabled {
		if n == name {
			on = true
			continue
		}
		next = append(next, n)
	}
	if !on {
		next = append(next, name)
	}
	return m.setTools(next)
}

func (m *model) overlayKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.ctrlC()
	}
	switch m.overlay {
	case overlaySessions:
		return m.sessionsKey(k)
	case overlayHelp:
		return m.helpKey(k)
	}
	return nil
}

func (m *model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if m.dialog.open() || m.overlay != overlayNone {
		return nil
	}
	rc := m.renderCtx(m.transcriptWidth())
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		m.transcript.scroll(rc, -3)
	case tea.MouseButtonWheelDown:
		m.transcript.scroll(rc, 3)
	}
	return nil
}

func (m *model) toggleMouse() tea.Cmd {
	m.mouse = !m.mouse
	if m.mouse {
		return tea.Batch(m.setStatus("mouse capture on (F2 turns it off to select text)"), tea.EnableMouseCellMotion)
	}
	return tea.Batch(m.setStatus("mouse capture off: select text with the mouse; F2 turns it back on"), tea.DisableMouse)
}

// paneShown starts what a newly shown tab needs (the Scheduler tab's clock
// for its relative times).
func (m *model) paneShown() tea.Cmd {
	if m.pane.visible && m.pane.tab == tabScheduler && m.sched != nil {
		return m.sched.Shown(m.now())
	}
	if m.pane.visible && m.pane.tab == tabContext {
		return m.refreshContext(true)
	}
	return nil
}
