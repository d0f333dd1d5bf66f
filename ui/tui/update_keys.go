package tui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
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
	modal, modalOpen := m.pane.Modal()
	if (typingKey(k) || k.Type == tea.KeyEnter) && !modalOpen {
		m.lastTypedAt = now
	}
	if m.width < MinWidth || m.height < MinHeight {
		if k.String() == "ctrl+c" {
			return m.ctrlC()
		}
		// What is typed or pasted while the screen is too small to show
		// it still goes to the prompt, where it waits: nothing is lost,
		// and nothing is sent or answered unseen.
		if typingKey(k) {
			return m.input.update(k)
		}
		return nil
	}
	if cmd, handled := m.overlayKey(k, gap); handled {
		return cmd
	}
	if m.held != nil {
		if k.String() == "ctrl+c" {
			m.held = nil
			return m.ctrlC()
		}
		m.breakHold(k)
		return nil
	}
	if modalOpen {
		// Typing into the pane's form is working in the pane: what
		// came before it was not prose for the prompt.
		m.paneTyped, m.lastTypedAt = nil, time.Time{}
		return modal.(tabs.Tab).Key(k)
	}
	if cmd, handled := m.convoKey(k); handled {
		return cmd
	}
	rc := m.renderCtx(m.transcriptWidth())
	switch k.String() {
	case "ctrl+c":
		return m.ctrlC()
	case "esc":
		if m.run.active {
			m.cancelRun()
			return nil
		}
		if m.cancelEval() || m.stopPull() || m.dismissOffer() {
			return nil
		}
		if m.pane.Focused() {
			return m.pane.Focus(false)
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
		cmd := m.pane.Show(!m.pane.Visible, m.now())
		m.layout()
		return cmd
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
	if i, ok := m.pane.FKey(k.String()); ok {
		m.pane.Visible = true
		m.layout()
		return m.pane.Select(i, m.now())
	}
	if m.pane.Focused() {
		if m.tools.Question() != nil {
			return m.questionKey(k)
		}
		if cmd, handled := m.paneGuard(k, gap); handled {
			return cmd
		}
		return m.paneKey(k)
	}
	page := max(m.transcript.height-2, 1)
	empty := m.input.value() == ""
	if step, ok := look.PageStep(k.String(), page); ok {
		m.transcript.scroll(rc, step)
		return nil
	}
	switch k.String() {
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
			m.showHelp()
			return nil
		}
	case "tab":
		if empty && m.pane.Visible {
			return m.pane.Focus(true)
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
	if m.run.active && m.run.cancel != nil {
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
	if m.run.active {
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

// paneKey is a key for the focused side pane, past its guard. tab takes
// the Tools tab's question away with the focus.
func (m *model) paneKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == "tab" {
		m.tools.Ask(nil)
	}
	return m.pane.Key(k, m.now())
}

// clampPane keeps the tabs' cursors and scroll positions in range for
// what they show now. It runs in Update (after keys, resizes and tool
// changes) so View only reads them; the tabs start nothing for it.
func (m *model) clampPane() {
	m.pane.Update(tabs.Refresh{})
}

func (m *model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if m.overlays.top() != nil {
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
