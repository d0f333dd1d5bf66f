package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// Selecting a question or an answer in the transcript: alt+↑ and alt+↓
// move between them (the selected one says so on its first line, with
// the keys that act on it); e edits a selected question, r asks again
// for a selected answer, [ and ] show its other versions or attempts, f
// forks the session up to it, esc ends the selection. Without a
// selection, [ and ] on an empty prompt flip the last answer's attempts.

// convoKey handles the keys of conversation control. handled is false
// for keys it leaves to the rest of the workbench.
func (m *model) convoKey(k tea.KeyMsg) (tea.Cmd, bool) {
	if m.pane.Focused() {
		return nil, false
	}
	if k.Paste {
		cmd := m.input.update(k)
		return tea.Batch(cmd, m.pasted(string(k.Runes))), true
	}
	key := k.String()
	if m.convo.selected != nil {
		if cmd, ok := m.selectionKey(key); ok {
			return cmd, true
		}
		m.selectMsg(nil)
		return nil, false
	}
	empty := m.input.value() == ""
	switch {
	case key == "alt+up":
		m.moveSelection(-1)
		return nil, true
	case key == "alt+down":
		return nil, true
	case (key == "[" || key == "]") && empty && !m.run.active:
		return m.flip(map[string]int{"[": -1, "]": 1}[key]), true
	case key == "ctrl+x" && len(m.convo.images) > 0:
		return m.removeLastImage(), true
	case key == "tab" && m.convo.offer != nil:
		return m.acceptImageOffer(), true
	case key == "tab" && strings.HasPrefix(m.input.value(), "/image "):
		return m.completePath(), true
	case key == "esc" && m.convo.editing != nil && !m.run.active:
		m.cancelEdit()
		return nil, true
	}
	return nil, false
}

// selectionKey acts on the selected question or answer.
func (m *model) selectionKey(key string) (tea.Cmd, bool) {
	sel := m.convo.selected
	_, isQuestion := sel.(*userItem)
	switch key {
	case "alt+up", "alt+k":
		m.moveSelection(-1)
	case "alt+down", "alt+j":
		m.moveSelection(1)
	case "esc":
		m.selectMsg(nil)
	case "[":
		return m.flip(-1), true
	case "]":
		return m.flip(1), true
	case "e", "enter":
		if !isQuestion {
			if key == "enter" {
				return nil, false
			}
			return m.setStatus("e edits a question: select one with alt+↑"), true
		}
		return m.edit(), true
	case "r":
		if isQuestion {
			return m.setStatus("r asks again for an answer: select one with alt+↓"), true
		}
		return m.retry(), true
	case "f":
		return m.fork(), true
	default:
		return nil, false
	}
	return nil, true
}

// selectable reports whether a transcript item can be selected.
func selectable(it item) bool {
	switch it := it.(type) {
	case *userItem:
		return it.seq > 0
	case *assistantItem:
		return it.after > 0
	}
	return false
}

// moveSelection selects the previous (dir -1) or next question or answer;
// moving down past the last one ends the selection.
func (m *model) moveSelection(dir int) {
	items := m.transcript.items
	i := len(items)
	if m.convo.selected != nil {
		i = m.transcript.indexOf(m.convo.selected)
	}
	for i += dir; i >= 0 && i < len(items); i += dir {
		if selectable(items[i]) {
			m.selectMsg(items[i])
			m.transcript.reveal(m.renderCtx(m.transcriptWidth()), i)
			return
		}
	}
	if dir > 0 {
		m.selectMsg(nil)
		m.transcript.bottom()
	}
}

// selectMsg selects it (nil: nothing).
func (m *model) selectMsg(it item) {
	if m.convo.selected == it {
		return
	}
	m.convo.selected = it
	m.refreshMarks()
}

// convoMsg handles the messages of conversation control; ok is false for
// the others.
func (m *model) convoMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case imageLoadedMsg:
		return m.imageLoaded(msg), true
	case pathsMsg:
		m.applyPaths(msg)
		return nil, true
	case questionEditedMsg:
		return m.questionEdited(msg), true
	}
	return nil, false
}

// convoCommand runs /image, /retry, /edit and /fork; ok is false for the
// other commands.
func (m *model) convoCommand(name, arg string) (tea.Cmd, bool) {
	switch name {
	case "image":
		return m.imageCommand(arg), true
	case "retry":
		return m.retry(), true
	case "edit":
		if arg != "" {
			// /edit TEXT replaces the last question without an editor.
			if why := m.busyReason("edit"); why != "" {
				m.addNote(why, true)
				return nil, true
			}
			q := m.editTarget()
			if q == nil {
				m.addNote("There is no question to edit yet.", true)
				return nil, true
			}
			return m.askEdited(q, arg), true
		}
		return m.edit(), true
	case "fork":
		return m.fork(), true
	}
	return nil, false
}
