package tui

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// The window in the workbench: a refused message comes back whole, a
// compaction says so and opens to its summary, the window a person set
// follows the session, an unloaded model stays unloaded, and the tool
// panels and the Context tab show what is true.

// smallServer serves qwen3:8b with a 2,048-token maximum.
func smallServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion, engine.CapTools, engine.CapVision}, ContextLength: 2048})
	srv.Default(et.Text("ok"))
	return srv
}

func TestARefusedMessageComesBackToThePromptWithItsImages(t *testing.T) {
	srv := smallServer(t)
	l := newLive(t, srv, filepath.Join(t.TempDir(), "j.db"), false)
	l.do(l.m.Init())
	l.typeLine("hello")
	before := len(l.m.conv.Messages)
	im := engine.Image{Name: "a.png", MIMEType: "image/png", Data: []byte("png"), Width: 10, Height: 10}
	l.m.convo.images = []engine.Image{im}
	paste := strings.Repeat("pasted words here ", 1500)
	l.typeLine(paste)
	if got := l.m.input.value(); got != strings.TrimSpace(paste) {
		t.Fatalf("the prompt holds %d characters, not the refused message", len(got))
	}
	if len(l.m.convo.images) != 1 || l.m.convo.images[0].Name != "a.png" {
		t.Fatalf("the image left the attachment row: %+v", l.m.convo.images)
	}
	if len(l.m.conv.Messages) != before || len(l.m.convo.tree.Messages) != before {
		t.Fatalf("the refused message stayed: %d messages, %d in the tree (had %d)", len(l.m.conv.Messages), len(l.m.convo.tree.Messages), before)
	}
	for _, it := range l.m.transcript.items {
		if u, ok := it.(*userItem); ok && strings.Contains(u.text, "pasted words") {
			t.Fatal("the refused question is still in the transcript")
		}
	}
	if note := lastNote(l.m); !strings.Contains(note, "Your message is about") || !strings.Contains(note, "back in the prompt, and its image still attached") {
		t.Fatalf("the note says %q", note)
	}
	// The session never heard of it, and the next messages are answered.
	l.m.input.reset()
	l.m.convo.images = nil
	for _, q := range []string{"one", "two", "three"} {
		l.typeLine(q)
	}
	sess, tree, err := l.m.opts.Sessions.Load(l.m.sessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Messages != 8 {
		t.Fatalf("the session holds %d messages, want 4 questions and 4 answers", sess.Messages)
	}
	for _, m := range tree.Messages {
		if strings.Contains(m.Content, "pasted words") {
			t.Fatal("the session saved the refused message")
		}
	}
}

// A window set with /ctx or --num-ctx goes with the session: --continue
// and reopening restore it, the command line wins and is recorded, and
// /ctx auto clears it.
func TestTheWindowFollowsTheSession(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 40960})
	srv.Default(et.Text("ok"))
	dbPath := filepath.Join(t.TempDir(), "j.db")
	lastNumCtx := func() int {
		chats := srv.Requests()
		for i := len(chats) - 1; i >= 0; i-- {
			if chats[i].Chat != nil && !chats[i].RenderOnly {
				return chats[i].NumCtx
			}
		}
		return 0
	}
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("/ctx 16384")
	l.typeLine("hello")
	if n := lastNumCtx(); n != 16384 {
		t.Fatalf("the run sent num_ctx %d", n)
	}

	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	if note := lastNote(l2.m); !strings.Contains(note, "window 16,384 tokens") {
		t.Fatalf("the opening note %q does not restore the window", note)
	}
	l2.typeLine("again")
	if n := lastNumCtx(); n != 16384 {
		t.Fatalf("after --continue the run sent num_ctx %d", n)
	}

	l3 := newLiveWith(t, srv, dbPath, true, config.Flags{NumCtx: 8192}, nil)
	l3.do(l3.m.Init())
	if note := lastNote(l3.m); !strings.Contains(note, "Kept --num-ctx 8192 from the command line") {
		t.Fatalf("the opening note says %q", note)
	}
	l3.typeLine("with the flag")
	if n := lastNumCtx(); n != 8192 {
		t.Fatalf("--num-ctx 8192 sent num_ctx %d", n)
	}

	l4 := newLive(t, srv, dbPath, true)
	l4.do(l4.m.Init())
	if w, _ := l4.m.view.Window(context.Background()); w.Tokens != 8192 {
		t.Fatalf("the session did not record --num-ctx: window %+v", w)
	}
	l4.typeLine("/ctx auto")
	l4.typeLine("auto now")
	l5 := newLive(t, srv, dbPath, true)
	l5.do(l5.m.Init())
	if w, _ := l5.m.view.Window(context.Background()); w.Tokens != agent.DefaultWindow {
		t.Fatalf("after /ctx auto the session reopens with %+v", w)
	}
}

// /ctx above the model's maximum says the window it really is, and the
// header and the Context tab agree.
func TestCtxAboveTheMaximumIsCapped(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 40960})
	srv.Default(et.Text("ok"))
	l := newLive(t, srv, "", false)
	l.do(l.m.Init())
	l.typeLine("/ctx 100000")
	note := lastNote(l.m)
	if !strings.Contains(note, "100,000 tokens") || !strings.Contains(note, "qwen3:8b takes at most 40,960 tokens") || strings.Contains(note, "now 100,000") {
		t.Fatalf("/ctx 100000 says %q", note)
	}
	l.typeLine("hello")
	for _, r := range srv.Requests() {
		if r.Chat != nil && r.NumCtx != 40960 {
			t.Fatalf("request %d sent num_ctx %d", r.Seq, r.NumCtx)
		}
	}
	// Said once: the run does not repeat it.
	n := 0
	for _, it := range l.m.transcript.items {
		if a, ok := it.(*assistantItem); ok {
			for _, b := range a.blocks {
				if lb, ok := b.(*lineBlock); ok && strings.Contains(lb.text, "100,000") {
					n++
				}
			}
		}
	}
	if n != 0 {
		t.Fatalf("the run said the cap again (%d times)", n)
	}
}

// While a run compacts, the status bar and the transcript say so; the
// "Compacted" line then opens (ctrl+e) to the summary the model reads.
func TestCompactionSaysSoAndOpensToItsSummary(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "a long question")
	feed(m, events.Event{Type: events.ContextCompacting, Run: run, Turn: &events.TurnPayload{Context: &events.ContextPayload{Replaced: 6, Window: 2048}}})
	if s := m.stateText(); !strings.HasPrefix(s, "compacting…") {
		t.Fatalf("status bar: %q", s)
	}
	if s := screen(t, m); !strings.Contains(s, "⇢ Compacting… the model is summarising 6 earlier messages") {
		t.Fatalf("no compacting line:\n%s", s)
	}
	feed(m, events.Event{Type: events.ContextCompacted, Run: run, Text: "The user asked about zebras.",
		Turn: &events.TurnPayload{Context: &events.ContextPayload{Replaced: 6, Kept: 1, Before: 1800, After: 700}}})
	s := screen(t, m)
	if strings.Contains(s, "Compacting…") || !strings.Contains(s, "Compacted: 6 earlier messages summarised") || !strings.Contains(s, "ctrl+e shows the summary") {
		t.Fatalf("after the compaction:\n%s", s)
	}
	if strings.Contains(s, "zebras") {
		t.Fatalf("the summary shows before it is opened:\n%s", s)
	}
	if s := m.stateText(); strings.HasPrefix(s, "compacting") {
		t.Fatalf("the status bar still says %q", s)
	}
	press(m, "ctrl+e")
	if s := screen(t, m); !strings.Contains(s, "│ The user asked about zebras.") {
		t.Fatalf("ctrl+e does not open the summary:\n%s", s)
	}
}

// A compaction whose summary was discarded leaves no "compacting" line:
// the notice that follows says why.
func TestADiscardedCompactionLeavesOnlyItsNotice(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "q")
	feed(m, events.Event{Type: events.ContextCompacting, Run: run, Turn: &events.TurnPayload{Context: &events.ContextPayload{Replaced: 4}}},
		events.Event{Type: events.Notice, Run: run, Text: "The summary of the earlier turns was discarded: it did not finish within its 256 tokens; the request is sent whole, as it still fits the window."})
	s := screen(t, m)
	if strings.Contains(s, "Compacting…") || !strings.Contains(s, "was discarded") || m.run.current.compacting != nil {
		t.Fatalf("after a discarded summary:\n%s", s)
	}
}

// After /unload the header says cold at once, even while the server
// still lists the model winding down, and the Context tab does not
// render (which would load it again).
func TestUnloadSaysColdAndTheContextTabDoesNotLoad(t *testing.T) {
	m := newTestModel(t, 120, 40)
	m.opts.Engine = renderingLister{}
	m.view = agent.NewModelView(renderingLister{}, "qwen3:8b", agent.ViewOptions{NumCtx: 4096})
	m.mstate.state = stateLoaded
	m.applyUnloaded(unloadedMsg{model: "qwen3:8b"})
	if m.loadStateText() != "cold" {
		t.Fatalf("after /unload the header says %q", m.loadStateText())
	}
	m.applyModelState(modelStateMsg{seq: m.mstate.seq, loaded: []engine.LoadedModel{{Name: "qwen3:8b", ContextLength: 4096}}})
	if m.loadStateText() != "cold" {
		t.Fatalf("a model winding down reads as %q", m.loadStateText())
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyF6})
	run(m, cmd)
	if m.ctxTab.HaveRender || !m.ctxTab.Cold {
		t.Fatal("opening the Context tab rendered the prompt of a cold model")
	}
	if s := screen(t, m); !strings.Contains(s, "qwen3:8b is not loaded") || !strings.Contains(s, "press r") {
		t.Fatalf("the tab does not say how to render:\n%s", s)
	}
	m.pane.Focus(true)
	run(m, press(m, "r"))
	if !m.ctxTab.HaveRender || m.ctxTab.Cold {
		t.Fatal("r did not render")
	}
	// Gone from the list: the next read says the truth again.
	m.applyModelState(modelStateMsg{seq: m.mstate.seq, loaded: nil})
	m.applyModelState(modelStateMsg{seq: m.mstate.seq, loaded: []engine.LoadedModel{{Name: "qwen3:8b"}}})
	if m.loadStateText() != "loaded" {
		t.Fatalf("a model loaded again reads as %q", m.loadStateText())
	}
}

// renderingLister renders prompts and lists loaded models, as Ollama does.
type renderingLister struct{ renderingEngine }

func (renderingLister) Loaded(context.Context) ([]engine.LoadedModel, error) { return nil, nil }

// After orchestrator fell back to react for a model, the Context tab
// counts react's request: no tool definitions, the tools described in
// its system prompt.
func TestContextTabShowsReactAfterAFallback(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion}, ContextLength: 32768})
	srv.Default(et.Text("Final Answer: ok"))
	l := newLive(t, srv, "", false)
	l.do(l.m.Init())
	l.typeLine("hello")
	l.update(tea.KeyMsg{Type: tea.KeyF6})
	b := l.m.ctxTab.Budget
	if b.Agent != agent.ReAct || b.Tools != 0 || len(b.ToolCosts()) != 0 {
		t.Fatalf("the tab counts %s with %d tokens of tool definitions", b.Agent, b.Tools)
	}
	if s := l.screen(); !strings.Contains(s, "orchestrator went on as react") {
		t.Fatalf("the tab does not say what was sent:\n%s", s)
	}
}

// A tool result longer than the events carry is whole in its panel once
// the run ends, and an expanded panel shows it to its end.
func TestAnExpandedPanelShowsTheWholeResult(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 32768})
	var thought strings.Builder
	for i := 1; i <= 600; i++ {
		thought.WriteString("line " + strings.Repeat("x", 20) + " number " + strconv.Itoa(i) + "\n")
	}
	thought.WriteString("LAST-LINE")
	args, _ := json.Marshal(map[string]string{"thought": thought.String()})
	srv.On(et.UserSays("think")).Reply(et.ToolCall("think", string(args)))
	srv.On(et.ToolResult("think")).Reply(et.Text("done"))
	l := newLiveWith(t, srv, filepath.Join(t.TempDir(), "j.db"), false, config.Flags{}, func(c *config.Config) {
		c.Tools = []string{"think"}
		c.Options.NumCtx, c.Options.NumPredict = 32768, 16384 // room for the long call
	})
	l.do(l.m.Init())
	l.typeLine("think hard")
	var p *toolPanel
	for _, pp := range l.m.lastReply.panels {
		p = pp
	}
	if p == nil {
		t.Fatalf("no panel:\n%s", l.screen())
	}
	if len(p.result) < events.ResultLimit || !strings.HasSuffix(p.result, "LAST-LINE") {
		t.Fatalf("the panel holds %d bytes of the result", len(p.result))
	}
	l.m.expand = true
	lines := strings.Join(p.draw(l.m.renderCtx(100), 100), "\n")
	if !strings.Contains(lines, "LAST-LINE") || strings.Contains(lines, "more line") {
		t.Fatal("the expanded panel does not reach the result's end")
	}
}

// A reopened session's compaction opens to its summary too, and a
// left-out one says so.
func TestAReopenedCompactionOpensToItsSummary(t *testing.T) {
	msgs := []sessions.Message{
		{Seq: 1, Role: sessions.RoleUser, Content: "first"},
		{Seq: 2, Role: sessions.RoleAssistant, Content: "one"},
		{Seq: 3, Role: sessions.RoleUser, Content: "second"},
		{Seq: 4, Role: sessions.RoleSummary, Content: "The user said first.", Replaced: 2, Kept: 1},
		{Seq: 5, Role: sessions.RoleAssistant, Content: "two"},
		{Seq: 6, Role: sessions.RoleUser, Content: "third"},
		{Seq: 7, Role: sessions.RoleSummary, Content: "The first 4 messages were left out.", Replaced: 4, Kept: 1, LeftOut: true},
	}
	m := newTestModel(t, 100, 30)
	m.openSession(sessionLoadedMsg{summary: SessionSummary{ID: "s1", Title: "t", Messages: 7}, tree: sessions.TreeOf(sessions.Session{}, msgs)})
	s := screen(t, m)
	if !strings.Contains(s, "Compacted: 2 earlier messages summarised") || !strings.Contains(s, "Left out: 4 earlier messages") || strings.Contains(s, "The user said first.") {
		t.Fatalf("the reopened session:\n%s", s)
	}
	press(m, "ctrl+e")
	if s := screen(t, m); !strings.Contains(s, "│ The user said first.") || !strings.Contains(s, "│ The first 4 messages were left out.") {
		t.Fatalf("ctrl+e does not open the summaries:\n%s", s)
	}
}
