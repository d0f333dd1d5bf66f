package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/eventstab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/toolstab"
)

// The Tools tab's key hint shows every key whole at 120 columns (and at
// the narrowest pane), wrapped between keys rather than cut.
func TestToolsHintFitsThePane(t *testing.T) {
	for _, width := range []int{120, MinWidth} {
		m := newTestModel(t, width, 40)
		m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
		s := screen(t, m)
		for _, k := range toolstab.Keys {
			if !strings.Contains(s, k) {
				t.Errorf("at %d columns the Tools tab lacks %q:\n%s", width, k, s)
			}
		}
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "tab: focus") && strings.Contains(l, "…") {
				t.Errorf("at %d columns the hint is cut: %q", width, l)
			}
		}
	}
}

// An Events tab line is cut to the pane; with the pane focused, ↑ ↓
// select an event and enter shows it in full under its line: the whole
// arguments and result of a call, the question a run answers. Enter
// again folds it.
func TestEventsCanBeShownInFull(t *testing.T) {
	m := newTestModel(t, 120, 40)
	code := "import math\nprint(math.sqrt(2) * 40 + sum(range(100)))  # the whole snippet"
	run := events.RunInfo{ID: "r1", Agent: "orchestrator", Model: "qwen3:8b"}
	m.log.Record(events.Event{Type: events.RunStart, Run: run, Time: testTime, Text: "How long is the diagonal of a 40 cm square, plus the sum?"})
	m.log.Record(events.Event{Type: events.ToolCallStart, Run: run, Time: testTime, Tool: &events.ToolPayload{Tool: "code_interpreter", CallID: "c1", Arguments: map[string]any{"code": code}}})
	m.log.Record(events.Event{Type: events.ToolCallEnd, Run: run, Time: testTime, Tool: &events.ToolPayload{Tool: "code_interpreter", CallID: "c1",
		Arguments: map[string]any{"code": code}, Success: true, Status: "ok", Result: "5006.568542494924", LatencySeconds: 0.2}})
	press(m, "f4")
	press(m, "tab")
	if !m.pane.Focused() {
		t.Fatal("tab did not focus the pane")
	}
	s := screen(t, m)
	if strings.Contains(s, "5006.568") || strings.Contains(s, "the whole snippet") {
		t.Fatalf("the lines show more than one line each before anything is opened:\n%s", s)
	}
	if !strings.Contains(s, eventstab.Hint) {
		t.Fatalf("the focused tab does not say its keys:\n%s", s)
	}
	press(m, "enter") // the newest: the call's end
	s = readable(screen(t, m))
	for _, want := range []string{"result:5006.568542494924", "thewholesnippet"} {
		if !strings.Contains(s, want) {
			t.Errorf("the opened call's end lacks %q:\n%s", want, screen(t, m))
		}
	}
	press(m, "up")
	press(m, "up") // the run's start
	press(m, "enter")
	if s := readable(screen(t, m)); !strings.Contains(s, "question:Howlongisthediagonalofa40cmsquare,plusthesum?") {
		t.Errorf("the opened run start lacks its question:\n%s", screen(t, m))
	}
	press(m, "enter")
	press(m, "down")
	press(m, "down")
	press(m, "enter") // the call's end folds again
	if s := screen(t, m); strings.Contains(readable(s), "question:") || strings.Contains(s, "5006.568") {
		t.Errorf("enter did not fold the events:\n%s", s)
	}
}

// An event opened at the bottom of a long log stays in view whole, with
// its line, and the view keeps its place as new events arrive.
func TestAnOpenedEventStaysInView(t *testing.T) {
	m := newTestModel(t, 120, 30)
	for i := range 100 {
		m.log.Record(events.Event{Type: events.Notice, Time: testTime, Text: fmt.Sprintf("event %d: %s", i, strings.Repeat("word ", 30))})
	}
	press(m, "f4")
	press(m, "tab")
	for range 10 {
		press(m, "up")
	}
	press(m, "enter")
	s := screen(t, m)
	if !strings.Contains(s, "event 89: word") || strings.Count(readable(s), "wordwordwordwordwordwordwordwordwordwordwordword") < 1 {
		t.Fatalf("the opened event is not shown whole:\n%s", s)
	}
	m.log.Record(events.Event{Type: events.Notice, Time: testTime, Text: "event 100"})
	m.clampPane()
	if s2 := screen(t, m); !strings.Contains(s2, "event 89: word") || strings.Contains(s2, "event 100") {
		t.Fatalf("a new event moved the view:\n%s", s2)
	}
	press(m, "end")
	if s := screen(t, m); !strings.Contains(s, "event 100") {
		t.Fatalf("end did not show the newest event:\n%s", s)
	}
}
