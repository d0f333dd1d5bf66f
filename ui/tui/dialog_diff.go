package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// A call that changes files is shown as its diff: in the dialog before it
// runs (the change the tool worked out, or the person's edit of it), in
// its panel after (a summary, "+12 −3 ./main.go", and the whole diff when
// ctrl+e expands the panels), and in /changes. `e` on such a call edits
// the files as they would be, not the JSON of the arguments: the tool
// turns the edited content back into its own arguments (an edit's
// old_string and new_string, a patch), which then come up for approval
// like any edit.

// diffLines lays out a unified diff width cells wide: each line cut into
// rows as code is (nothing is joined or dropped), coloured by what it is.
func diffLines(st *styles, diff string, width int) []string {
	var out []string
	for _, l := range textdiff.Lines(diff) {
		style := st.text
		switch l.Kind {
		case textdiff.KindAdded:
			style = st.success
		case textdiff.KindRemoved:
			style = st.errorText
		case textdiff.KindHunk:
			style = st.accent
		case textdiff.KindHeader, textdiff.KindNote:
			style = st.muted
		}
		for _, row := range hang(expandTabs(safe.Text(l.Text)), width, codeCont) {
			out = append(out, style.Render(row))
		}
	}
	return out
}

// diffSummary is "+12 −3 ./main.go, +1 −0 ./b.go".
func diffSummary(diff string) string {
	var parts []string
	for _, f := range textdiff.Files(diff) {
		parts = append(parts, safe.Text(f.String()))
	}
	return strings.Join(parts, ", ")
}

// preview is the change the dialog shows now: the edit's under review,
// else the request's.
func (d *dialog) preview() *tools.Preview {
	if d.ed.edited != nil && (d.ed.mode == modeReview || d.ed.back == modeReview) {
		return d.ed.check.Preview
	}
	return d.queue[0].req.Preview
}

// shapePreview puts the diff where the arguments would be.
func (d *dialog) shapePreview(st *styles, l *dialogLayout, inner int) {
	if d.ed.mode == modeEdit {
		return // the inline editor shows what is being edited
	}
	pv := d.preview()
	if pv == nil {
		return
	}
	diff := pv.Diff()
	l.argsLabel = "Changes: " + diffSummary(diff)
	if d.ed.mode == modeReview {
		l.argsLabel = "Your edit, as it changes the files: " + diffSummary(diff)
	}
	l.args, l.rawArgs = diffLines(st, diff, inner), true
	if pv.Note != "" {
		l.desc = append(l.desc, wrapText("Note: "+pv.Note, inner)...)
	}
}

// contentEditable reports whether `e` edits the files' content.
func contentEditable(req tools.ConfirmRequest) bool {
	return req.Preview != nil && req.Preview.Rebuild != nil && req.Validate != nil
}

// contentsDoneMsg says the external editor ended on the files' content.
type contentsDoneMsg struct {
	callID string
	dir    string
	paths  []string
	editor externalEditor
	err    error
}

// editContents opens the files as they would be in $VISUAL/$EDITOR (one
// temporary file each, named like the file so the editor highlights it),
// or the one file in the dialog's editor.
func (m *model) editContents() tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	pv := d.preview()
	if pv == nil {
		pv = req.Preview
	}
	contents := d.ed.contents
	if len(contents) != len(pv.Files) {
		contents = make([]string, len(pv.Files))
		for i, f := range pv.Files {
			contents[i] = f.New
		}
	}
	d.ed.err = ""
	if ed, ok := findEditor(); ok {
		if err := ed.missing(); err != nil {
			d.ed.err = "Cannot open the editor: " + err.Error() + "."
			return nil
		}
		dir, err := os.MkdirTemp("", "jarvis-edit-*")
		if err != nil {
			d.ed.err = "Cannot open the editor: " + err.Error()
			return nil
		}
		paths := make([]string, len(pv.Files))
		for i, f := range pv.Files {
			paths[i] = filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, filepath.Base(f.Path)))
			if err := os.WriteFile(paths[i], []byte(contents[i]), 0o600); err != nil {
				os.RemoveAll(dir)
				d.ed.err = "Cannot open the editor: " + err.Error()
				return nil
			}
		}
		d.ed.external = true
		callID := req.Call.ID
		return tea.ExecProcess(ed.cmd(paths...), func(err error) tea.Msg {
			return contentsDoneMsg{callID: callID, dir: dir, paths: paths, editor: ed, err: err}
		})
	}
	if len(pv.Files) != 1 {
		return m.startArgsEdit() // several files: their patch, as JSON
	}
	ta := textarea.New()
	ta.ShowLineNumbers = true
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.SetValue(contents[0])
	ta.Focus()
	d.ed.editor, d.ed.mode, d.ed.onContent = ta, modeEdit, true
	d.ed.fit(m.width, m.transcript.height)
	return nil
}

// contentsDone takes the edited files back.
func (m *model) contentsDone(msg contentsDoneMsg) tea.Cmd {
	defer os.RemoveAll(msg.dir)
	d := &m.dialog
	if !d.open() || d.queue[0].req.Call.ID != msg.callID {
		return nil
	}
	d.ed.external = false
	if msg.err != nil {
		d.ed.err = sentence(safe.Text(msg.editor.failed(msg.err))) + "; nothing is changed."
		return nil
	}
	contents := make([]string, len(msg.paths))
	for i, p := range msg.paths {
		data, err := os.ReadFile(p)
		if err != nil {
			d.ed.err = "Cannot read the edit back: " + err.Error()
			return nil
		}
		contents[i] = string(data)
	}
	return m.checkContents(contents)
}

// checkContents turns edited contents into the tool's arguments and
// checks them as any edit is checked.
func (m *model) checkContents(contents []string) tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	d.ed.contents = contents
	for _, c := range contents {
		if !utf8.ValidString(c) {
			d.ed.mode, d.ed.err = modeAsk, "Invalid edit: the text is not UTF-8. Press e to fix it."
			return nil
		}
	}
	args, err := req.Preview.Rebuild(contents)
	if err != nil {
		d.ed.mode, d.ed.err = modeAsk, "Invalid edit: "+safe.Text(err.Error())+" Press e to fix it."
		return nil
	}
	return m.checkArgs(args)
}
