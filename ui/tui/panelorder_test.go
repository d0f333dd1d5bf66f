package tui

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// parallelCalls are a turn's calls in the model's order.
var parallelCalls = []struct {
	id, tool string
	args     map[string]any
	status   tools.Status
	result   string
}{
	{"c0", "calculator", map[string]any{"expression": "2**10"}, tools.StatusOK, "1024"},
	{"c1", "think", map[string]any{"thought": "check both"}, tools.StatusOK, "Thought noted."},
	{"c2", "calculator", map[string]any{"expression": "1/0"}, tools.StatusError, "division by zero"},
}

// panelOrder is the order of the calls' results on the line of the
// panels that shows them all.
func panelOrder(t *testing.T, v string) []string {
	t.Helper()
	for _, line := range strings.Split(v, "\n") {
		a, b, c := strings.Index(line, "→ 1024"), strings.Index(line, "→ Thought noted."), strings.Index(line, "→ division by zero")
		if a < 0 || b < 0 || c < 0 {
			continue
		}
		order := map[int]string{a: "2**10", b: "think", c: "1/0"}
		var out []string
		for _, at := range []int{min(a, b, c), a + b + c - min(a, b, c) - max(a, b, c), max(a, b, c)} {
			out = append(out, order[at])
		}
		return out
	}
	t.Fatalf("no line shows the three calls side by side:\n%s", v)
	return nil
}

// Parallel calls start and end in any order; their panels stand in the
// order the model made the calls, live as after a reload.
func TestParallelPanelsKeepTheCallOrder(t *testing.T) {
	m := newTestModel(t, 130, 24)
	run := fakeRun(m, "2**10, and 1/0, and think.")
	feed(m, turnEnd(run, 1, "", 3))
	for i := len(parallelCalls) - 1; i >= 0; i-- { // the starts arrive last call first
		c := parallelCalls[i]
		feed(m, events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{Tool: c.tool, CallID: c.id, Index: i, Arguments: c.args, Parallel: 3}})
	}
	for _, i := range []int{1, 2, 0} {
		c := parallelCalls[i]
		e := toolEnd(run, c.id, c.tool, c.args, c.status, c.result, 0.001)
		e.Tool.Index, e.Tool.Parallel = i, 3
		feed(m, e)
	}
	v := screen(t, m)
	golden(t, "parallel_order", v)
	want := []string{"2**10", "think", "1/0"}
	if got := panelOrder(t, v); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("live panels in order %v, want %v", got, want)
	}

	// The same turn read back from a session.
	msgs := []sessions.Message{{Seq: 1, Role: sessions.RoleUser, Content: "2**10, and 1/0, and think."}}
	reply := sessions.Message{Seq: 2, Role: sessions.RoleAssistant}
	for i, c := range parallelCalls {
		args := map[string]string{"c0": `{"expression":"2**10"}`, "c1": `{"thought":"check both"}`, "c2": `{"expression":"1/0"}`}[c.id]
		reply.ToolCalls = append(reply.ToolCalls, sessions.ToolCall{ID: c.id, Index: i, Name: c.tool, Arguments: args})
	}
	msgs = append(msgs, reply)
	for i, c := range parallelCalls {
		msgs = append(msgs, sessions.Message{Seq: 3 + i, Role: sessions.RoleTool, ToolName: c.tool, ToolCallID: c.id, Content: c.result,
			Result: &sessions.ToolResult{Status: string(c.status), Success: c.status == tools.StatusOK}})
	}
	r := newTestModel(t, 130, 24)
	r.showTree(sessions.TreeOf(sessions.Session{}, msgs))
	if got := panelOrder(t, screen(t, r)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("reloaded panels in order %v, want %v", got, want)
	}
}
