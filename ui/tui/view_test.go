package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

func TestGoldenStreamedAnswer(t *testing.T) {
	m := newTestModel(t, 100, 24)
	run := fakeRun(m, "Write a haiku about terminals.")
	feed(m, events.Event{Type: events.RunStart, Run: run}, tok(run, "Green cursor "), tok(run, "blinks on,\nkeys "))
	golden(t, "stream_partial", screen(t, m))
	feed(m, tok(run, "fall like rain"),
		turnEnd(run, 1, "Green cursor blinks on,\nkeys fall like rain in the dark —\nthe build passes **green**.", 0),
		events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 1, Usage: events.Usage{PromptTokens: 120, OutputTokens: 42}}})
	m.Update(runDoneMsg{runID: run.ID})
	golden(t, "stream_done", screen(t, m))
}

func TestGoldenToolPanels(t *testing.T) {
	m := newTestModel(t, 100, 34)
	run := fakeRun(m, "Check a few things.")
	calc := map[string]any{"expression": "15/100*340"}
	file := map[string]any{"path": "/etc/hosts", "max_lines": 3.0}
	code := map[string]any{"code": "import os; os.remove('x')"}
	feed(m, turnEnd(run, 1, "", 4),
		toolStart(run, "c1", "calculator", calc, 4),
		toolStart(run, "c2", "file_read", file, 4),
		toolStart(run, "c3", "web_search", map[string]any{"query": "ollama tools"}, 4),
	)
	feed(m, toolEnd(run, "c1", "calculator", calc, tools.StatusOK, "51.0", 0.0004))
	feed(m, toolEnd(run, "c2", "file_read", file, tools.StatusError, "File not found: /etc/hosts", 0.0021))
	feed(m, events.Event{Type: events.ToolCallDenied, Run: run, Tool: &events.ToolPayload{Tool: "code_interpreter", CallID: "c4", Arguments: code,
		Status: string(tools.StatusDenied), Result: "Tool 'code_interpreter' execution denied by user."}})
	// c3 is still running: its panel shows the spinner and the timer.
	golden(t, "tool_panels", screen(t, m))

	m.Update(tea.KeyMsg{Type: tea.KeyCtrlE})
	v := screen(t, m)
	if !strings.Contains(v, "max_lines: 3") || !strings.Contains(v, `path: "/etc/hosts"`) {
		t.Fatalf("expanded panels must show the arguments in full:\n%s", v)
	}
}

func TestGoldenConfirmationDialog(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "Run some code.")
	reply := make(chan tools.Decision, 1)
	req := confirmRequestMsg{req: tools.ConfirmRequest{
		Call:      tools.Call{ID: "k1", Name: "code_interpreter"},
		Spec:      tools.Spec{Name: "code_interpreter", Description: "Run a Python snippet in a sandboxed subprocess and return its output."},
		Arguments: tools.Args{"code": "print(sum(range(10)))\nprint('done')"}, Run: run,
	}, reply: reply, once: new(syncOnce)}
	feed(m, events.Event{Type: events.ConfirmAsk, Run: run, Tool: &events.ToolPayload{Tool: "code_interpreter", CallID: "k1", Arguments: map[string]any(req.req.Arguments)}})
	m.Update(req)
	golden(t, "confirm_dialog", screen(t, m))
}

func TestGoldenToolsPane(t *testing.T) {
	m := newTestModel(t, 140, 32)
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	golden(t, "tools_pane", screen(t, m))
}

func TestGoldenSizes(t *testing.T) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"narrow", 60, 20}, {"wide", 180, 40}, {"too_small", 50, 15}} {
		t.Run(size.name, func(t *testing.T) {
			m := newTestModel(t, size.w, size.h)
			run := fakeRun(m, "What is 15% of 340?")
			args := map[string]any{"expression": "15/100*340"}
			feed(m, turnEnd(run, 1, "", 1), toolStart(run, "c1", "calculator", args, 1),
				toolEnd(run, "c1", "calculator", args, tools.StatusOK, "51.0", 0.0003),
				tok(run, "15% of 340 is 51."), turnEnd(run, 2, "15% of 340 is 51.", 0),
				events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 2}})
			m.Update(runDoneMsg{runID: run.ID})
			if size.w >= 100 {
				m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
			}
			golden(t, "size_"+size.name, screen(t, m))
		})
	}
}

func TestResizeKeepsFrameExact(t *testing.T) {
	m := newTestModel(t, 120, 40)
	run := fakeRun(m, "hi")
	feed(m, tok(run, strings.Repeat("word ", 400)))
	for _, s := range [][2]int{{60, 20}, {200, 60}, {61, 21}, {80, 24}, {59, 19}, {100, 30}} {
		m.Update(tea.WindowSizeMsg{Width: s[0], Height: s[1]})
		screen(t, m)
		m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
		screen(t, m)
	}
}

func TestDialogIgnoresEarlyKeysAndEnter(t *testing.T) {
	m := newTestModel(t, 100, 30)
	fakeRun(m, "x")
	reply := make(chan tools.Decision, 1)
	m.Update(confirmRequestMsg{req: tools.ConfirmRequest{Call: tools.Call{ID: "k"}, Spec: tools.Spec{Name: "code_interpreter"}}, reply: reply, once: new(syncOnce)})
	c := newClock(m)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")}) // within 400 ms: typing
	c.after(time.Second)
	if len(reply) != 0 || m.input.value() != "a" {
		t.Fatalf("a key inside the grace period answered the dialog (draft %q)", m.input.value())
	}
	c.now = c.now.Add(time.Second)
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m.Update(tea.KeyMsg{Type: tea.KeySpace})
	c.after(time.Second)
	if len(reply) != 0 {
		t.Fatal("enter or space answered the dialog")
	}
	press(m, "tab")
	c.answerKey("s")
	if len(reply) != 1 {
		t.Fatal("a deliberate s after tab did not answer")
	}
	if d := <-reply; d != tools.AllowSession {
		t.Fatalf("decision = %v", d)
	}
	if m.dialog.open() {
		t.Fatal("dialog still open")
	}
}
