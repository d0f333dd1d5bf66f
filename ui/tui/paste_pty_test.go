package tui_test

import (
	"fmt"
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
