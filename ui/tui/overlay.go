package tui

import (
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// An overlay is a window over the screen: the help, the sessions picker,
// a confirmation. The model keeps them in one stack; the top one is drawn
// and gets the keys, and closing it shows the one under it again. Their
// state stays with what they show (m.dialog, m.sessions, m.helpScroll);
// the stack decides which of them is in front.
type overlay interface {
	// update handles a key while the overlay is on top; gap is how long
	// the keyboard had been quiet before it (the typing guard's).
	update(k tea.KeyMsg, gap time.Duration) tea.Cmd
	// view is the overlay's box for a screen width cells wide and height
	// lines high (the body under the header).
	view(width, height int) string
	// captures reports whether it takes every key before anything else
	// sees it, ctrl+c and a held key included (a confirmation, whose
	// guard handles both). Such an overlay is never covered: one opened
	// while it waits goes under it.
	captures() bool
	// closed reports that it has gone by itself (the last confirmation
	// answered): the stack skips and drops it.
	closed() bool
	// close is what dropping it from the stack does.
	close()
}

// overlayStack is the model's overlays, the front one last.
type overlayStack struct{ s []overlay }

// top is the front overlay still open, nil when none is.
func (o *overlayStack) top() overlay {
	for i := len(o.s) - 1; i >= 0; i-- {
		if !o.s[i].closed() {
			return o.s[i]
		}
	}
	return nil
}

// push puts x in front (again, if it was in the stack), under any
// overlay that captures the keys unless x does too.
func (o *overlayStack) push(x overlay) {
	o.s = slices.DeleteFunc(o.s, func(y overlay) bool { return y == x || y.closed() })
	i := len(o.s)
	for i > 0 && o.s[i-1].captures() && !x.captures() {
		i--
	}
	o.s = slices.Insert(o.s, i, x)
}

// pop closes the front overlay.
func (o *overlayStack) pop() {
	t := o.top()
	if t == nil {
		return
	}
	o.s = slices.DeleteFunc(o.s, func(y overlay) bool { return y == t || y.closed() })
	t.close()
}

// overlayKey gives a key to the front overlay; handled is false when
// there is none. A capturing one sees the key first; the others after
// ctrl+c and a held key have been dealt with.
func (m *model) overlayKey(k tea.KeyMsg, gap time.Duration) (tea.Cmd, bool) {
	t := m.overlays.top()
	if t == nil {
		return nil, false
	}
	if t.captures() {
		return t.update(k, gap), true
	}
	if m.held != nil {
		if k.String() == "ctrl+c" {
			m.held = nil
			return m.ctrlC(), true
		}
		m.breakHold(k)
		return nil, true
	}
	if k.String() == "ctrl+c" {
		return m.ctrlC(), true
	}
	return t.update(k, gap), true
}

// showHelp opens the help at its top.
func (m *model) showHelp() {
	m.helpScroll = 0
	m.overlays.push(helpOverlay{m})
}

// helpOverlay is the help (help.go).
type helpOverlay struct{ m *model }

func (h helpOverlay) update(k tea.KeyMsg, _ time.Duration) tea.Cmd { return h.m.helpKey(k) }
func (h helpOverlay) view(int, int) string                         { return h.m.helpView() }
func (h helpOverlay) captures() bool                               { return false }
func (h helpOverlay) closed() bool                                 { return false }
func (h helpOverlay) close()                                       { h.m.helpScroll = 0 }

// sessionsPicker is the /sessions list (session_picker.go).
type sessionsPicker struct{ m *model }

func (p sessionsPicker) update(k tea.KeyMsg, _ time.Duration) tea.Cmd { return p.m.sessionsKey(k) }
func (p sessionsPicker) view(width, height int) string {
	m := p.m
	w := sessionsWidth(width)
	return lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Width(w).
		Render(strings.Join(m.sessions.view(m.st, w-2, height-2), "\n"))
}
func (p sessionsPicker) captures() bool { return false }
func (p sessionsPicker) closed() bool   { return false }
func (p sessionsPicker) close()         {}

// confirmOverlay is the approval dialog (dialog*.go): it is open while a
// confirmation waits, and its keys go through the typing guard
// (guard.go) in dialogKey.
type confirmOverlay struct{ m *model }

func (c confirmOverlay) update(k tea.KeyMsg, gap time.Duration) tea.Cmd { return c.m.dialogKey(k, gap) }
func (c confirmOverlay) view(width, height int) string {
	return c.m.dialog.view(c.m.st, width, height)
}
func (c confirmOverlay) captures() bool { return true }
func (c confirmOverlay) closed() bool   { return !c.m.dialog.open() }
func (c confirmOverlay) close()         { c.m.dialog.denyAll() }
