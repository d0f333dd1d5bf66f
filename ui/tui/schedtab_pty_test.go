package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/ui/tui"
)

// TestSchedulerTabInPseudoTerminal drives the Scheduler tab in the built
// binary: create a task through the form, run it now against a fake model
// server, read its log, cancel it.
func TestSchedulerTabInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("say hello")).Reply(et.TextChunks("Hello ", "from the task."))

	term := startTerminal(t, 110, 30, "--host", srv.URL, "--model", "qwen3:8b", "--agent", "simple")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.typeText("\x1b[15~") // F5: the Scheduler tab
	term.waitFor(5*time.Second, "No scheduled tasks")
	term.typeText("\t") // focus the pane
	term.typeText("n")
	term.waitFor(5*time.Second, "New scheduled task", "type a prompt to create")

	term.typeText("say hello")
	term.typeText("\t")
	term.typeText("c") // cron
	term.typeText("\t")
	term.typeText("61 * * * *")
	term.waitFor(5*time.Second, `the minute field "61"`, "fix the fields marked above")
	term.typeText("\x15") // ctrl+u clears the value
	term.typeText("*/5 * * * *")
	s := term.waitFor(5*time.Second, "Runs cron */5 * * * *", "ctrl+s create")
	if n := strings.Count(s, ":00 ") + strings.Count(s, ":05 ") + strings.Count(s, ":10 ") + strings.Count(s, ":15 ") +
		strings.Count(s, ":20 ") + strings.Count(s, ":25 ") + strings.Count(s, ":30 ") + strings.Count(s, ":35 ") +
		strings.Count(s, ":40 ") + strings.Count(s, ":45 ") + strings.Count(s, ":50 ") + strings.Count(s, ":55 "); n < 5 {
		t.Errorf("the preview should list five run times on the 5-minute marks:\n%s", s)
	}
	term.typeText("\x13") // ctrl+s
	term.waitFor(5*time.Second, "Created task", "say hello", "active")

	term.typeText("g")
	term.waitFor(15*time.Second, "ran in", "Hello from the task.")

	readPane() // a person reads the pane between its keys
	term.typeText("l")
	term.waitFor(5*time.Second, "Runs of task", "manual", "✓ success", "last 1 run, newest first",
		"by tui (pid", "on ollama "+srv.URL+" · qwen3:8b")
	term.typeText("\x1b")
	readPane() // esc stands alone, not the start of an escape sequence

	term.typeText("x")
	term.waitFor(5*time.Second, "for good? y/n")
	term.typeText("y")
	s = term.waitFor(5*time.Second, "cancelled.")
	if t.Failed() || testing.Verbose() {
		t.Logf("screen:\n%s", s)
	}
}

// readPane waits as a person does between two keys of the side pane,
// reading what the first did: keys closer together are typing.
func readPane() { time.Sleep(tui.PaneTypingGap + 100*time.Millisecond) }
