package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// TestPullAndModelStateInPseudoTerminal runs the workbench in a terminal:
// the header says whether the model is loaded, /pull draws its progress
// bar above the prompt until the model is there, and a model that is not
// on the server is offered for download, which ctrl+p accepts.
func TestPullAndModelStateInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.Default(et.Text("ok"))
	srv.Pullable(ot.ModelSpec{Name: "qwen3:14b", Capabilities: []string{"completion", "tools"}},
		ot.PullSpec{Layers: []int64{9_000_000_000}, Steps: 30, Interval: 60 * time.Millisecond})
	srv.Pullable(ot.ModelSpec{Name: "llama3.2", Capabilities: []string{"completion"}}, ot.PullSpec{Layers: []int64{2_000_000_000}})

	term := startTerminal(t, 120, 40, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "Ask anything", "qwen3:8b @ ", " · cold")
	term.typeText("hello\r")
	term.waitFor(10*time.Second, "ok", " · loaded")

	term.typeText("/pull qwen3:14b\r")
	s := term.waitFor(10*time.Second, "⇣ qwen3:14b", "█", "░", "GB/9.0 GB", "esc stops")
	var bar string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "⇣ qwen3:14b") {
			bar = line
		}
	}
	if !strings.Contains(bar, "%") {
		t.Fatalf("progress line: %q", bar)
	}
	s = term.waitFor(15*time.Second, "Downloaded qwen3:14b (9.0 GB in")
	if strings.Contains(s, "⇣ qwen3:14b") {
		t.Fatalf("the bar stayed after the download:\n%s", s)
	}

	// A model that is not there is offered, and ctrl+p downloads it and
	// makes it the model.
	term.typeText("/model llama3.2\r")
	term.waitFor(10*time.Second, "llama3.2 is not on the server", "ctrl+p downloads it · esc dismisses")
	term.typeText("\x10") // ctrl+p
	s = term.waitFor(10*time.Second, "Downloaded llama3.2", "It is the model now.", "llama3.2 @ ")
	if t.Failed() || testing.Verbose() {
		t.Logf("screen:\n%s", s)
	}
}
