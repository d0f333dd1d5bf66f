package agent_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

// These tests use the context window as a new person would: a paste too
// big for it, many tools in a small window, a summariser that does not
// summarise, a window set above the model's maximum. The stand-in server
// cuts silently whenever it is allowed to, so checkEveryChat catches any
// request that did not fit.

// tinyServer serves the 2,048-token model "tiny" with no script yet.
func tinyServer(t *testing.T) (*ot.Server, *ollama.Engine) {
	t.Helper()
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tiny", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 2048})
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, eng
}

// recorded collects what a run reported to OnMessage.
type recorded struct{ got []agent.Appended }

func (r *recorded) add(a agent.Appended) { r.got = append(r.got, a) }

func TestARefusedPasteLeavesNothingAndTheNextThreeAreAnswered(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.Default(et.Text("Answered."))
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	var rec recorded
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny", View: view, OnMessage: rec.add})
	conv := &agent.Conversation{}
	ctx := context.Background()
	if _, err := a.Run(ctx, conv, "Hello, what can you do?"); err != nil {
		t.Fatal(err)
	}
	before := len(conv.Messages)
	saved := len(rec.got)

	res, err := a.Run(ctx, conv, words(8000, "pasted"))
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) || !res.Refused {
		t.Fatalf("err = %v, refused = %v; want the paste refused", err, res.Refused)
	}
	if len(conv.Messages) != before || len(rec.got) != saved {
		t.Fatalf("the refused paste stayed: %d messages (had %d), %d recorded (had %d)", len(conv.Messages), before, len(rec.got), saved)
	}
	for i, q := range []string{"And what is a window?", "Thanks. One more question.", "Last one: goodbye?"} {
		res, err := a.Run(ctx, conv, q)
		if err != nil || res.Refused || res.Content != "Answered." {
			t.Fatalf("message %d after the refusal: %v (refused %v, content %q)", i+1, err, res.Refused, res.Content)
		}
	}
	for _, r := range srv.Chats() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "pasted pasted") {
				t.Fatal("the refused paste reached the server")
			}
		}
	}
	checkEveryChat(t, srv, 2048)
}

// A refused message with images leaves with its images: no later
// request, and no summary, ever carries them.
func TestARefusedImageMessageIsNeverSummarised(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "eyes", Family: "gemma3", Capabilities: []string{engine.CapCompletion, engine.CapVision}, ContextLength: 2048})
	srv.On(et.SystemContains("You summarise")).Reply(et.Text("They talked about words."))
	srv.Default(et.Text(words(60, "answer")))
	eng, _ := ollama.New(srv.URL)
	view := agent.NewModelView(eng, "eyes", agent.ViewOptions{})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "eyes", View: view})
	conv := &agent.Conversation{}
	ctx := context.Background()
	img := engine.Image{Name: "shot.png", MIMEType: "image/png", Data: []byte("\x89PNG fake"), Width: 64, Height: 64}
	images := make([]engine.Image, 9) // 9 × 260 tokens: more than the window
	for i := range images {
		images[i] = img
	}
	res, err := a.Answer(ctx, conv, agent.Input{Text: "What is in these?", Images: images})
	if err == nil || !res.Refused {
		t.Fatalf("err = %v, refused %v", err, res.Refused)
	}
	if msg := err.Error(); !strings.Contains(msg, "images about") || !strings.Contains(msg, "send fewer images") {
		t.Fatalf("the refusal does not name the images' cost: %q", msg)
	}
	for i := range 12 {
		if _, err := a.Run(ctx, conv, fmt.Sprintf("Question %d: %s", i, words(100, "question"))); err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
	}
	for _, r := range srv.Chats() {
		for _, m := range r.Messages {
			if len(m.Images) > 0 || strings.Contains(m.Content, "shot.png") {
				t.Fatalf("request %v carries the refused images", r.Messages[0].Content[:20])
			}
		}
	}
}

// wordyTool has a long description, as real tools' schemas are.
type wordyTool struct{ name string }

func (w wordyTool) Spec() tools.Spec {
	return tools.Spec{Name: w.name, Description: words(130, w.name) + ".",
		Parameters: tools.Params(tools.StringParam("query", "What to look for, in a few words", true))}
}
func (wordyTool) Execute(context.Context, tools.Args) tools.Result { return tools.OK("nothing found") }

// Seven tools of about 350 tokens each, with the reply's room, pass 85%
// of a 4,096-token window on their own. The session says so once, and
// compacts only when a request would not fit otherwise, never twice a
// run, each time making it smaller.
func TestSevenToolsInFourThousandTokensCompactOnlyWhenItSaves(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "seven", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 32768})
	srv.On(et.SystemContains("You summarise")).Reply(et.Text("The user asked short questions; each got a short answer."))
	srv.Default(et.Text(words(25, "reply")))
	eng, _ := ollama.New(srv.URL)
	var list []tools.Tool
	for i := range 7 {
		list = append(list, wordyTool{name: fmt.Sprintf("lookup%d", i)})
	}
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &events.Recorder{}
	view := agent.NewModelView(eng, "seven", agent.ViewOptions{NumCtx: 4096, NumCtxSource: "flag --num-ctx"})
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "seven", Executor: exec, View: view, Bus: rec})
	conv := &agent.Conversation{}
	notices := 0
	for i := range 10 {
		res, err := a.Run(context.Background(), conv, fmt.Sprintf("Short question %d: %s?", i, words(20, "ask")))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		for _, n := range res.Notices {
			if strings.Contains(n, "compacting cannot bring a request under it") {
				notices++
				for _, want := range []string{"7 tool definitions (", "room for the reply (", "4,096-token window", "turn some tools off", "{{window "} {
					if !strings.Contains(n, want) {
						t.Fatalf("the notice %q does not say %q", n, want)
					}
				}
			}
		}
	}
	if notices != 1 {
		t.Fatalf("the fixed parts' notice was given %d times, want once", notices)
	}
	compactions := 0
	for _, e := range rec.Events() {
		switch e.Type {
		case events.ContextCompacting:
			// The fixed parts pass the mark: only a request that would
			// not fit is worth a summary.
			if c := e.Turn.Context; c.Before+1024 <= c.Window {
				t.Fatalf("compacting a request that fits (%d of %d tokens)", c.Before+1024, c.Window)
			}
		case events.ContextCompacted:
			compactions++
			if c := e.Turn.Context; c.After >= c.Before {
				t.Fatalf("a compaction made nothing smaller: %+v", c)
			}
		}
	}
	summaries := 0
	for _, r := range srv.Chats() {
		if strings.Contains(r.Messages[0].Content, "You summarise") {
			summaries++
		}
	}
	if summaries != compactions {
		t.Fatalf("%d summaries asked for, %d compactions made: a summary was asked for that did not help", summaries, compactions)
	}
	if compactions == 0 || compactions > 3 {
		t.Fatalf("%d compactions in ten short messages", compactions)
	}
	checkEveryChat(t, srv, 4096)
}

// An echoing summariser writes back what it was given: its summary is
// cut at its length cap, so it is discarded and said; a request that
// still fits is sent whole, one that does not leaves the older turns out
// and names them. No echo is ever kept as a summary.
func TestAnEchoingSummariserIsDiscarded(t *testing.T) {
	echo := func(c *et.Call) []et.Step {
		return []et.Step{et.Text(c.Messages[len(c.Messages)-1].Content)}
	}
	srv, eng := tinyServer(t)
	srv.On(et.SystemContains("You summarise")).ReplyWith(echo)
	srv.Default(et.Text(words(40, "answer")))
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny", View: view})
	conv := &agent.Conversation{}
	var sentWhole, leftOut string
	for i := range 14 {
		res, err := a.Run(context.Background(), conv, fmt.Sprintf("Question %d: %s", i, words(90+i%3*40, "question")))
		if err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
		for _, n := range res.Notices {
			switch {
			case strings.Contains(n, "summary of the earlier turns was discarded") && strings.Contains(n, "sent whole"):
				sentWhole = n
			case strings.Contains(n, "summary of the earlier turns was discarded") && strings.Contains(n, "left the first"):
				leftOut = cmp.Or(leftOut, n)
			}
		}
		if first := conv.Messages[0].Content; strings.HasPrefix(first, agent.SummaryPrefix) && !strings.Contains(first, "were left out to fit the context window, without a summary") {
			t.Fatalf("question %d: an echo was kept as the summary: %.300q", i, first)
		}
	}
	if sentWhole == "" || !strings.Contains(sentWhole, "did not finish within its") {
		t.Fatalf("no notice said the summary was discarded and the request sent whole: %q", sentWhole)
	}
	if leftOut == "" || !strings.Contains(leftOut, "“Question 0:") || !strings.Contains(leftOut, "stay in the session") {
		t.Fatalf("the notice does not name what was left out: %q", leftOut)
	}
	checkEveryChat(t, srv, 2048)
}

// Every summary request fits with its reply, and asks for a summary no
// longer than what makes the next request fit.
func TestSummaryRequestsFitTheWindowWithTheirReply(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.Default(et.Text(words(80, "answer")))
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny", View: view})
	conv := &agent.Conversation{}
	for i := range 20 {
		if _, err := a.Run(context.Background(), conv, fmt.Sprintf("Question %d: %s", i, words(110, "question"))); err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Chat == nil || !strings.Contains(r.Chat.Messages[0].Content, "You summarise") {
			continue
		}
		n++
		if r.NumPredict <= 0 || r.NumPredict > 2048/8 {
			t.Fatalf("summary request %d asks for %d tokens", r.Seq, r.NumPredict)
		}
		if r.PromptTokens+r.NumPredict > 2048 {
			t.Fatalf("summary request %d: %d prompt tokens and %d for the summary pass the window", r.Seq, r.PromptTokens, r.NumPredict)
		}
	}
	if n == 0 {
		t.Fatal("no summary was asked for")
	}
	checkEveryChat(t, srv, 2048)
}

// /compact on a conversation that is nearly empty is refused before the
// model is asked: a summary could not make the request smaller.
func TestCompactThatCannotSaveIsRefusedBeforeAsking(t *testing.T) {
	srv, eng := smallWindow(t)
	srv.Default(et.Text("Sure."))
	view := agent.NewModelView(eng, "tiny", agent.ViewOptions{})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny", View: view})
	conv := &agent.Conversation{}
	for _, q := range []string{"Hi", "How are you?"} {
		if _, err := a.Run(context.Background(), conv, q); err != nil {
			t.Fatal(err)
		}
	}
	asked := len(srv.Chats())
	in := agent.NextRequest(agent.Simple, agent.Config{Engine: eng, Model: "tiny"}, conv.Messages)
	_, _, err := view.Compact(context.Background(), in, true)
	if !errors.Is(err, agent.ErrNothingToCompact) || !strings.Contains(err.Error(), "too little for a summary") {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Chats()) != asked {
		t.Fatal("the model was asked for a summary that could not save anything")
	}
}

// A window set above the model's maximum is the maximum, said once; the
// refusal's numbers are the real window's.
func TestAWindowAboveTheModelsMaximumIsCappedAndSaidOnce(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "mid", Capabilities: []string{engine.CapCompletion}, ContextLength: 40960})
	srv.Default(et.Text("ok"))
	eng, _ := ollama.New(srv.URL)
	view := agent.NewModelView(eng, "mid", agent.ViewOptions{NumCtx: 100000, NumCtxSource: "flag --num-ctx"})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "mid", View: view})
	conv := &agent.Conversation{}
	var capped []string
	for range 2 {
		res, err := a.Run(context.Background(), conv, "hello")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range res.Notices {
			if strings.Contains(n, "100,000") {
				capped = append(capped, n)
			}
		}
		if res.Context.Window != 40960 {
			t.Fatalf("the run counted with %d tokens", res.Context.Window)
		}
	}
	if len(capped) != 1 || !strings.Contains(capped[0], "mid takes at most 40,960 tokens") || !strings.Contains(capped[0], "flag --num-ctx") {
		t.Fatalf("notices about the cap: %q", capped)
	}
	_, err := a.Run(context.Background(), conv, words(40000, "paste"))
	if err == nil || !strings.Contains(err.Error(), "40,960-token window") || strings.Contains(err.Error(), "100,000") || strings.Contains(err.Error(), "/ctx") {
		t.Fatalf("refusal: %v", err)
	}
	checkEveryChat(t, srv, 40960)
}

// /ctx auto goes back to the server's window or the default, not to the
// one the last /ctx made the server load the model with.
func TestCtxAutoDoesNotKeepTheWindowJarvisSet(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "wide", Capabilities: []string{engine.CapCompletion}, ContextLength: 131072})
	srv.Default(et.Text("ok"))
	eng, _ := ollama.New(srv.URL)
	view := agent.NewModelView(eng, "wide", agent.ViewOptions{})
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "wide", View: view})
	conv := &agent.Conversation{}
	view.SetNumCtx(16384, "set with /ctx")
	if res, err := a.Run(context.Background(), conv, "hi"); err != nil || res.Context.Window != 16384 {
		t.Fatalf("window %d, %v", res.Context.Window, err)
	}
	view.SetNumCtx(0, "")
	w, err := view.Window(context.Background())
	if err != nil || w.Tokens != agent.DefaultWindow || strings.Contains(w.Source, "loaded") {
		t.Fatalf("after /ctx auto: %+v, %v", w, err)
	}
}

// Each reply the agent appends carries what its request took of the
// window, as its turn_end said, and every message how long the run had
// gone on: a reopened session draws them as the live transcript did.
func TestAppendedRepliesCarryTheirWindowAndTheRunsTime(t *testing.T) {
	srv, eng := tinyServer(t)
	srv.On(et.UserSays("2+2")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("It is 4."))
	bus := events.New()
	sub := bus.Subscribe(64)
	defer sub.Close()
	var rec recorded
	calc, _ := compute.NewCalculator(tools.Deps{})
	exec, err := tools.NewExecutor([]tools.Tool{calc}, tools.ExecutorOptions{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "tiny", Executor: exec, Bus: bus, OnMessage: rec.add})
	if _, err := a.Run(context.Background(), &agent.Conversation{}, "What is 2+2?"); err != nil {
		t.Fatal(err)
	}
	var ends []*events.ContextPayload
	for len(sub.C) > 0 {
		if e := <-sub.C; e.Type == events.TurnEnd {
			ends = append(ends, e.Turn.Context)
		}
	}
	var replies []agent.Appended
	last := 0.0
	for _, m := range rec.got {
		if m.RunSeconds < last {
			t.Errorf("%s message after %vs, the one before after %vs", m.Message.Role, m.RunSeconds, last)
		}
		last = m.RunSeconds
		if m.Message.Role == engine.RoleAssistant {
			replies = append(replies, m)
		} else if m.Context != nil {
			t.Errorf("a %s message carries a window: %+v", m.Message.Role, m.Context)
		}
	}
	if len(replies) != 2 || len(ends) != 2 {
		t.Fatalf("%d replies, %d turn ends; want 2 of each", len(replies), len(ends))
	}
	for i, r := range replies {
		c, e := r.Context, ends[i]
		if c == nil || c.Window != 2048 || c.Window != e.Window || c.PromptTokens != e.PromptTokens || c.Estimated != e.Estimated || c.PromptTokens == 0 {
			t.Errorf("reply %d carries %+v; its turn ended with %+v", i+1, c, e)
		}
	}
	if last <= 0 {
		t.Errorf("the last message says the run had gone on %vs", last)
	}
}
