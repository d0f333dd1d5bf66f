package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// The paths besides the main one, through the real agent and the fake
// server: a react session, parallel calls, and a reply whose stream was
// lost, each live, exported and reopened.

// exportOf exports l's session to a file and returns the markdown.
func exportOf(t *testing.T, l *live) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "s.md")
	l.typeLine("/export " + out)
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("export: %v (note: %s)", err, lastNote(l.m))
	}
	return string(md)
}

func TestReactSessionLiveExportedAndReopened(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("2**10")).Reply(et.Text("Thought: compute it.\nAction: calculator\nAction Input: {\"expression\": \"2**10\"}"))
	srv.On(et.UserSays("Observation: 1024")).Reply(et.Text("Thought: done.\nFinal Answer: 2**10 is 1024."))
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLiveWith(t, srv, dbPath, false, config.Flags{}, func(c *config.Config) { c.Agent = "react" })
	l.do(l.m.Init())
	l.typeLine("What is 2**10?")
	if s := l.screen(); !strings.Contains(s, `✓ calculator expression="2**10"`) || !strings.Contains(s, "1 tool call") {
		t.Fatalf("the live run:\n%s", s)
	}
	md := exportOf(t, l)
	if strings.Count(md, "## User") != 1 || !strings.Contains(md, "### Tool call `calculator` · ok") ||
		!strings.Contains(md, "\"expression\": \"2**10\"") || !strings.Contains(md, "- Tool calls: 1 (") {
		t.Errorf("the export does not show the observation as the calculator's result:\n%s", md)
	}

	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	s := l2.screen()
	for _, want := range []string{`✓ calculator expression="2**10"`, "→ 1024", "1 tool call", "Restored its model qwen3:8b, agent react"} {
		if !strings.Contains(s, want) {
			t.Errorf("the reopened session lacks %q:\n%s", want, s)
		}
	}
}

func TestParallelCallsLiveExportedAndReopened(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("three things")).Reply(et.ToolCalls(
		et.ToolCall("calculator", `{"expression":"2**10"}`),
		et.ToolCall("think", `{"thought":"check both"}`),
		et.ToolCall("calculator", `{"expression":"1/0"}`)))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("Done."))
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLiveWith(t, srv, dbPath, false, config.Flags{}, func(c *config.Config) { c.Tools = []string{"calculator", "think"} })
	l.update(sizeMsg(130, 40))
	l.do(l.m.Init())
	l.typeLine("Do three things.")
	order := func(s string) []int {
		return []int{strings.Index(s, `"2**10"`), strings.Index(s, `"check both"`), strings.Index(s, `"1/0"`)}
	}
	inOrder := func(at []int) bool { return at[0] >= 0 && at[0] < at[1] && at[1] < at[2] }
	// Side by side, the first line that names them all holds them in
	// order; stacked, the lines do.
	if s := l.screen(); !inOrder(order(s[strings.Index(s, "⇉"):])) {
		t.Errorf("live panels out of the calls' order:\n%s", s)
	}
	if md := exportOf(t, l); !inOrder(order(md)) || !strings.Contains(md, "- Tool calls: 3 (") {
		t.Errorf("export out of order or miscounted:\n%s", md)
	}
	l2 := newLive(t, srv, dbPath, true)
	l2.update(sizeMsg(130, 40))
	l2.do(l2.m.Init())
	if s := l2.screen(); !inOrder(order(s[strings.Index(s, "⇉"):])) || !strings.Contains(s, "3 tool calls") {
		t.Errorf("reopened panels out of order or miscounted:\n%s", s)
	}
}

func TestLostStreamMarkedAfterReopening(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("story")).Reply(et.TextChunks("Once upon ", "a time"), et.Disconnect())
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("Tell a story.")
	if s := l.screen(); !strings.Contains(s, "lost mid-reply") {
		t.Fatalf("the live run does not say the stream was lost:\n%s", s)
	}
	if md := exportOf(t, l); !strings.Contains(md, "Once upon a time\n\n> **Incomplete:** The connection to the server was lost here") {
		t.Errorf("the export presents the cut reply as whole:\n%s", md)
	}
	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	if s := l2.screen(); !strings.Contains(s, "The connection to the server was lost here; the reply is") {
		t.Errorf("the reopened session presents the cut reply as whole:\n%s", s)
	}
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
