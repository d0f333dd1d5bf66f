package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/routed"
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
//	s  allow for the session what the dialog names: the directory, the
//	   host, the channel, the task, this exact code, or the tool.
//	A  always allow the same, remembered in the database until revoked;
//	   for a tool whose calls are approved by their exact arguments, the
//	   whole tool, after a second question (y/n).
//
// Keys answer only when deliberate (guard.go): past the grace period
// after a dialog opens (and after an edit comes up for approval), after
// the keyboard was quiet, and not followed by more typing. Enter and space
// never approve.

// dialogMode is what the dialog is doing with its front request.
type dialogMode int

const (
	modeAsk    dialogMode = iota // the question: allow, deny, edit...
	modeReason                   // typing why the call is denied
	modeEdit                     // editing the arguments in the dialog
	modeReview                   // an edit that checked out, for approval
	modeAlways                   // "always" for the whole tool: asked again
)

// dialogEdit is the front request's state beyond the question.
type dialogEdit struct {
	mode   dialogMode
	reason textinput.Model
	editor textarea.Model
	// text is the edit kept between tries (JSON); "" until the first.
	text string
	// edited are the arguments under review, check what the gate makes
	// of them (their reason and scope, or their refusal).
	edited tools.Args
	check  tools.Check
	// back is the mode modeAlways returns to.
	back dialogMode
	// err says what was wrong with the last edit.
	err string
	// pasteErr says why ctrl+v pasted nothing into the open box, until
	// the next key there: the status bar, where the prompt says it, shows
	// the wait for approval while the dialog is open.
	pasteErr string
	// external is set while $EDITOR runs.
	external bool
	// contents are the files' content as last edited (dialog_diff.go);
	// onContent says the inline editor holds a file's content, not JSON.
	contents  []string
	onContent bool
}

// title is the dialog's first line for the mode.
func (e *dialogEdit) title(called string) string {
	switch e.mode {
	case modeReview:
		return "Run " + called + " with your edit?"
	case modeAlways:
		return "Always allow " + called + ", whatever it is asked to do?"
	}
	return "Allow " + called + "?"
}

// hint is the keys line for the dialog's state.
func (d *dialog) hint(req tools.ConfirmRequest, name string) string {
	e := &d.ed
	switch {
	case d.holding != "":
		return d.holding + " (typing on sends the keys to the prompt instead)"
	case e.external && contentEditable(req):
		ed, _ := findEditor()
		return "editing the files as they will be in " + ed.command + "…"
	case e.external:
		ed, _ := findEditor()
		return "editing the arguments in " + ed.command + "…"
	case e.mode == modeReason:
		return "[enter] deny with this reason   [esc] back"
	case e.mode == modeEdit:
		return "[ctrl+s] check the edit   [esc] back (the edit is kept)"
	case e.mode == modeAlways:
		return "This lets " + name + " run without asking, with any arguments, in every session, until you revoke it (jarvis approvals revoke " + name + ").   [y] yes, always   [n/esc] no, back"
	case d.typed:
		return "You were typing: your keys went to the prompt below. Press tab to answer this dialog."
	}
	scope := d.scope()
	grants := "   [s] allow " + scope.Of(name) + " for this session"
	if req.CanAlways {
		if scope.AlwaysIsWide() {
			grants += "   [A] always allow " + name + " (any arguments; asks again)"
		} else {
			grants += "   [A] always allow " + scope.AlwaysScope().Of(name)
		}
	}
	edit := ""
	if req.Validate != nil {
		edit = "   [e] edit"
	}
	if e.mode == modeReview {
		if e.check.Refusal != nil {
			return "[e] edit again" + "   [d] deny   [esc] back"
		}
		return "[a] run it once" + grants + edit + "   [d] deny   [esc] back"
	}
	return "[a] allow once" + grants + edit + "   [r] deny with a reason   [d/esc] deny"
}

// shape puts the mode's content into the layout.
func (e *dialogEdit) shape(l *dialogLayout, inner int) {
	switch e.mode {
	case modeReview:
		l.argsLabel = "Your edit (it runs instead of the model's arguments):"
		l.args = argLines(e.edited, inner)
	case modeEdit:
		l.argsLabel = "Arguments as JSON:"
		if e.onContent {
			l.argsLabel = "The file as it will be:"
		}
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
	editor externalEditor
	err    error
}

func (m *model) reasonKey(k tea.KeyMsg) tea.Cmd {
	d := &m.dialog
	d.ed.pasteErr = ""
	switch k.String() {
	case "enter":
		d.answerFull(tools.Answer{Decision: tools.Deny, Reason: strings.TrimSpace(d.ed.reason.Value())}, m.now())
		return m.ensureTick()
	case "esc":
		d.ed.mode = modeAsk
		return nil
	}
	if k.String() == "ctrl+v" {
		return m.forDialogBox(readClipboard)
	}
	var cmd tea.Cmd
	d.ed.reason, cmd = d.ed.reason.Update(k)
	return m.forDialogBox(cmd)
}

func (m *model) editKey(k tea.KeyMsg) tea.Cmd {
	d := &m.dialog
	d.ed.pasteErr = ""
	switch k.String() {
	case "ctrl+s":
		if d.ed.onContent {
			return m.checkContents([]string{d.ed.editor.Value()})
		}
		return m.checkEdit(d.ed.editor.Value())
	case "esc":
		if d.ed.onContent {
			d.ed.contents, d.ed.mode = []string{d.ed.editor.Value()}, modeAsk
			return nil
		}
		d.ed.text, d.ed.mode = d.ed.editor.Value(), modeAsk
		return nil
	}
	if k.String() == "ctrl+v" {
		return m.forDialogBox(readClipboard)
	}
	var cmd tea.Cmd
	d.ed.editor, cmd = d.ed.editor.Update(k)
	return m.forDialogBox(cmd)
}

// dialogBoxResult is what a command of the dialog's reason or edit box
// produced (the clipboard read for ctrl+v, or one of the box's own), on
// its way back to that box: untagged, the side pane got it, and a paste
// was lost.
type dialogBoxResult struct {
	callID string
	mode   dialogMode
	msg    tea.Msg
}

func (m *model) forDialogBox(cmd tea.Cmd) tea.Cmd {
	d := &m.dialog
	callID, mode := d.queue[0].req.Call.ID, d.ed.mode
	return routed.Tag(cmd, func(msg tea.Msg) tea.Msg { return dialogBoxResult{callID: callID, mode: mode, msg: msg} })
}

// dialogBoxDone hands a box's result to the box, if it is still the one
// open: a paste that arrives after the box was left, or its request
// answered, is dropped rather than typed somewhere else.
func (m *model) dialogBoxDone(r dialogBoxResult) tea.Cmd {
	d := &m.dialog
	if !d.open() || d.queue[0].req.Call.ID != r.callID || d.ed.mode != r.mode {
		return nil
	}
	msg := r.msg
	if c, ok := msg.(clipboardMsg); ok {
		if c.err != nil {
			d.ed.pasteErr = nothingPasted(c.err)
			return nil
		}
		msg = c.key()
	}
	var cmd tea.Cmd
	switch r.mode {
	case modeReason:
		d.ed.reason, cmd = d.ed.reason.Update(msg)
	case modeEdit:
		d.ed.editor, cmd = d.ed.editor.Update(msg)
	}
	return m.forDialogBox(cmd)
}

// startEdit opens what the person edits: the files as they will be for a
// call that changes files, else the arguments.
func (m *model) startEdit() tea.Cmd {
	if contentEditable(m.dialog.queue[0].req) {
		return m.editContents()
	}
	return m.startArgsEdit()
}

// startArgsEdit opens the arguments in $VISUAL/$EDITOR, or in the dialog.
func (m *model) startArgsEdit() tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	text := d.ed.editText(req.Arguments)
	d.ed.err = ""
	if ed, ok := findEditor(); ok {
		if err := ed.missing(); err != nil {
			d.ed.err = "Cannot open the editor: " + err.Error() + "."
			return nil
		}
		f, err := os.CreateTemp("", "jarvis-arguments-*.json")
		if err != nil {
			d.ed.err = "Cannot open the editor: " + explain(err)
			return nil
		}
		path := f.Name()
		_, werr := f.WriteString(text + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			d.ed.err = "Cannot open the editor: " + explain(werr)
			return nil
		}
		d.ed.external = true
		callID := req.Call.ID
		return tea.ExecProcess(ed.cmd(path), func(err error) tea.Msg { return editorDoneMsg{callID: callID, path: path, editor: ed, err: err} })
	}
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.SetValue(text)
	ta.Focus()
	d.ed.editor, d.ed.mode, d.ed.onContent = ta, modeEdit, false
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
		d.ed.err = sentence(safe.Text(msg.editor.failed(msg.err))) + "; the arguments are unchanged."
		return nil
	case rerr != nil:
		d.ed.err = "Cannot read the edit back: " + explain(rerr)
		return nil
	}
	return m.checkEdit(string(data))
}

// checkEdit checks edited JSON against the tool's schema: a right edit
// comes up for approval, a wrong one goes back to the question with what
// was wrong, the text kept for the next try.
func (m *model) checkEdit(text string) tea.Cmd {
	d := &m.dialog
	d.ed.text = text
	if !utf8.ValidString(text) {
		d.ed.mode, d.ed.err = modeAsk, "Invalid edit: the text is not UTF-8. Press e to fix it."
		return nil
	}
	args, msg := tools.ParseArguments(text)
	if msg != "" {
		d.ed.mode, d.ed.err = modeAsk, "Invalid edit: "+safe.Text(msg)+" Press e to fix it."
		return nil
	}
	return m.checkArgs(args)
}

// checkArgs checks edited arguments against the tool's schema and what
// the gate makes of them, and brings a right edit up for approval.
func (m *model) checkArgs(args tools.Args) tea.Cmd {
	d := &m.dialog
	req := d.queue[0].req
	if req.Validate != nil {
		if err := req.Validate(args); err != nil {
			d.ed.mode, d.ed.err = modeAsk, "Invalid edit: "+safe.Text("Invalid arguments: "+explain(err))+" Press e to fix it."
			return nil
		}
	}
	d.ed.mode, d.ed.edited, d.ed.err, d.scroll = modeReview, args, "", 0
	d.ed.check = tools.Check{}
	if req.Recheck != nil {
		d.ed.check = req.Recheck(args)
	}
	if ref := d.ed.check.Refusal; ref != nil {
		d.ed.err = "This edit would be refused: " + safe.Text(ref.Message)
	} else if why := d.ed.check.Invalid; why != "" {
		d.ed.mode, d.ed.edited, d.ed.err = modeAsk, nil, "This edit cannot work: "+safe.Text(why)+" Press e to fix it."
		return nil
	}
	// The last approval has its own grace period: a key typed as the
	// review appears must not approve it.
	d.opened = m.now()
	return m.ensureTick()
}
