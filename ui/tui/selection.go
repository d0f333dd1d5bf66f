package tui

import (
	"fmt"
	"os"
	"os/exec"
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
	if m.focusPane {
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
	case (key == "[" || key == "]") && empty && !m.running:
		return m.flip(map[string]int{"[": -1, "]": 1}[key]), true
	case key == "ctrl+x" && len(m.convo.images) > 0:
		return m.removeLastImage(), true
	case key == "tab" && m.convo.offer != nil:
		return m.acceptOffer(), true
	case key == "tab" && strings.HasPrefix(m.input.value(), "/image "):
		return m.completePath(), true
	case key == "esc" && m.convo.editing != nil && !m.running:
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

// edit edits the selected question, else the last one: in $VISUAL or
// $EDITOR when one is set, else in the prompt box.
func (m *model) edit() tea.Cmd {
	if why := m.busyReason("edit"); why != "" {
		m.addNote(why, true)
		return nil
	}
	q := m.editTarget()
	if q == nil {
		m.addNote("There is no question to edit yet.", true)
		return nil
	}
	editor := strings.TrimSpace(os.Getenv("VISUAL"))
	if editor == "" {
		editor = strings.TrimSpace(os.Getenv("EDITOR"))
	}
	m.selectMsg(nil)
	if editor == "" {
		if m.convo.editing == nil {
			m.convo.draft = m.input.value()
		}
		m.convo.editing = q
		m.input.set(q.text)
		m.layout()
		return m.setStatus("edit the question and press enter to ask again from it (esc cancels)")
	}
	return m.editInEditor(editor, q)
}

// editorDoneMsg carries what the editor left in the file.
type editorDoneMsg struct {
	q    *userItem
	text string
	err  error
}

// editInEditor suspends the workbench, opens the question in editor (a
// command with its arguments, as $EDITOR may be "code --wait"), and asks
// again with what is saved.
func (m *model) editInEditor(editor string, q *userItem) tea.Cmd {
	f, err := os.CreateTemp("", "jarvis-question-*.md")
	if err != nil {
		m.addNote("Cannot edit in "+editor+": "+err.Error(), true)
		return nil
	}
	path := f.Name()
	_, werr := f.WriteString(q.text + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		m.addNote("Cannot edit in "+editor+": "+werr.Error(), true)
		return nil
	}
	args := strings.Fields(editor)
	cmd := exec.Command(args[0], append(args[1:], path)...)
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{q: q, err: fmt.Errorf("the editor (%s) failed: %w", editor, err)}
		}
		b, err := os.ReadFile(path)
		return editorDoneMsg{q: q, text: string(b), err: err}
	})
}

func (m *model) editorDone(msg editorDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.addNote(msg.err.Error()+". The question is unchanged.", true)
		return nil
	}
	text := strings.TrimSpace(msg.text)
	switch {
	case text == "":
		return m.setStatus("the edited question was empty: nothing was sent")
	case text == strings.TrimSpace(msg.q.text):
		return m.setStatus("the question was not changed: nothing was sent (r asks again for its answer)")
	}
	return m.askEdited(msg.q, text)
}

// submitEdit sends the prompt box's text as the edited question.
func (m *model) submitEdit(text string) tea.Cmd {
	q := m.convo.editing
	if text == strings.TrimSpace(q.text) {
		m.cancelEdit()
		return m.setStatus("the question was not changed: nothing was sent")
	}
	m.input.remember(text)
	m.input.reset()
	m.convo.editing, m.convo.draft = nil, ""
	m.layout()
	return m.askEdited(q, text)
}

// cancelEdit gives the prompt box back its draft.
func (m *model) cancelEdit() {
	m.convo.editing = nil
	m.input.set(m.convo.draft)
	m.convo.draft = ""
	m.layout()
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
	case editorDoneMsg:
		return m.editorDone(msg), true
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
