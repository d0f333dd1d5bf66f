package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

func TestModelChangedDuringARunIsKept(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "q")
	send(m, "/model llama3.2")
	m.Update(runDoneMsg{runID: run.ID, result: &agent.Result{Model: "qwen3:8b", Turns: 1}})
	if m.modelName != "llama3.2" {
		t.Fatalf("model = %q: the run's end undid /model", m.modelName)
	}
	// Without a change the model the agent reports is adopted.
	run = fakeRun(m, "q2")
	m.Update(runDoneMsg{runID: run.ID, result: &agent.Result{Model: "llama3.2:latest", Turns: 1}})
	if m.modelName != "llama3.2:latest" {
		t.Fatalf("model = %q, want the one the run reports", m.modelName)
	}
}

func TestUnreachableServerDuringARunGoesOfflineAndRetriesOnce(t *testing.T) {
	m := newTestModel(t, 100, 30)
	down := &engine.UnreachableError{Host: "127.0.0.1:11434", Err: errors.New("connection refused")}
	run := fakeRun(m, "q")
	_, retry := m.Update(runDoneMsg{runID: run.ID, err: down})
	if retry == nil || !m.server.checking {
		t.Fatal("no server check scheduled after the run found the server gone")
	}
	if header := strings.SplitN(screen(t, m), "\n", 2)[0]; !strings.Contains(header, "○") || strings.Contains(header, "●") {
		t.Fatalf("header still says online: %s", header)
	}
	// A second failure while the check is pending starts no second chain:
	// another run, /model's check, an unrelated message.
	run = fakeRun(m, "q2")
	if _, cmd := m.Update(runDoneMsg{runID: run.ID, err: down}); cmd != nil {
		t.Fatal("a second retry chain was started by a run")
	}
	if _, cmd := m.Update(serverMsg{err: down}); cmd != nil {
		t.Fatal("a second retry chain was started by /model's check")
	}
	// The chain's own failure schedules its next step, and only that.
	if _, cmd := m.Update(serverMsg{err: down, chain: true}); cmd == nil || !m.server.checking {
		t.Fatal("the chain stopped after a failed check")
	}
	// Back online: the chain ends, and the model picked meanwhile is checked.
	m.modelName = "llama3.2"
	_, cmd := m.Update(serverMsg{version: "0.17.4", model: "qwen3:8b", chain: true})
	if m.server.checking || !m.server.online || cmd == nil {
		t.Fatalf("online %v, checking %v, follow-up check %v", m.server.online, m.server.checking, cmd != nil)
	}
	if !strings.Contains(screen(t, m), "Connected to Ollama") {
		t.Fatal("reconnection not reported")
	}
	// Other failures leave the server's state alone.
	run = fakeRun(m, "q3")
	if _, cmd := m.Update(runDoneMsg{runID: run.ID, err: context.Canceled}); cmd != nil || !m.server.online {
		t.Fatal("a cancelled run marked the server offline")
	}
}

func TestClearDuringARunKeepsTheLiveReply(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.addNote("an old note", false)
	run := fakeRun(m, "the running question")
	feed(m, tok(run, "first part"))
	send(m, "/clear")
	feed(m, tok(run, ", second part"))
	v := screen(t, m)
	if strings.Contains(v, "an old note") {
		t.Fatalf("/clear did not clear:\n%s", v)
	}
	if !strings.Contains(v, "the running question") || !strings.Contains(v, "first part, second part") {
		t.Fatalf("the running turn is gone after /clear:\n%s", v)
	}
}

// closerTool counts its instances' Close calls, as a REPL would need.
type closerTool struct {
	id     int
	closed *atomic.Int32
}

func (c *closerTool) Spec() tools.Spec {
	return tools.Spec{Name: "probe", Description: "A tool that holds a process.", Parameters: tools.Params()}
}
func (c *closerTool) Execute(context.Context, tools.Args) tools.Result { return tools.OK("ok") }
func (c *closerTool) Close() error {
	c.closed.Add(1)
	return nil
}

func probeInstance(m *model) *closerTool {
	for _, t := range m.executor.Tools() {
		if p, ok := t.(*closerTool); ok {
			return p
		}
	}
	return nil
}

func TestToolChangesKeepEnabledInstances(t *testing.T) {
	m := newTestModel(t, 100, 30)
	var closed atomic.Int32
	built := 0
	m.opts.Registry.Register("probe", func(tools.Deps) (tools.Tool, error) {
		built++
		return &closerTool{id: built, closed: &closed}, nil
	})
	send(m, "/tools calculator,probe")
	first := probeInstance(m)
	if first == nil {
		t.Fatal("probe not enabled")
	}
	closed.Store(0)

	// Adding a tool, an MCP change, toggling another in the Tools tab:
	// the probe keeps its instance and is never closed.
	send(m, "/tools calculator,probe,think")
	m.Update(mcpChangedMsg{})
	press(m, "ctrl+t")
	press(m, "tab")
	press(m, " ") // the cursor is on the first row, another tool
	if p := probeInstance(m); p != first || closed.Load() != 0 {
		t.Fatalf("the probe was rebuilt or closed (same instance %v, closed %d)", p == first, closed.Load())
	}
	press(m, "tab")

	// Removing it closes it, in the returned command, not in Update.
	cmd := send(m, "/tools calculator")
	if closed.Load() != 0 {
		t.Fatal("the removed tool was closed inside Update")
	}
	if cmd == nil {
		t.Fatal("no command closes the removed tool")
	}
	cmd()
	if closed.Load() == 0 {
		t.Fatal("the removed tool was not closed")
	}

	// A new session builds every tool anew.
	send(m, "/tools probe")
	before := probeInstance(m)
	closed.Store(0)
	runAll(send(m, "/new"))
	if p := probeInstance(m); p == before || closed.Load() == 0 {
		t.Fatal("/new kept the previous session's tool instance")
	}
}

func TestOpeningASessionForgetsSessionApprovals(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.approvals.AllowTool("code_interpreter")
	tree := &sessions.Tree{}
	tree.Append(history.Stored(agent.Appended{Message: engine.Message{Role: engine.RoleUser, Content: "hello"}}))
	tree.Append(history.Stored(agent.Appended{Message: engine.Message{Role: engine.RoleAssistant, Content: "hi"}, Usage: &events.Usage{}}))
	m.Update(sessionLoadedMsg{summary: SessionSummary{ID: "s2", Title: "another"}, tree: tree})
	if m.approvals.Allowed("code_interpreter") || m.executor.Approvals().Allowed("code_interpreter") {
		t.Fatal("an approval for the previous session carried over")
	}
	if !strings.Contains(screen(t, m), "Opened session another") {
		t.Fatal("session not opened")
	}
}

// runAll runs cmd and the commands of the batches it gives, for what
// they do (their messages are dropped).
func runAll(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if batch, ok := cmd().(tea.BatchMsg); ok {
		for _, c := range batch {
			runAll(c)
		}
	}
}
