package tui_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/ui/tui"
)

// approvalHome is a home for the approval tests: the config makes the
// calculator ask (so a harmless tool shows the dialog) and the database
// lives at a known path, kept across restarts.
type approvalHome struct {
	dir, config, db string
	// work is the working directory jarvis starts in ("" the test's).
	work string
}

func newApprovalHome(t *testing.T) approvalHome {
	t.Helper()
	dir := t.TempDir()
	h := approvalHome{dir: dir, config: filepath.Join(dir, "config.toml"), db: filepath.Join(dir, "jarvis.db")}
	if err := os.WriteFile(h.config, []byte("[tool.calculator]\nconfirm = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// start runs jarvis in a pseudo-terminal in home h, with extra
// environment variables (EDITOR).
func (h approvalHome) start(t *testing.T, srv *ot.Server, env ...string) *terminal {
	t.Helper()
	return h.startWith(t, srv, "calculator", env...)
}

// startWith is start with the given tools enabled.
func (h approvalHome) startWith(t *testing.T, srv *ot.Server, toolList string, env ...string) *terminal {
	t.Helper()
	term := startTerminalAt(t, h.dir, h.work, env, 120, 40, "--host", srv.URL, "--model", "qwen3:8b", "--tools", toolList,
		"--config", h.config, "--db", h.db)
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	return term
}

// pastGrace waits as a person who stopped typing and read the dialog does:
// past its grace period and its quiet period, before which keys are
// typing (they go to the prompt).
func pastGrace() { time.Sleep(tui.DialogGrace + tui.DialogQuiet + 100*time.Millisecond) }

// calcServer scripts a model that calls the calculator with 1+1 and then
// says what the tool answered.
func calcServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("add")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	srv.On(et.ToolResultContains("calculator", "Denied by the user")).Reply(et.Text("Understood, I will not."))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("The tool has answered."))
	return srv
}

// lastToolExchange returns, from the last chat request, the assistant's
// calculator call and the tool message after it.
func lastToolExchange(t *testing.T, srv *ot.Server) (call api.ToolCall, result api.Message) {
	t.Helper()
	chats := srv.Chats()
	msgs := chats[len(chats)-1].Messages
	for i, m := range msgs {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 && i+1 < len(msgs) {
			call, result = m.ToolCalls[0], msgs[i+1]
		}
	}
	if call.Function.Name != "calculator" || result.Role != "tool" {
		t.Fatalf("the model was not sent the call and its result: %+v", msgs)
	}
	return call, result
}

func argsOf(t *testing.T, c api.ToolCall) string {
	t.Helper()
	b, err := json.Marshal(c.Function.Arguments)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApprovalDialogEditsInTheExternalEditor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newApprovalHome(t)
	editor := filepath.Join(h.dir, "edit.sh")
	// The editor rewrites the JSON it is given, as a person would.
	// It checks it was given the arguments in a private file.
	script := "#!/bin/sh\ngrep -q '\"1+1\"' \"$1\" || exit 3\n[ \"$(stat -c %a \"$1\")\" = 600 ] || exit 4\n" +
		"printf '{\"expression\": \"6*7\"}\\n' > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := calcServer(t)
	tmp := t.TempDir()
	term := h.start(t, srv, "EDITOR="+editor, "TMPDIR="+tmp)
	term.typeText("please add\r")
	term.waitFor(10*time.Second, "Allow calculator?", "[e] edit", "[A] always allow calculator")
	pastGrace()
	term.typeText("e")
	term.waitFor(10*time.Second, "Run calculator with your edit?", "6*7")
	pastGrace()
	term.typeText("a")
	s := term.waitFor(10*time.Second, "The tool has answered.")
	call, result := lastToolExchange(t, srv)
	if got := argsOf(t, call); got != `{"expression":"6*7"}` {
		t.Errorf("the model's call carries %s, want the edit", got)
	}
	if !strings.Contains(result.Content, "42") {
		t.Errorf("the edit did not run: %q", result.Content)
	}
	if !strings.Contains(s, "6*7") {
		t.Errorf("the transcript does not show the arguments that ran:\n%s", s)
	}
	// The temporary file is gone.
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("the edit's temporary file was left behind: %v", left)
	}
	term.quit()
	out, err := exec.Command(buildJarvis(t), "audit", "--json", "--db", h.db, "--config", h.config).Output()
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := json.Unmarshal(out, &entries); err != nil || len(entries) != 1 {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	e := entries[0]
	if e["decision"] != "edited" || e["by"] != "person" || e["source"] != "tui" || e["session"] == nil {
		t.Errorf("audited %v", e)
	}
}

func TestApprovalDialogInlineEditAndInvalidEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newApprovalHome(t)
	srv := calcServer(t)
	term := h.start(t, srv) // no $VISUAL or $EDITOR: the dialog's own editor
	term.typeText("please add\r")
	term.waitFor(10*time.Second, "Allow calculator?")
	pastGrace()
	term.typeText("e")
	term.waitFor(10*time.Second, "Arguments as JSON:", "[ctrl+s] check the edit")
	clear := strings.Repeat("\x7f", 40)
	// A number where the schema wants a string.
	term.typeText(clear + `{"expression": 5}`)
	term.typeText("\x13") // ctrl+s
	s := term.waitFor(10*time.Second, "Invalid edit", "[a] allow once")
	if !strings.Contains(s, "expression") {
		t.Errorf("the error does not name the parameter:\n%s", s)
	}
	// The edit is kept: e opens it again.
	pastGrace()
	term.typeText("e")
	term.waitFor(10*time.Second, "Arguments as JSON:", `{"expression": 5}`)
	term.typeText(clear + `{"expression": "2*21"}`)
	term.typeText("\x13")
	term.waitFor(10*time.Second, "Run calculator with your edit?", "2*21")
	// Enter and space never approve, not even here: the space is typing,
	// so it goes to the prompt, and the dialog then waits for tab.
	term.typeText("\r ")
	time.Sleep(200 * time.Millisecond)
	term.waitFor(2*time.Second, "Run calculator with your edit?", "Press tab to answer this dialog")
	term.typeText("\t")
	pastGrace()
	term.typeText("a")
	term.waitFor(10*time.Second, "The tool has answered.")
	call, result := lastToolExchange(t, srv)
	if got := argsOf(t, call); got != `{"expression":"2*21"}` || !strings.Contains(result.Content, "42") {
		t.Errorf("call %s result %q", got, result.Content)
	}
}

func TestApprovalDialogDeniesWithAReason(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newApprovalHome(t)
	srv := calcServer(t)
	term := h.start(t, srv)
	term.typeText("please add\r")
	term.waitFor(10*time.Second, "Allow calculator?", "[r] deny with a reason")
	pastGrace()
	term.typeText("r")
	term.waitFor(10*time.Second, "Reason:", "[enter] deny with this reason")
	term.typeText("use the staging numbers\r")
	term.waitFor(10*time.Second, "Understood, I will not.")
	_, result := lastToolExchange(t, srv)
	if result.Content != "Denied by the user: use the staging numbers" {
		t.Errorf("the model read %q", result.Content)
	}
}

// "Always allow" holds after a restart, shows in the Tools tab, and
// `jarvis approvals revoke` makes the tool ask again.
func TestApprovalAlwaysAllowSurvivesARestartUntilRevoked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	h := approvalHome{dir: dir, config: filepath.Join(dir, "config.toml"), db: filepath.Join(dir, "jarvis.db")}
	// Without the config's confirm = true, which would make it ask anyway.
	if err := os.WriteFile(h.config, []byte("[tool.calculator]\ntimeout = 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("add")).Reply(et.ToolCall("code_interpreter", `{"code":"print(1)"}`))
	srv.On(et.ToolResult("code_interpreter")).Reply(et.Text("The tool has answered."))
	run := func() *terminal {
		term := h.startWith(t, srv, "code_interpreter")
		term.typeText("please add\r")
		return term
	}
	term := run()
	term.waitFor(10*time.Second, "Allow code_interpreter?", "[A] always allow code_interpreter")
	pastGrace()
	term.typeText("A")
	// For code, "always" is the whole tool: the dialog asks again.
	term.waitFor(10*time.Second, "Always allow code_interpreter, whatever it is asked to do?", "[y] yes, always")
	pastGrace()
	term.typeText("y")
	term.waitFor(20*time.Second, "The tool has answered.")
	term.quit()

	term = run()
	s := term.waitFor(20*time.Second, "The tool has answered.")
	if strings.Contains(s, "Allow code_interpreter?") {
		t.Fatal("an always-allowed tool asked after a restart")
	}
	term.typeText("\x1bOR") // F3: the Tools tab says which tools are always allowed
	term.waitFor(10*time.Second, "code_interpreter ⚠ always")
	term.quit()

	out, err := exec.Command(buildJarvis(t), "approvals", "revoke", "code_interpreter", "--db", h.db, "--config", h.config).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ask for confirmation again") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	term = run()
	term.waitFor(10*time.Second, "Allow code_interpreter?")
	pastGrace()
	term.typeText("d")
	term.waitFor(10*time.Second, "The tool has answered.")
	term.quit()
}

// ctrl+v in the dialog's reason and edit boxes pastes the system
// clipboard there, as in the prompt: into the box that is open, without
// its escape sequences, and never into the prompt behind the dialog.
func TestCtrlVPastesIntoTheApprovalDialogsBoxes(t *testing.T) {
	needPathClipboard(t)
	h := newApprovalHome(t)
	bin := t.TempDir()
	clip := filepath.Join(bin, "clip")
	setClipboard := func(text string) {
		t.Helper()
		if err := os.WriteFile(clip, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// With no clipboard file it fails as xclip does on an empty clipboard.
	xclip := "#!/bin/sh\nif [ -f '" + clip + "' ]; then cat '" + clip + "'; else echo 'Error: target STRING not available' >&2; exit 1; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "xclip"), []byte(xclip), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + "/bin:/usr/bin", "WAYLAND_DISPLAY="}
	srv := calcServer(t)
	srv.On(et.UserSays("sum")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	term := h.start(t, srv, env...)

	term.typeText("please add\r")
	term.waitFor(10*time.Second, "Allow calculator?")
	pastGrace()
	term.typeText("e")
	term.waitFor(10*time.Second, "Arguments as JSON:", "[ctrl+s] check the edit")
	setClipboard(`{"expression": "2*21"}`)
	term.typeText(strings.Repeat("\x7f", 40) + "\x16") // ctrl+v
	term.waitFor(10*time.Second, `{"expression": "2*21"}`)
	term.typeText("\x13") // ctrl+s
	term.waitFor(10*time.Second, "Run calculator with your edit?", "2*21")
	pastGrace()
	term.typeText("a")
	term.waitFor(10*time.Second, "The tool has answered.")
	if call, _ := lastToolExchange(t, srv); argsOf(t, call) != `{"expression":"2*21"}` {
		t.Errorf("the call ran with %s, want the pasted arguments", argsOf(t, call))
	}

	term.typeText("one more sum\r")
	term.waitFor(10*time.Second, "Allow calculator?", "[r] deny with a reason")
	pastGrace()
	term.typeText("r")
	term.waitFor(10*time.Second, "Reason:", "[enter] deny with this reason")
	// The dialog says why nothing was pasted: the status bar, where the
	// prompt says it, shows the wait for approval.
	if err := os.Remove(clip); err != nil {
		t.Fatal(err)
	}
	term.typeText("\x16")
	term.waitFor(10*time.Second, "Nothing pasted: the clipboard program said: Error: target STRING not available")
	setClipboard("use the \x1b[31mstaging numbers")
	term.typeText("\x16")
	s := term.waitFor(10*time.Second, "staging numbers")
	if strings.Contains(s, "\x1b[31m") {
		t.Errorf("the clipboard's escape sequence reached the screen:\n%q", s)
	}
	if strings.Contains(s, "Nothing pasted") {
		t.Errorf("the note about the failed paste stayed after the next key:\n%s", s)
	}
	term.typeText("\r")
	s = term.waitFor(10*time.Second, "Understood, I will not.", "Ask anything")
	_, result := lastToolExchange(t, srv)
	if !strings.HasPrefix(result.Content, "Denied by the user: use the") || !strings.Contains(result.Content, "staging numbers") || strings.Contains(result.Content, "\x1b") {
		t.Errorf("the model read %q, want the pasted reason without its escape sequence", result.Content)
	}
	if strings.Count(s, "staging numbers") > 1 {
		t.Errorf("the paste also reached the prompt:\n%s", s)
	}
}
