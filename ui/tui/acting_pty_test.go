package tui_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// actingHome is a home and a project for the tools that change things:
// the project (the working directory) is a git repository with a
// committed main.go, the home has the git identity the commit needs.
type actingHome struct{ approvalHome }

const greetV1 = "package main\n\nfunc greet() string { return \"hi\" }\n"

func newActingHome(t *testing.T) actingHome {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	h := actingHome{approvalHome: newApprovalHome(t)}
	h.work = t.TempDir()
	os.WriteFile(h.config, nil, 0o600)
	gitconfig := "[user]\n\tname = Test Person\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(h.dir, ".gitconfig"), []byte(gitconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.work, "main.go"), []byte(greetV1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.go"}, {"commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = h.work, []string{"HOME=" + h.dir, "PATH=" + os.Getenv("PATH")}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return h
}

func (h actingHome) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.work, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestModelReadsEditsRunsCommitsAndUndoPutsTheFileBack is the whole
// loop: the model reads a file, proposes an edit (the dialog shows its
// diff), runs a command, commits; /changes lists the change and /undo puts
// the file back.
func TestModelReadsEditsRunsCommitsAndUndoPutsTheFileBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newActingHome(t)
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("say hello")).Reply(et.ToolCall("file_read", `{"path":"main.go"}`))
	srv.On(et.ToolResult("file_read")).Reply(et.ToolCall("file_edit", `{"path":"main.go","old_string":"return \"hi\"","new_string":"return \"hello\""}`))
	srv.On(et.ToolResult("file_edit")).Reply(et.ToolCall("shell_exec", `{"command":"grep -c hello main.go"}`))
	srv.On(et.ToolResult("shell_exec")).Reply(et.ToolCall("git_commit", `{"message":"Say hello","files":["main.go"]}`))
	srv.On(et.ToolResult("git_commit")).Reply(et.Text("Done: greet says hello, and it is committed."))

	term := h.startWith(t, srv, "file_read,file_edit,shell_exec,git_commit")
	term.typeText("make greet say hello\r")
	// The read needs no question; the edit asks, with its diff.
	term.waitFor(10*time.Second, "Allow file_edit?", "Changes: +1 −1 main.go", `-func greet() string { return "hi" }`,
		`+func greet() string { return "hello" }`, "[s] allow changes in the", "[e] edit")
	pastGrace()
	term.typeText("a")
	term.waitFor(10*time.Second, "Allow shell_exec?", "runs in the working directory", "grep -c hello main.go")
	pastGrace()
	term.typeText("a")
	term.waitFor(10*time.Second, "Allow git_commit?", "commits 1 file", "Say hello")
	pastGrace()
	term.typeText("a")
	s := term.waitFor(15*time.Second, "Done: greet says hello", "ready")
	for _, want := range []string{"✓ file_read", "✓ file_edit", "+1 −1 main.go (ctrl+e shows the diff)", "✓ shell_exec", "Exit code 0.", "✓ git_commit"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if got := h.file(t, "main.go"); !strings.Contains(got, `"hello"`) {
		t.Fatalf("main.go = %q", got)
	}
	log, err := exec.Command("git", "-C", h.work, "log", "--format=%s").Output()
	if err != nil || !strings.HasPrefix(string(log), "Say hello\n") {
		t.Fatalf("git log = %q, %v", log, err)
	}

	term.typeText("/changes\r")
	term.waitFor(10*time.Second, "Files changed in this session", "Turn 1: make greet say hello", "+1 −1 main.go · file_edit")
	term.typeText("/undo\r")
	term.waitFor(10*time.Second, "Undone (1 change): ./main.go put back as before.")
	if got := h.file(t, "main.go"); got != greetV1 {
		t.Fatalf("after /undo main.go = %q", got)
	}
	term.typeText("/undo\r")
	term.waitFor(10*time.Second, "Nothing to undo")
	term.quit()
}

// TestEditingAProposedWriteInTheEditor: e on a file_write opens the file
// as it would be in $EDITOR; what the person saves is what is written, and
// what the model reads in its own call.
func TestEditingAProposedWriteInTheEditor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newActingHome(t)
	editor := filepath.Join(h.dir, "edit.sh")
	// The editor is given the file's content under the file's name.
	script := "#!/bin/sh\ncase \"$1\" in *notes.txt) ;; *) exit 3;; esac\ngrep -q '^draft$' \"$1\" || exit 4\nprintf 'final words\\n' > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("notes")).Reply(et.ToolCall("file_write", `{"path":"notes.txt","content":"draft\n"}`))
	srv.On(et.ToolResult("file_write")).Reply(et.Text("Written."))
	term := h.startWith(t, srv, "file_write", "EDITOR="+editor)
	term.typeText("write the notes\r")
	term.waitFor(10*time.Second, "Allow file_write?", "Changes: +1 −0 notes.txt", "+draft")
	pastGrace()
	term.typeText("e")
	term.waitFor(10*time.Second, "Run file_write with your edit?", "Your edit, as it changes the files", "+final words")
	pastGrace()
	term.typeText("a")
	term.waitFor(10*time.Second, "Written.")
	if got := h.file(t, "notes.txt"); got != "final words\n" {
		t.Fatalf("notes.txt = %q", got)
	}
	chats := srv.Chats()
	var sent string
	for _, m := range chats[len(chats)-1].Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 {
			b, _ := json.Marshal(m.ToolCalls[0].Function.Arguments)
			sent = string(b)
		}
	}
	if !strings.Contains(sent, `final words`) {
		t.Fatalf("the model must read the edited call: %s", sent)
	}
}

// TestRunningCommandShowsItsOutputLive: the panel of a command shows what
// it printed so far, and its timer, while it runs.
func TestRunningCommandShowsItsOutputLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newActingHome(t)
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("count")).Reply(et.ToolCall("shell_exec", `{"command":"echo first-line; sleep 2; echo second-line"}`))
	srv.On(et.ToolResult("shell_exec")).Reply(et.Text("Counted."))
	term := h.startWith(t, srv, "shell_exec")
	term.typeText("count for me\r")
	term.waitFor(10*time.Second, "Allow shell_exec?")
	pastGrace()
	term.typeText("a")
	s := term.waitFor(5*time.Second, "│ first-line", "running")
	if strings.Contains(s, "│ second-line") {
		t.Fatalf("the output must show while the command runs:\n%s", s)
	}
	term.waitFor(10*time.Second, "Counted.", "→ Exit code 0.")
}
