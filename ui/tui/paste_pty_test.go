package tui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// A bracketed paste of many lines, as a terminal sends it: the prompt
// shows the end of the paste, where the cursor is.
func TestBracketedPasteShowsTheCursorInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	term := startTerminal(t, 100, 30, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	var rows []string
	for i := 1; i <= 12; i++ {
		rows = append(rows, fmt.Sprintf("row-%02d", i))
	}
	term.typeText("\x1b[200~" + strings.Join(rows, "\n") + "\x1b[201~")
	s := term.waitFor(10*time.Second, "row-12")
	if strings.Contains(s, "row-01") {
		t.Fatalf("the prompt shows the paste's first lines, not its end:\n%s", s)
	}
	term.typeText("\x03") // clears the prompt
	term.waitFor(5*time.Second, "Ask anything")
	term.quit()
}

// needPathClipboard skips a test that runs the binary with a stand-in
// clipboard program on $PATH where the clipboard is not read that way.
func needPathClipboard(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	switch runtime.GOOS {
	case "linux", "freebsd", "netbsd", "openbsd", "dragonfly":
	default:
		t.Skip("the clipboard programs are looked for on $PATH only on Linux and the BSDs")
	}
}

// ctrl+v pastes the system clipboard into the prompt, through the
// clipboard program the text area finds on $PATH (here a stand-in xclip,
// whose text carries an escape sequence the prompt must not keep); with
// no clipboard program, the status bar says what to install.
func TestCtrlVPastesTheClipboardInPseudoTerminal(t *testing.T) {
	needPathClipboard(t)
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	bin := t.TempDir()
	xclip := "#!/bin/sh\nprintf 'from the clipboard \\033[31mred\\033[0m, line one\\nline two'\n"
	if err := os.WriteFile(filepath.Join(bin, "xclip"), []byte(xclip), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + "/bin:/usr/bin", "WAYLAND_DISPLAY="}
	term := startTerminalIn(t, t.TempDir(), env, 100, 30, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.typeText("\x16") // ctrl+v
	s := term.waitFor(10*time.Second, "from the clipboard", "line two")
	if strings.Contains(s, "\x1b[31m") {
		t.Errorf("the clipboard's escape sequence reached the screen:\n%q", s)
	}
	term.typeText("\x03") // clears the prompt
	term.waitFor(5*time.Second, "Ask anything")
	term.quit()

	empty := t.TempDir()
	term = startTerminalIn(t, t.TempDir(), []string{"PATH=" + empty, "WAYLAND_DISPLAY="}, 120, 30, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.typeText("\x16")
	term.waitFor(10*time.Second, "Nothing pasted: No clipboard utilities available")
	term.quit()
}
