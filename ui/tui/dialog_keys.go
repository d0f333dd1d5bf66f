package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/tools"
)

// dialogKey routes a key while the dialog is open (see guard.go for why
// keys count only when deliberate). gap is the time since the key before.
func (m *model) dialogKey(k tea.KeyMsg, gap time.Duration) tea.Cmd {
	now := m.now()
	d := &m.dialog
	if k.String() == "ctrl+c" {
		m.cancelRun()
		return nil
	}
	if m.held != nil {
		m.breakHold(k)
		return nil
	}
	switch d.ed.mode {
	case modeReason:
		return m.reasonKey(k)
	case modeEdit:
		return m.editKey(k)
	}
	scroll := func(delta int) tea.Cmd {
		d.scroll += delta
		d.clampScroll(m.st, m.width, m.transcript.height)
		return nil
	}
	switch k.String() {
	case "up":
		return scroll(-1)
	case "down":
		return scroll(1)
	case "pgup":
		return scroll(-10)
	case "pgdown":
		return scroll(10)
	case "tab":
		d.focused, d.typed = true, false
		return nil
	}
	if d.ed.external {
		return nil
	}
	if now.Sub(d.opened) >= DialogGrace && k.String() == "esc" {
		switch d.ed.mode {
		case modeReview:
			d.ed.mode, d.scroll = modeAsk, 0
			return nil
		case modeAlways:
			d.ed.mode = d.ed.back
			return nil
		}
		d.answer(tools.Deny, now)
		return m.ensureTick()
	}
	act, what := m.dialogAction(k)
	if act == nil || !d.armed(now, gap) {
		if typingKey(k) {
			m.toDraft(k)
			d.typed, d.focused = true, false
		}
		return nil
	}
	id := d.queue[0].req.Call.ID
	return m.hold(k, what, func() tea.Cmd {
		if !d.open() || d.queue[0].req.Call.ID != id {
			return nil // answered or withdrawn meanwhile
		}
		return act()
	})
}

// dialogAction is what an answer key does in the dialog's mode, and what
// the status bar says while it is held; nil for a key that answers
// nothing.
func (m *model) dialogAction(k tea.KeyMsg) (func() tea.Cmd, string) {
	d := &m.dialog
	req := d.queue[0].req
	answer := func(dec tools.Decision) func() tea.Cmd {
		return func() tea.Cmd {
			a := tools.Answer{Decision: dec}
			if d.ed.edited != nil && (d.ed.mode == modeReview || d.ed.back == modeReview) {
				a.Arguments = d.ed.edited
			}
			if dec == tools.AllowAlways {
				m.markAlways(req.Name(), true)
			}
			d.answerFull(a, m.now())
			return m.ensureTick()
		}
	}
	refused := d.ed.mode == modeReview && d.ed.check.Refusal != nil
	switch d.ed.mode {
	case modeAlways:
		if k.String() == "y" {
			return answer(tools.AllowAlways), "always allowing " + req.Name() + "…"
		}
		if k.String() == "n" {
			return func() tea.Cmd { d.ed.mode = d.ed.back; return nil }, ""
		}
		return nil, ""
	}
	switch k.String() {
	case "a":
		if !refused {
			return answer(tools.AllowOnce), "allowing once…"
		}
	case "s":
		if !refused {
			return answer(tools.AllowSession), "allowing " + d.scope().Of(req.Name()) + " for this session…"
		}
	case "A":
		if !req.CanAlways || refused {
			return nil, ""
		}
		if d.scope().AlwaysIsWide() {
			return func() tea.Cmd { d.ed.back, d.ed.mode = d.ed.mode, modeAlways; return nil }, ""
		}
		return answer(tools.AllowAlways), "always allowing " + d.scope().Of(req.Name()) + "…"
	case "d":
		return answer(tools.Deny), "denying…"
	case "r":
		if d.ed.mode == modeAsk {
			return func() tea.Cmd {
				d.ed.mode = modeReason
				d.ed.reason = textinput.New()
				d.ed.reason.Prompt = "Reason: "
				d.ed.reason.Placeholder = "why not, or what to do instead"
				d.ed.reason.CharLimit = 500
				d.ed.reason.Cursor.SetMode(cursor.CursorStatic)
				d.ed.reason.Focus()
				return nil
			}, ""
		}
	case "e":
		if req.Validate != nil {
			return m.startEdit, "opening the editor…"
		}
	}
	// enter and space deliberately answer nothing: a stray key must never
	// approve a call.
	return nil, ""
}
