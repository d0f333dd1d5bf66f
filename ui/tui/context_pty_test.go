package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// The Context tab in a real terminal: after a turn on a 2,048-token model,
// F6 shows the window the server gave, the budget, and the prompt exactly
// as the server renders it (here with Ollama's own qwen3-vl renderer, as
// a real server renders that family); /ctx above the model's maximum is
// capped and says so.
func TestContextTabInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tinyt", Capabilities: []string{engine.CapCompletion, engine.CapTools},
		ContextLength: 2048, Renderer: "qwen3-vl-instruct", Parser: "qwen3-vl-instruct"})
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))

	term := startTerminal(t, 150, 48, "--host", srv.URL, "--model", "tinyt", "--tools", "calculator")
	term.waitFor(10*time.Second, "tinyt", "Ask anything")
	term.typeText("What is 15% of 340?\r")
	term.waitFor(10*time.Second, "15% of 340 is 51.", "ready")
	// The turn's footer and the header say how full the window was.
	term.waitFor(5*time.Second, "of 2.0k tokens")

	term.typeText("\x1b[17~") // F6: the side pane, on its Context tab
	term.waitFor(10*time.Second, "Window 2,048 tokens", "the model's own maximum", "Next request:", "calibrated")
	// Qwen's chat format, its tool list in <tools> tags: the server's
	// rendering, not jarvis's own text.
	s := term.waitFor(10*time.Second, "<|im_start|>system", "# Tools", "<tools>")
	if strings.Contains(s, "cannot render") {
		t.Fatalf("the server renders, but the tab says it cannot:\n%s", s)
	}

	// Above the model's maximum, /ctx is capped and says so: the window
	// stays 2,048 and nothing reloads.
	term.typeText("/ctx 4096\r")
	s = term.waitFor(5*time.Second, "The window you set (4,096 tokens, set with /ctx) is above the model's maximum", "at most 2,048 tokens")
	if strings.Contains(s, "reloads the model") {
		t.Fatalf("/ctx says a reload comes while the window stays:\n%s", s)
	}
	term.typeText("And 20% of 340?\r")
	term.waitFor(10*time.Second, "ready")
	for _, r := range srv.Requests() {
		if r.Chat != nil && !r.RenderOnly && r.NumCtx != 2048 {
			t.Fatalf("request %d sent num_ctx %d, past the model's 2,048", r.Seq, r.NumCtx)
		}
		if r.SilentCut() {
			t.Fatalf("request %d was cut by the server", r.Seq)
		}
	}
}
