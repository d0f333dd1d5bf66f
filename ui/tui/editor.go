package tui

import (
	"errors"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// Editing a question: in $VISUAL (else $EDITOR) when one is set, the
// workbench suspended while it runs (tea.ExecProcess) and the question in
// a temporary file; else in the prompt box, where enter sends the edit
// and esc gives the box back what it held. Either way the edited question
// is asked again from its place (askEdited).

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
	editor, external := findEditor()
	m.selectMsg(nil)
	if !external {
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

// questionEditedMsg carries what the editor left in the file.
type questionEditedMsg struct {
	q    *userItem
	text string
	err  error
}

// editInEditor suspends the workbench, opens the question in editor (a
// command with its arguments, as $EDITOR may be "code --wait"), and asks
// again with what is saved.
func (m *model) editInEditor(editor externalEditor, q *userItem) tea.Cmd {
	if err := editor.missing(); err != nil {
		m.addNote(sentence(err.Error())+". The question is unchanged.", true)
		return nil
	}
	f, err := os.CreateTemp("", "jarvis-question-*.md")
	if err != nil {
		m.addNote("Cannot edit in "+editor.String()+": "+explain(err), true)
		return nil
	}
	path := f.Name()
	_, werr := f.WriteString(q.text + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		m.addNote("Cannot edit in "+editor.String()+": "+explain(werr), true)
		return nil
	}
	return tea.ExecProcess(editor.cmd(path), func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return questionEditedMsg{q: q, err: errors.New(editor.failed(err))}
		}
		b, err := os.ReadFile(path)
		return questionEditedMsg{q: q, text: string(b), err: err}
	})
}

func (m *model) questionEdited(msg questionEditedMsg) tea.Cmd {
	if msg.err != nil {
		m.addNote(sentence(explain(msg.err))+". The question is unchanged.", true)
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
