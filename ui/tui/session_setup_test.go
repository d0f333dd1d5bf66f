package tui

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// lastNote is the text of the last note in the transcript.
func lastNote(m *model) string {
	for i := len(m.transcript.items) - 1; i >= 0; i-- {
		if n, ok := m.transcript.items[i].(*noteItem); ok {
			return n.text
		}
	}
	return ""
}

// --continue reopens the session with its model, agent and tools (and
// its cost), except what the command line sets; the session records a
// change of tools made while it runs.
func TestContinueRestoresTheSessionsSetup(t *testing.T) {
	srv := fakeServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLiveWith(t, srv, dbPath, false, config.Flags{}, func(c *config.Config) {
		c.Tools = []string{"calculator", "think"}
		c.Prices = map[string]config.Price{"qwen3:8b": {Input: 100, Output: 400}}
	})
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	cost := l.m.totals.CostUSD
	if cost == 0 || !strings.Contains(l.screen(), "15% of 340 is 51.") {
		t.Fatalf("the priced run did not happen (cost %v):\n%s", cost, l.screen())
	}

	// Opened with the defaults (the calculator alone, no prices).
	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	if got := strings.Join(l2.m.enabled, ","); got != "calculator,think" {
		t.Errorf("tools after --continue: %s, want the session's calculator,think", got)
	}
	note := lastNote(l2.m)
	for _, want := range []string{"Restored its model qwen3:8b, agent orchestrator and tools calculator, think.", format.Cost(cost, false)} {
		if !strings.Contains(note, want) {
			t.Errorf("the opening note %q lacks %q", note, want)
		}
	}
	if s := l2.screen(); !strings.Contains(s, format.Cost(cost, false)+" · 1 tool call") || !strings.Contains(s, "2 tools") {
		t.Errorf("the reopened session does not show its cost, its tool call and its tools:\n%s", s)
	}

	// Flags on the command line win, and the session then records them.
	tools := "think"
	l3 := newLiveWith(t, srv, dbPath, true, config.Flags{Tools: &tools, Agent: "simple"}, nil)
	l3.do(l3.m.Init())
	if got := strings.Join(l3.m.enabled, ","); got != "think" || l3.m.agentName != "simple" {
		t.Errorf("with --tools think --agent simple: tools %s, agent %s", got, l3.m.agentName)
	}
	if note := lastNote(l3.m); !strings.Contains(note, "Restored its model qwen3:8b.") || !strings.Contains(note, "Kept --agent simple and --tools think from the command line.") {
		t.Errorf("the opening note says %q", note)
	}
	l3.typeLine("thanks")

	l4 := newLive(t, srv, dbPath, true)
	l4.do(l4.m.Init())
	if got := strings.Join(l4.m.enabled, ","); got != "think" || l4.m.agentName != "simple" {
		t.Errorf("the session did not record its new setup: tools %s, agent %s", got, l4.m.agentName)
	}
}

// A session whose tool no longer exists opens with the others, and says
// which is gone.
func TestRestoreLeavesOutToolsThatAreGone(t *testing.T) {
	m := newTestModel(t, 100, 30)
	text, _ := m.restoreSetup(SessionSummary{Model: "qwen3:8b", Agent: "react", Tools: []string{"think", "retired_tool"}}, false)
	if !slices.Equal(m.enabled, []string{"think"}) || m.agentName != "react" {
		t.Fatalf("enabled %v agent %s", m.enabled, m.agentName)
	}
	if want := "1 tool it had is not available now: retired_tool."; !strings.Contains(text, want) {
		t.Fatalf("note %q lacks %q", text, want)
	}
}

// A reopened session draws what it drew live: a react step's tool
// result as a panel with its arguments, and a reply cut short marked as
// such.
func TestReopenedSessionShowsObservationsAndCutReplies(t *testing.T) {
	msgs := []sessions.Message{
		{Seq: 1, Role: sessions.RoleUser, Content: "What is 2**10?"},
		{Seq: 2, Role: sessions.RoleAssistant, Content: "Thought: compute\nAction: calculator\nAction Input: 2**10",
			Usage: &sessions.Usage{PromptTokens: 100, OutputTokens: 20, CostUSD: 0.25}},
		{Seq: 3, Role: sessions.RoleUser, Content: "Observation: 1024", ToolName: "calculator",
			Result: &sessions.ToolResult{Success: true, Status: "ok", LatencySeconds: 0.002,
				Metadata: map[string]any{sessions.ArgumentsKey: map[string]any{"expression": "2**10"}}}},
		{Seq: 4, Role: sessions.RoleAssistant, Content: "Final Answer: 2**10 is", Incomplete: sessions.IncompleteCancelled,
			Usage: &sessions.Usage{PromptTokens: 130, OutputTokens: 4, CostUSD: 0.05}},
	}
	m := newTestModel(t, 100, 30)
	m.openSession(sessionLoadedMsg{summary: SessionSummary{ID: "s1", Title: "powers", Agent: "react", Messages: 4}, tree: sessions.TreeOf(sessions.Session{}, msgs)})
	v := screen(t, m)
	for _, want := range []string{
		`✓ calculator expression="2**10"`,
		"→ 1024",
		"✗ The reply was cancelled here; it is incomplete.",
		"$0.2500", // the replies' footers keep their cost
		"1 tool call",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the reopened session lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Observation:") || strings.Contains(v, "▍ Observation") {
		t.Errorf("an observation is drawn as a question:\n%s", v)
	}
	if len(m.conv.Messages) != 4 || m.conv.Messages[2].Content != "Observation: 1024" {
		t.Errorf("the model does not read the observation as it did: %+v", m.conv.Messages)
	}
}
