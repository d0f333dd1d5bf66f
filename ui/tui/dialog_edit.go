package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// The approval dialog lets the person steer a call, not only allow or
// deny it:
//
//	e  edit the arguments: in $VISUAL or $EDITOR when set (the workbench
//	   suspends while it runs, as git does), else in an editor inside the
//	   dialog. The edit is checked against the tool's schema; a wrong one
//	   says what is wrong and comes back to the dialog with the text kept;
//	   a right one is shown for a last approval, and then it is what runs
//	   and what the model reads in its tool call.
//	r  deny with a reason: the model reads "Denied by the user: REASON".
//	A  always allow the tool (this tool of this server, for an MCP tool):
//	   remembered in the database until revoked.
//
// The grace period after a dialog opens, and after an edit comes up for
// approval, holds for every key; enter and space never approve.

// dialogMode is what the dialog is doing with its front request.
type dialogMode int

const (
	modeAsk    dialogMode = iota // the question: allow, deny, edit...
	modeReason                   // typing why the call is denied
	modeEdit                     // editing the arguments in the dialog
	modeReview                   // an edit that checked out, for approval
)

// dialogEdit is the front request's state beyond the question.
type dialogEdit struct {
	mode   dialogMode
	reason textinput.Model
	editor textarea.Model
	// text is the edit kept between tries (JSON); "" until the first.
	text string
	// edited are the arguments under review.
	edited tools.Args
	// err says what was wrong with the last edit.
	err string
	// external is set while $EDITOR runs.
	external bool
}

// title is the dialog's first line for the mode.
func (e *dialogEdit) title(called string) string {
	if e.mode == modeReview {
		return "Run " + called + " with your edit?"
	}
	return "Allow " + called + "?"
}

// hint is the keys line for the mode.
func (e *dialogEdit) hint(req tools.ConfirmRequest, name string) string {
	always := ""
	if req.CanAlways {
		always = "   [A] always allow " + name
	}
	edit := ""
	if req.Validate != nil {
		edit = "   [e] edit"
	}
	switch e.mode {
	case modeReason:
		return "[enter] deny with this reason   [esc] back"
	case modeEdit:
		return "[ctrl+s] check the edit   [esc] back (the edit is kept)"
	case modeReview:
		return "[a] run it once   [s] allow " + name + " for this session" + always + edit + "   [d] deny   [esc] back"
	}
	if e.external {
		return "editing the arguments in " + editorName() + "…"
	}
	return "[a] allow once   [s] allow " + name + " for this session" + always + edit + "   [r] deny with a reason   [d/esc] deny"
}

// shape puts the mode's content into the layout.
func (e *dialogEdit) shape(l *dialogLayout, inner int) {
	switch e.mode {
	case modeReview:
		l.argsLabel = "Your edit (it runs instead of the model's arguments):"
		l.args = argLines(e.edited, inner)
	case modeEdit:
		l.argsLabel = "Arguments as JSON:"
		l.args, l.rawArgs = strings.Split(e.editor.View(), "\n"), true
	case modeReason:
		l.hint = append([]string{ansi.Truncate(e.reason.View(), inner, "…")}, l.hint...)
	}
}

// fit sizes the inline editor to the dialog's room.
func (e *dialogEdit) fit(width, height int) {
	if e.mode != modeEdit {
		return
	}
	w := min(max(width-8, 40), 100, width-2)
	e.editor.SetWidth(max(w-4, 10))
	// The border, title, description (at most descRows), the label, a
	// blank and the hint (two lines at most).
	e.editor.SetHeight(max(height-2-1-descRows-1-1-2-1, 3))
}

// editorName is the external editor's command, or "" when none is set.
func editorName() string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if s := strings.TrimSpace(os.Getenv(v)); s != "" {
			return s
		}
	}
	return ""
}

// editText is the text an edit starts from: the edit kept, or the call's
// arguments as indented JSON.
func (e *dialogEdit) editText(args tools.Args) string {
	if e.text != "" {
		return e.text
	}
	return argsJSON(args)
}

// argsJSON writes arguments as indented JSON that is safe to show: JSON
// escapes C0 controls, and C1 controls are escaped here.
func argsJSON(args tools.Args) string {
	if args == nil {
		args = tools.Args{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any(args)); err != nil {
		return "{}"
	}
	var b strings.Builder
	for _, r := range strings.TrimRight(buf.String(), "\n") {
		if r >= 0x80 && r <= 0x9f {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// editorDoneMsg says the external editor ended.
type editorDoneMsg struct {
	callID string
	path   string
	err    error
}

// dialogKey answers a key while the dialog is open.
func (m *model) dialogKey(k tea.KeyMsg) tea.Cmd {
	now := m.now()
	d := &m.dialog
	if k.String() == "ctrl+c" {
		m.cancelRun()
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
	}
	if !d.accepting(now) || d.ed.external {
		return nil
	}
	req := d.queue[0].req
	answer := func(dec tools.Decision) tea.Cmd {
		a := tools.Answer{Decision: dec}
		if d.ed.mode == modeReview {
			a.Arguments = d.ed.edited
		}
		if dec == tools.AllowAlways {
			m.markAlways(req.Name(), true)
		}
		d.answerFull(a, now)
		return m.ensureTick()
	}
	switch k.String() {
	case "a":
		return answer(tools.AllowOnce)
	case "s":
		return answer(tools.AllowSession)
	case "A":
		if req.CanAlways {
			return answer(tools.AllowAlways)
		}
	case "d":
		d.answer(tools.Deny, now)
		return m.ensureTick()
	case "esc":
		if d.ed.mode == modeReview {
			d.ed.mode, d.scroll = modeAsk, 0
			return nil
		}
		d.answer(tools.Deny, now)
		return m.ensureTick()
	case "r":
		if d.ed.mode == modeAsk {
			d.ed.mode = modeReason
			d.ed.reason = textinput.New()
			d.ed.reason.Prompt = "Reason: "
			d.ed.reason.Placeholder = "why not, or what to do instead"
			d.ed.reason.CharLimit = 500
			d.ed.reason.Cursor.SetMode(cursor.CursorStatic)
			d.ed.reason.Focus()
		}
	case "e":
		if req.Validate != nil {
			return m.startEdit()
		}
	}
	// enter and space deliberately do nothing: a stray key must never
	// approve a call.
	return nil
}

func (m *model) reasonKey(k tea.KeyMsg) tea.Cmd {
	d := &m.dialog
	switch k.String() {
	case "enter":
		d.answerFull(tools.Answer{Decision: tools.Deny, Reason: strings.TrimSpace(d.ed.reason.Value())}, m.now())
		return m.ensureTick()
	case "esc":
		d.ed.mode = modeAsk
		return nil
	}
	var cmd tea.Cmd
	d.ed.reason, cmd = d.ed.reason.Update(k)
	return cmd
}

func (m *model) editKey(k tea.KeyMsg) tea.Cmd {
	d := &m.dialog
	switch k.String() {
	case "ctrl+s":
		return m.checkEdit(d.ed.editor.Value())
	case "esc":
		d.ed.text, d.ed.mode = d.ed.editor.Value(), modeAsk
		return nil
	}
	var cmd tea.Cmd
	d.ed.editor, cmd = d.ed.editor.Update(k)
	return cmd
}

// startEdit opens the arguments in $VISUAL/$EDITOR, or in the dialog.
func (m *model) startEdit() tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	text := d.ed.editText(req.Arguments)
	d.ed.err = ""
	if ed := editorName(); ed != "" {
		f, err := os.CreateTemp("", "jarvis-arguments-*.json")
		if err != nil {
			d.ed.err = "Cannot open the editor: " + err.Error()
			return nil
		}
		path := f.Name()
		_, werr := f.WriteString(text + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			d.ed.err = "Cannot open the editor: " + werr.Error()
			return nil
		}
		d.ed.external = true
		callID := req.Call.ID
		// As git does: the editor command goes through the shell, so
		// EDITOR="code --wait" works, and the file is its last argument.
		cmd := exec.Command("sh", "-c", ed+` "$1"`, "editor", path)
		return tea.ExecProcess(cmd, func(err error) tea.Msg { return editorDoneMsg{callID: callID, path: path, err: err} })
	}
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.SetValue(text)
	ta.Focus()
	d.ed.editor, d.ed.mode = ta, modeEdit
	d.ed.fit(m.width, m.transcript.height)
	return nil
}

// editorDone takes the external editor's file back.
func (m *model) editorDone(msg editorDoneMsg) tea.Cmd {
	data, rerr := os.ReadFile(msg.path)
	os.Remove(msg.path)
	d := &m.dialog
	if !d.open() || d.queue[0].req.Call.ID != msg.callID {
		return nil // the request was answered or withdrawn meanwhile
	}
	d.ed.external = false
	switch {
	case msg.err != nil:
		d.ed.err = "The editor failed (" + safe.Text(msg.err.Error()) + "); the arguments are unchanged."
		return nil
	case rerr != nil:
		d.ed.err = "Cannot read the edit back: " + rerr.Error()
		return nil
	}
	return m.checkEdit(string(data))
}

// checkEdit checks edited JSON against the tool's schema: a right edit
// comes up for approval, a wrong one goes back to the question with what
// was wrong, the text kept for the next try.
func (m *model) checkEdit(text string) tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	d.ed.text = text
	if !utf8.ValidString(text) {
		d.ed.mode, d.ed.err = modeAsk, "Invalid edit: the text is not UTF-8. Press e to fix it."
		return nil
	}
	args, msg := tools.ParseArguments(text)
	if msg == "" && req.Validate != nil {
		if err := req.Validate(args); err != nil {
			msg = "Invalid arguments: " + err.Error()
		}
	}
	if msg != "" {
		d.ed.mode, d.ed.err = modeAsk, "Invalid edit: "+safe.Text(msg)+" Press e to fix it."
		return nil
	}
	d.ed.mode, d.ed.edited, d.ed.err, d.scroll = modeReview, args, "", 0
	// The last approval has its own grace period: a key typed as the
	// review appears must not approve it.
	d.opened = m.now()
	return m.ensureTick()
}
