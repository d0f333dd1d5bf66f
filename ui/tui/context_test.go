package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// renderingEngine renders prompts (as a server with _debug_render_only
// does) and answers every chat with a summary.
type renderingEngine struct{ stubEngine }

func (renderingEngine) RenderPrompt(_ context.Context, req engine.ChatRequest) (string, error) {
	var b strings.Builder
	for _, t := range req.Tools {
		b.WriteString("Tools: " + t.Name + "\n")
	}
	for _, m := range req.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	b.WriteString("assistant: ")
	return b.String(), nil
}

func (renderingEngine) Chat(_ context.Context, req engine.ChatRequest, _ func(engine.Chunk)) (engine.ChatResponse, error) {
	return engine.ChatResponse{Model: req.Model, Message: engine.Message{Role: engine.RoleAssistant, Content: "They talked about percentages and a log file."},
		Usage: events.Usage{PromptTokens: 300, OutputTokens: 12}}, nil
}

// run executes a command and feeds what it returns back to the model
// (batches included), as the program would. A command that has not
// answered within a moment is a timer (a status message's expiry) and is
// left alone.
func run(m *model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(2 * time.Second):
		return
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			run(m, c)
		}
	case nil:
	default:
		m.Update(msg)
	}
}

// conversation gives the model a few turns, one with a big tool result.
func conversation(m *model) {
	m.conv.Messages = []engine.Message{
		{Role: engine.RoleUser, Content: "What is 15% of 340?"},
		{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"15/100*340"}`}}},
		{Role: engine.RoleTool, ToolName: "calculator", ToolCallID: "c1", Content: "51.0"},
		{Role: engine.RoleAssistant, Content: "15% of 340 is 51."},
		{Role: engine.RoleUser, Content: "Now read the log."},
		{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c2", Name: "file_read", Arguments: `{"path":"app.log"}`}}},
		{Role: engine.RoleTool, ToolName: "file_read", ToolCallID: "c2", Content: strings.Repeat("2026-12-01 request served in 12 ms\n", 400)},
		{Role: engine.RoleAssistant, Content: "The log shows fast requests."},
	}
}

func TestGoldenContextTab(t *testing.T) {
	m := newTestModel(t, 140, 44)
	m.opts.Engine = renderingEngine{}
	m.view = agent.NewModelView(renderingEngine{}, "qwen3:8b", agent.ViewOptions{NumCtx: 4096, NumCtxSource: "num_ctx in the config"})
	conversation(m)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyF6})
	run(m, cmd)
	s := screen(t, m)
	for _, want := range []string{"Context", "Window 4,096 tokens", "num_ctx in the config", "result of file_read (cut)", "1 tool result cut", "calculator", "Tools: calculator"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the Context tab lacks %q:\n%s", want, s)
		}
	}
	golden(t, "context_tab", s)
}

func TestContextTabSaysWhenTheServerCannotRender(t *testing.T) {
	m := newTestModel(t, 120, 40)
	conversation(m)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyF6})
	run(m, cmd)
	m.pane.Focus(true)
	for range 6 {
		m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	if s := screen(t, m); !strings.Contains(s, "cannot render a prompt") || !strings.Contains(s, "messages jarvis sends") {
		t.Fatalf("no word on the missing rendering:\n%s", s)
	}
}

func TestCtxCommandSetsTheWindowAndSaysAReloadComes(t *testing.T) {
	m := newTestModel(t, 120, 40)
	run(m, send(m, "/ctx 4096"))
	if m.engOpts.NumCtx != 4096 {
		t.Fatalf("num_ctx = %d", m.engOpts.NumCtx)
	}
	if w, _ := m.view.Window(context.Background()); w.Tokens != 4096 || w.Source != "set with /ctx" {
		t.Fatalf("window %+v", w)
	}
	run(m, send(m, "/ctx 16k"))
	if s := screen(t, m); !strings.Contains(s, "16,384 tokens") || !strings.Contains(s, "reloads the model") {
		t.Fatalf("no reload notice:\n%s", s)
	}
	send(m, "/ctx lots")
	if s := screen(t, m); !strings.Contains(s, `not "lots"`) {
		t.Fatalf("a bad /ctx was not explained:\n%s", s)
	}
	send(m, "/ctx 12")
	if s := screen(t, m); !strings.Contains(s, "between 256") {
		t.Fatalf("a tiny window was accepted:\n%s", s)
	}
}

// /compact summarises the earlier turns for the model; the session keeps
// every original and the summary, and reopening it gives the model the
// same view.
func TestCompactKeepsTheOriginalsAndSurvivesAReload(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "j.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := NewSessionStore(sessions.New(db))
	m := newTestModel(t, 120, 40)
	m.opts.Engine, m.opts.Sessions = renderingEngine{}, ss
	m.view = agent.NewModelView(renderingEngine{}, "qwen3:8b", agent.ViewOptions{NumCtx: 4096})
	conversation(m)
	// A first answer long enough for a summary to be shorter.
	m.conv.Messages[3].Content = "15% of 340 is 51. " + strings.Repeat("That is the share asked for, worked out step by step from the figures given. ", 12)
	id, _ := ss.Create(SessionMeta{Model: "qwen3:8b", Agent: "orchestrator"})
	for _, msg := range m.conv.Messages {
		ss.Append(id, m.convo.tree.Append(history.Stored(agent.Appended{Message: msg})))
	}
	m.sessionID = id
	run(m, send(m, "/compact"))
	if !strings.HasPrefix(m.conv.Messages[0].Content, agent.SummaryPrefix) || len(m.conv.Messages) != 5 {
		t.Fatalf("conversation after /compact: %d messages, first %q", len(m.conv.Messages), m.conv.Messages[0].Content)
	}
	if s := screen(t, m); !strings.Contains(s, "Compacted: 4 earlier messages summarised") {
		t.Fatalf("no compaction in the transcript:\n%s", s)
	}
	out := filepath.Join(t.TempDir(), "export.md")
	_, err = ss.Export(id, out)
	b, _ := os.ReadFile(out)
	md := string(b)
	if err != nil || !strings.Contains(md, "What is 15% of 340?") || !strings.Contains(md, "**Compacted") || !strings.Contains(md, "percentages and a log file") {
		t.Fatalf("export: %v\n%s", err, md)
	}
	// Reopened, the model sees the summary and the kept turn, and the
	// transcript still shows the first question.
	m2 := newTestModel(t, 120, 40)
	m2.opts.Sessions = ss
	sum, tree, err := ss.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	m2.Update(sessionLoadedMsg{summary: sum, tree: tree})
	if len(m2.conv.Messages) != 5 || !strings.HasPrefix(m2.conv.Messages[0].Content, agent.SummaryPrefix) || m2.conv.Messages[1].Content != "Now read the log." {
		t.Fatalf("reloaded conversation: %+v", m2.conv.Messages)
	}
	if s := screen(t, m2); !strings.Contains(s, "What is 15% of 340?") {
		t.Fatalf("the reloaded transcript lost the compacted turns:\n%s", s)
	}
}
