package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Typing never approves. A person types the next question while a turn
// runs, and a dialog can open under their fingers at any moment; a
// focused side pane can take a sentence meant for the prompt. So keys
// that answer a dialog or change what may run count only when they are
// plainly deliberate:
//
//   - after the dialog's grace period (DialogGrace from its opening);
//   - after a quiet period (DialogQuiet since the last key typed as text;
//     tab, arrows and scrolling are not typing): a key in a run of typing
//     is typing;
//   - and held for DialogHold before they act: a key that another follows
//     at typing speed was typing too.
//
// Typing that reaches a dialog goes to the prompt instead, every key of
// it, and the dialog then waits for tab (a deliberate move of the focus)
// before any key answers it: a pause in a sentence must not turn its next
// word into an answer. Typing that reaches the focused side pane (keys
// closer than PaneTypingGap) moves the focus back to the prompt, the keys
// with it; the pane's keys that change what may run are held like a
// dialog's answers, and A asks a question before it grants anything.
// None of these keys is lost.

// The guard's timings.
const (
	// DialogGrace is how long a new dialog (or the last approval of an
	// edit) ignores keys.
	DialogGrace = 400 * time.Millisecond
	// DialogQuiet is how long typing must have stopped for a key to
	// answer: keys closer together are typing.
	DialogQuiet = 800 * time.Millisecond
	// DialogHold is how long an answer waits for the next key: one
	// arriving sooner shows both were typing.
	DialogHold = 300 * time.Millisecond
	// PaneTypingGap is how close two printable keys in the focused side
	// pane must be to be prose (about 3 characters a second or faster):
	// the pane's keys are single letters a person presses one at a time
	// while reading the pane, a dialog's are not expected at all, so the
	// pane's bar is lower than DialogQuiet.
	PaneTypingGap = 300 * time.Millisecond
)

// heldKey is an answer waiting out DialogHold.
type heldKey struct {
	key tea.KeyMsg
	at  time.Time
	// act is what the key does once it stands; it checks that what it
	// answers is still there.
	act func() tea.Cmd
	// what the status bar says meanwhile ("allowing once…").
	what string
}

// typingKey reports whether k is something a person types into text: it
// goes to the prompt when it reaches something it was not meant for.
func typingKey(k tea.KeyMsg) bool {
	switch k.Type {
	case tea.KeyRunes:
		return !k.Alt || k.Paste
	case tea.KeySpace, tea.KeyBackspace, tea.KeyCtrlJ:
		return true
	case tea.KeyEnter:
		return k.Alt // alt+enter breaks the line
	}
	return false
}

// hold makes act wait out DialogHold; the tick commits it.
func (m *model) hold(k tea.KeyMsg, what string, act func() tea.Cmd) tea.Cmd {
	m.held = &heldKey{key: k, at: m.now(), act: act, what: what}
	if m.dialog.open() {
		m.dialog.holding = what
	}
	return m.ensureTick()
}

// commitHeld runs the held key's action once it has stood for DialogHold.
func (m *model) commitHeld() tea.Cmd {
	h := m.held
	if h == nil || m.now().Sub(h.at) < DialogHold {
		return nil
	}
	m.held = nil
	m.dialog.holding = ""
	return h.act()
}

// breakHold is called with the key that followed a held one too soon:
// both were typing, and go to the prompt.
func (m *model) breakHold(k tea.KeyMsg) {
	h := m.held
	m.held = nil
	m.dialog.holding = ""
	m.toDraft(h.key, k)
	if m.dialog.open() {
		m.dialog.typed, m.dialog.focused = true, false
	}
	m.tools.Ask(nil)
}

// toDraft types keys into the prompt, whatever has the focus; keys that
// are not typing (an arrow, esc) are dropped.
func (m *model) toDraft(keys ...tea.KeyMsg) {
	m.pane.Focus(false)
	for _, k := range keys {
		if typingKey(k) {
			m.input.update(k)
		}
	}
	m.paneTyped = nil
}

// paneGuard routes a key meant for the focused side pane: prose typed
// into it goes to the prompt (with the printable keys the pane took at
// the start of it), and the keys that change what may run are held. It
// returns handled false when the key is the pane's to act on now.
func (m *model) paneGuard(k tea.KeyMsg, gap time.Duration) (tea.Cmd, bool) {
	printable := k.Type == tea.KeyRunes && !k.Alt || k.Type == tea.KeySpace
	burst := gap < PaneTypingGap
	if !burst {
		m.paneTyped = nil
	}
	if printable && burst && !navKey(k) || k.Type == tea.KeyEnter && burst && len(m.paneTyped) > 0 {
		m.toDraft(append(m.paneTyped, k)...)
		return m.setStatus("your typing went to the prompt (tab focuses the side pane again)"), true
	}
	if printable {
		m.paneTyped = append(m.paneTyped, k)
	}
	act := m.changeKey(k)
	if act == nil {
		return nil, false
	}
	if burst {
		return nil, true // a key among others: nothing changes
	}
	return m.hold(k, "", act), true
}

// changeKey is what a key of the focused pane does when it changes what
// may run (a tool turned on or off, always-allowed, a task paused,
// resumed, cancelled or run now); nil for the other keys.
func (m *model) changeKey(k tea.KeyMsg) func() tea.Cmd {
	if !m.pane.Changes(k) {
		return nil
	}
	t := m.pane.Current()
	return func() tea.Cmd { return t.Key(k) }
}

// navKey reports whether k only moves around the pane (j and k repeated
// quickly scroll; they are not typing).
func navKey(k tea.KeyMsg) bool {
	s := k.String()
	return s == "j" || s == "k"
}
