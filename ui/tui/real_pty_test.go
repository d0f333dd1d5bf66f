//go:build real

package tui_test

import (
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/internal/realollama"
)

// The workbench in a real terminal against a real Ollama with scripted
// models (make test-real): a tool call the server's parser made, the
// answer, and the Context tab showing the window the server gave and the
// prompt as the server's template renders it.
func TestRealWorkbenchInPseudoTerminal(t *testing.T) {
	srv := realollama.Start(t, realollama.Options{Ctx: 2048, Models: []string{"scripted"}})
	term := startTerminal(t, 150, 48, "--host", srv.URL, "--model", "scripted", "--tools", "calculator")
	term.waitFor(20*time.Second, "scripted", "Ask anything")
	term.typeText("What is 15% of 340?\r")
	term.waitFor(30*time.Second, "calculator", "15% of 340 is 51.", "ready")

	term.typeText("\x1b[17~") // F6: the side pane, on its Context tab
	term.waitFor(20*time.Second, "Window 2,048 tokens", "Next request:")
	// The scripted model's template marks each message: the server's
	// rendering, not jarvis's own text.
	term.waitFor(20*time.Second, "<|tools|>[{\"type\":\"function\"", "<|user|>What is 15% of", "<|tool|>51.0<|asst|>")
}
