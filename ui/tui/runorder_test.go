package tui

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The status bar says what the model is sending: nothing yet, thinking
// (only while thinking arrives), or the answer.
func TestStatusSaysWhatTheModelSends(t *testing.T) {
	m := newTestModel(t, 100, 24)
	run := fakeRun(m, "Why is the sky blue?")
	steps := []struct {
		ev   []events.Event
		want string
	}{
		{nil, "waiting for the model · 1.5s · esc cancels"},
		{[]events.Event{{Type: events.Thinking, Run: run, Text: "Rayleigh"}}, "thinking · 1.5s"},
		{[]events.Event{tok(run, "Because ")}, "writing · 1.5s"},
		{[]events.Event{{Type: events.Thinking, Run: run, Text: " scattering"}}, "thinking · 1.5s"},
		{[]events.Event{tok(run, "of scattering.")}, "writing · 1.5s"},
		{[]events.Event{turnEnd(run, 1, "Because of scattering.", 1)}, "waiting for the model · 1.5s"},
		{[]events.Event{toolStart(run, "c1", "calculator", map[string]any{"expression": "1+1"}, 1)}, "running calculator"},
		{[]events.Event{toolEnd(run, "c1", "calculator", map[string]any{"expression": "1+1"}, tools.StatusOK, "2", 0.01)}, "waiting for the model · 1.5s"},
	}
	for i, s := range steps {
		feed(m, s.ev...)
		if got := m.stateText(); !strings.HasPrefix(got, s.want) {
			t.Errorf("step %d: status %q, want it to start with %q", i, got, s.want)
		}
	}
}

// The run's end can reach the workbench before its last events (they
// come in batches); the total still comes after the final answer.
func TestRunTotalStaysBelowTheFinalAnswer(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "What is 2**10?")
	args := map[string]any{"expression": "2**10"}
	feed(m, turnEnd(run, 1, "", 1), toolStart(run, "c1", "calculator", args, 1),
		toolEnd(run, "c1", "calculator", args, tools.StatusOK, "1024", 0.01))
	usage := events.Usage{PromptTokens: 240, OutputTokens: 60}
	m.Update(runDoneMsg{runID: run.ID, result: &agent.Result{Turns: 2, Usage: usage, Content: "2**10 is 1024."}})
	feed(m, tok(run, "2**10 is "), tok(run, "1024."), turnEnd(run, 2, "2**10 is 1024.", 0),
		events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 2, Usage: usage}})
	v := screen(t, m)
	answer, footer, total := -1, -1, -1
	for i, line := range strings.Split(v, "\n") {
		switch {
		case strings.Contains(line, "2**10 is 1024."):
			answer = i
		case strings.Contains(line, "↳ "):
			footer = i // the last reply's footer
		case strings.Contains(line, "Σ 2 turns"):
			total = i
		}
	}
	if answer < 0 || total < 0 || !(answer < footer && footer < total) {
		t.Fatalf("answer at line %d, its footer at %d, the total at %d: the total must come last:\n%s", answer, footer, total, v)
	}
}
