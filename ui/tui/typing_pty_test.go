package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/ui/tui"
)

// typeProse types s at a person's pace (every gap), a key at a time.
func (term *terminal) typeProse(s string, gap time.Duration) {
	for _, r := range s {
		term.typeText(string(r))
		time.Sleep(gap)
	}
}

// promptLine is the screen's prompt text, the lines after "›" joined.
func promptText(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "›") {
			var b strings.Builder
			b.WriteString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "›")))
			for _, more := range lines[i+1 : min(i+3, len(lines))] {
				if t := strings.TrimSpace(more); t != "" && !strings.Contains(more, "ready") && !strings.Contains(more, "tool call") {
					b.WriteString(" " + t)
				}
			}
			return b.String()
		}
	}
	return ""
}

// A person typing the next question at 10 to 20 characters a second
// through the moment a dialog opens approves nothing, opens no editor, and
// finds every character they typed in the prompt; tab and a deliberate
// key then answer the dialog.
func TestTypingProseThroughADialogApprovesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newApprovalHome(t)
	marker := filepath.Join(h.dir, "editor-ran")
	editor := filepath.Join(h.dir, "edit.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := calcServer(t)
	term := h.start(t, srv, "EDITOR="+editor)
	term.typeText("please add\r")
	// The dialog opens while these keys are typed: "e", "a", "s", "d" and
	// "r" are all in it, at 15 and then 10 characters a second.
	prose := "now tell me why of that is, and explain"
	term.typeProse(prose, 66*time.Millisecond)
	term.typeProse(" all of it, as a list; edit nothing", 100*time.Millisecond)
	term.waitFor(10*time.Second, "Allow calculator?", "Press tab to answer this dialog")
	time.Sleep(tui.DialogGrace + tui.DialogQuiet) // everything typed has arrived
	s := term.screen()
	if !strings.Contains(s, "Allow calculator?") || strings.Contains(s, "The tool has answered.") || strings.Contains(s, "Understood") {
		t.Fatalf("typing answered the dialog:\n%s", s)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("typing opened the editor")
	}
	want := prose + " all of it, as a list; edit nothing"
	if got := promptText(s); got != want {
		t.Fatalf("the prompt holds %q, want every typed character: %q\n%s", got, want, s)
	}
	term.typeText("\t")
	pastGrace()
	term.typeText("a")
	s = term.waitFor(10*time.Second, "The tool has answered.")
	if got := promptText(s); got != want {
		t.Fatalf("the draft did not survive the turn: %q\n%s", got, s)
	}
	if chats := srv.Chats(); len(chats) != 2 {
		t.Errorf("%d requests: the typed text was sent", len(chats))
	}
}

// Prose typed into the focused Tools tab goes to the prompt and turns no
// tool on or off.
func TestTypingProseIntoTheToolsTabChangesNoTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	h := newApprovalHome(t)
	srv := calcServer(t)
	term := h.start(t, srv)
	term.typeText("\x1bOR") // F3: the Tools tab
	term.waitFor(10*time.Second, "[x] calculator", "[ ] code_interpreter")
	term.typeText("\t") // focus the pane
	time.Sleep(300 * time.Millisecond)
	prose := "just a quick question: any idea why?"
	term.typeProse(prose, 66*time.Millisecond)
	term.waitFor(10*time.Second, "your typing went to the prompt")
	time.Sleep(tui.DialogHold + 200*time.Millisecond)
	s := term.screen()
	if got := promptText(s); got != prose {
		t.Fatalf("the prompt holds %q, want %q\n%s", got, prose, s)
	}
	if !strings.Contains(s, "[x] calculator") || strings.Contains(s, "[x] code_interpreter") || !strings.Contains(s, "1 tool") {
		t.Fatalf("typing changed the tools:\n%s", s)
	}
}
