package agent_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// These tests hold jarvis to the rule that nothing is ever cut silently:
// the fake server cuts like a real one whenever truncate is not false, and
// every request must fit, carry truncate:false and shift:false, and keep
// one window.

// smallWindow serves a 2,048-token model "tiny" that can call tools.
// A summariser is scripted (see tinyServer for a server without one).
func smallWindow(t *testing.T) (*ot.Server, *ollama.Engine) {
	t.Helper()
	srv, eng := tinyServer(t)
	srv.On(et.SystemContains("You summarise a conversation")).Reply(et.Text("The user asked many questions about words; the assistant answered each one briefly."))
	return srv, eng
}

// words returns n distinct-ish English words.
func words(n int, seed string) string {
	base := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near " + seed)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(base[i%len(base)])
	}
	return b.String()
}

// checkEveryChat asserts the invariants on every chat request the server
// received: truncate and shift false, one window, nothing cut.
func checkEveryChat(t *testing.T, srv *ot.Server, window int) {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if r.Chat == nil || r.RenderOnly {
			continue
		}
		n++
		if r.Truncate == nil || *r.Truncate || r.Shift == nil || *r.Shift {
			t.Fatalf("request %d does not carry truncate:false and shift:false", r.Seq)
		}
		if r.NumCtx != window {
			t.Fatalf("request %d sent num_ctx %d, want %d every time", r.Seq, r.NumCtx, window)
		}
		if r.SilentCut() {
			t.Fatalf("request %d was cut by the server: %d messages dropped", r.Seq, r.CutMessages)
		}
		if r.Status != 200 {
			t.Fatalf("request %d was refused (%d)", r.Seq, r.Status)
		}
	}
	if n == 0 {
		t.Fatal("no chat request reached the server")
	}
	for _, e := range srv.LoadEvents() {
		if e.Kind == ot.Reload {
			t.Fatalf("the model was reloaded: %+v", e)
		}
	}
}

func TestLongConversationIsCompactedNeverCut(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.Default(et.Text(words(90, "answer")))
	rec := &events.Recorder{}
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	a, err := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny", Bus: rec, View: view})
	if err != nil {
		t.Fatal(err)
	}
	conv := &agent.Conversation{}
	compactions := 0
	for i := range 25 {
		res, err := a.Run(context.Background(), conv, fmt.Sprintf("Question %d: %s", i, words(120, "question")))
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if res.Context.Compacted {
			compactions++
		}
		if res.Context.Window != 2048 {
			t.Fatalf("turn %d ran with a %d-token window", i, res.Context.Window)
		}
	}
	if compactions == 0 {
		t.Fatal("25 long turns in 2,048 tokens and no compaction")
	}
	if !strings.HasPrefix(conv.Messages[0].Content, agent.SummaryPrefix) {
		t.Fatalf("the conversation does not start with the summary: %q", conv.Messages[0].Content)
	}
	checkEveryChat(t, srv, 2048)
	var compacted int
	for _, e := range rec.Events() {
		if e.Type == events.ContextCompacted {
			compacted++
			if c := e.Turn.Context; c.Replaced == 0 || c.After >= c.Before {
				t.Fatalf("compaction event says nothing was saved: %+v", c)
			}
		}
	}
	if compacted != compactions {
		t.Fatalf("%d compaction events for %d compactions", compacted, compactions)
	}
}

func TestOversizedMessageIsRefusedBeforeSending(t *testing.T) {
	srv, eng := smallWindow(t)
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny"})
	_, err := a.Run(context.Background(), &agent.Conversation{}, words(3000, "huge"))
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) {
		t.Fatalf("err = %v, want a ContextOverflowError", err)
	}
	if overflow.Window != 2048 || overflow.PromptTokens < 2048 || overflow.What != "your message" {
		t.Fatalf("overflow = %+v", overflow)
	}
	msg := err.Error()
	for _, want := range []string{"your message is about", "the system prompt (", "room for the reply (", "tiny runs with a 2,048-token window", "Shorten the message"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q does not say %q", msg, want)
		}
	}
	// The model's maximum is 2,048: no setting can make room, so none is
	// offered.
	if strings.Contains(msg, "/ctx") || strings.Contains(msg, "raise the window") {
		t.Fatalf("message %q offers a window the model cannot have", msg)
	}
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			t.Fatalf("a request that cannot fit was sent (%d)", r.Seq)
		}
	}
}

// bigTool returns 100 KB of numbered lines.
type bigTool struct{}

func (bigTool) Spec() tools.Spec {
	return tools.Spec{Name: "dump", Description: "Dump a big log.", Parameters: tools.Params()}
}
func (bigTool) Execute(context.Context, tools.Args) tools.Result {
	var b strings.Builder
	for i := 1; b.Len() < 100_000; i++ {
		fmt.Fprintf(&b, "line %d: the service answered request %d in %d ms\n", i, i*7, i%97)
	}
	return tools.OK(b.String())
}

func TestHugeToolResultReachesTheModelWithinItsBudgetAndThePersonWhole(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.On(et.UserSays("dump")).Reply(et.ToolCall("dump", `{}`))
	srv.On(et.ToolResult("dump")).Reply(et.Text("The log shows fast answers."))
	exec, err := tools.NewExecutor([]tools.Tool{bigTool{}}, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "tiny", Executor: exec})
	conv := &agent.Conversation{}
	res, err := a.Run(context.Background(), conv, "dump the log")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolResults) != 1 || len(res.ToolResults[0].Content) < 100_000 {
		t.Fatal("the person did not get the whole result")
	}
	if res.Context.CutResults != 1 {
		t.Fatalf("cut results = %d", res.Context.CutResults)
	}
	checkEveryChat(t, srv, 2048)
	chats := srv.Chats()
	last := chats[len(chats)-1].Messages
	sent := last[len(last)-1]
	if sent.Role != "tool" || !strings.Contains(sent.Content, "jarvis cut this result") || !strings.Contains(sent.Content, "The person has the whole result; you have only this part.") {
		t.Fatalf("the result on the wire has no marker: %.200q", sent.Content)
	}
	if n := ot.CountTokens(sent.Content); n > 2048/4+150 {
		t.Fatalf("the cut result takes %d tokens, over its quarter of the window", n)
	}
	if !strings.HasPrefix(sent.Content, "line 1: ") {
		t.Fatal("the cut result does not start with the result's beginning")
	}
}

func TestEstimateIsWithinTenPercentAfterOneTurn(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.AddModel(ot.ModelSpec{Name: "big", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 32768})
	srv.Default(et.Text(words(60, "reply")))
	view := agent.NewModelView(eng, "big", agent.ViewOptions{NumCtx: 32768})
	exec := calcExecutor(t, nil, nil)
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "big", Executor: exec, View: view})
	conv := &agent.Conversation{}
	for i := range 4 {
		if _, err := a.Run(context.Background(), conv, fmt.Sprintf("Tell me about item %d. %s", i, words(80, fmt.Sprintf("topic%d", i)))); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		b, ok := view.Last()
		if !ok || !b.Calibrated {
			t.Fatal("the view was not calibrated after a turn")
		}
		chats := srv.Requests()
		real := chats[len(chats)-1].PromptTokens
		if off := math.Abs(float64(b.Prompt-real)) / float64(real); off > 0.10 {
			t.Fatalf("turn %d: estimate %d, server counted %d (%.0f%% off)", i, b.Prompt, real, off*100)
		}
	}
}

func TestFullWindowEndsTheReplyWithANotice(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tiny", Capabilities: []string{engine.CapCompletion}, ContextLength: 512})
	srv.Default(et.Text(words(900, "endless")))
	eng, _ := ollama.New(srv.URL)
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny"})
	res, err := a.Run(context.Background(), &agent.Conversation{}, "write a lot")
	if err != nil {
		t.Fatalf("a full window is not a lost connection: %v", err)
	}
	found := false
	for _, n := range res.Notices {
		found = found || strings.Contains(n, "the 512-token window is full")
	}
	if !found || res.Content == "" || res.Stopped != agent.StopWindowFull {
		t.Fatalf("notices %q, content %d bytes, stopped %q", res.Notices, len(res.Content), res.Stopped)
	}
}

func TestWindowComesFromTheLoadedModelThenTheModelsMaximum(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.AddModel(ot.ModelSpec{Name: "wide", Capabilities: []string{engine.CapCompletion}, ContextLength: 131072})
	srv.Default(et.Text("ok"))
	ctx := context.Background()
	// Not loaded: the smaller of the model's maximum and 4,096.
	w, err := agent.NewModelView(eng, "wide", agent.ViewOptions{}).Window(ctx)
	if err != nil || w.Tokens != 4096 || w.ModelMax != 131072 {
		t.Fatalf("window %+v, %v", w, err)
	}
	w, _ = agent.NewModelView(eng, "tiny", agent.ViewOptions{}).Window(ctx)
	if w.Tokens != 2048 {
		t.Fatalf("a 2,048-token model got a %d-token window", w.Tokens)
	}
	// Loaded with 8,192 by someone else: that is the window in force.
	eng.Chat(ctx, engine.ChatRequest{Model: "wide", Messages: []engine.Message{{Role: "user", Content: "hi"}}, Options: engine.Options{NumCtx: 8192}}, nil)
	w, _ = agent.NewModelView(eng, "wide", agent.ViewOptions{}).Window(ctx)
	if w.Tokens != 8192 || !strings.Contains(w.Source, "loaded") {
		t.Fatalf("window %+v, want the loaded 8,192", w)
	}
	// The person's setting wins over everything.
	w, _ = agent.NewModelView(eng, "wide", agent.ViewOptions{NumCtx: 16384, NumCtxSource: "--num-ctx"}).Window(ctx)
	if w.Tokens != 16384 || w.Source != "--num-ctx" {
		t.Fatalf("window %+v", w)
	}
}

// Compaction never separates a tool call from its result: after every
// run, the conversation starts with the summary and then a user's turn,
// and every assistant message that asked for tools is followed by one
// result per call.
func TestCompactionKeepsToolPairsWhole(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.On(et.UserSays("compute")).Reply(et.ToolCall("calculator", `{"expression":"6*7"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("The result is 42. " + words(60, "explain")))
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "tiny", Executor: calcExecutor(t, nil, nil), View: view})
	conv := &agent.Conversation{}
	compacted := false
	for i := range 14 {
		res, err := a.Run(context.Background(), conv, fmt.Sprintf("Please compute six times seven, case %d. %s", i, words(70, "context")))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		compacted = compacted || res.Context.Compacted
		msgs := conv.Messages
		if strings.HasPrefix(msgs[0].Content, agent.SummaryPrefix) && (msgs[1].Role != engine.RoleUser || strings.HasPrefix(msgs[1].Content, "Observation")) {
			t.Fatalf("run %d: the summary is followed by %s %q", i, msgs[1].Role, msgs[1].Content)
		}
		for j, m := range msgs {
			for k := range m.ToolCalls {
				if j+1+k >= len(msgs) || msgs[j+1+k].Role != engine.RoleTool || msgs[j+1+k].ToolCallID != m.ToolCalls[k].ID {
					t.Fatalf("run %d: call %s at %d has no result after it", i, m.ToolCalls[k].ID, j)
				}
			}
		}
	}
	if !compacted {
		t.Fatal("no compaction happened")
	}
	checkEveryChat(t, srv, 2048)
}

// The prompt's prefix stays byte-identical from turn to turn (the system
// prompt, the tools, the earlier messages, results cut the same way), so
// the server reuses its cache for everything already read.
func TestThePromptPrefixIsKeptForTheServersCache(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.On(et.UserSays("dump")).Reply(et.ToolCall("dump", `{}`))
	srv.On(et.ToolResult("dump")).Reply(et.Text("Fast answers."))
	srv.Default(et.Text("Noted."))
	srv.AddModel(ot.ModelSpec{Name: "big", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 32768})
	exec, _ := tools.NewExecutor([]tools.Tool{bigTool{}}, tools.ExecutorOptions{})
	view := agent.NewModelView(eng, "big", agent.ViewOptions{NumCtx: 8192})
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "big", Executor: exec, View: view})
	conv := &agent.Conversation{}
	for _, q := range []string{"dump the log", "thanks", "and again thanks"} {
		if _, err := a.Run(context.Background(), conv, q); err != nil {
			t.Fatal(err)
		}
	}
	var prev *ot.Request
	for _, r := range srv.Requests() {
		if r.Chat == nil || r.RenderOnly {
			continue
		}
		if prev != nil && !strings.HasPrefix(r.Prompt, prev.Prompt[:strings.LastIndex(prev.Prompt, "assistant: ")]) {
			a, b := prev.Prompt, r.Prompt
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Fatalf("request %d does not start with request %d's prompt; they part at %d:\n%q\n%q", r.Seq, prev.Seq, i, a[max(i-80, 0):min(i+80, len(a))], b[max(i-80, 0):min(i+80, len(b))])
		}
		if prev != nil && r.CachedTokens < prev.PromptTokens/2 {
			t.Fatalf("request %d reused %d cached tokens of %d", r.Seq, r.CachedTokens, prev.PromptTokens)
		}
		rr := r
		prev = &rr
	}
}

// A window set above the model's own maximum is the maximum: the server
// caps it, and counting with the larger one would send requests the
// server refuses.
func TestASetWindowIsCappedAtTheModelsMaximum(t *testing.T) {
	_, eng := smallWindow(t)
	w, err := agent.NewModelView(eng, "tiny", agent.ViewOptions{NumCtx: 8192, NumCtxSource: "--num-ctx"}).Window(context.Background())
	if err != nil || w.Tokens != 2048 || !strings.Contains(w.Source, "capped at the model's maximum") {
		t.Fatalf("window %+v, %v", w, err)
	}
}
