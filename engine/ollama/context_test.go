package ollama_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// tinyt is the 2,048-token model of the project's wire notes.
func tinyt(srv *ollamatest.Server) {
	srv.AddModel(ollamatest.ModelSpec{
		Name: "tinyt", Capabilities: []string{"completion", "tools"}, ContextLength: 2048, Family: "llama",
		ParameterSize: "135M", Quantization: "Q8_0", Size: 145000000, Template: ollamatest.TemplateNames,
		Parameters: map[string]any{"num_ctx": 2048, "temperature": 0.7},
	})
}

// noSilentCut fails the test if the server cut any request to fit.
func noSilentCut(t *testing.T, srv *ollamatest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		if r.SilentCut() {
			t.Errorf("request %d (%s) was cut by the server: %d messages, %d tokens", r.Seq, r.Path, r.CutMessages, r.CutTokens)
		}
	}
}

func TestShowReadsTheWindowTemplateAndParameters(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	e := newEngine(t, srv.URL)
	d, err := e.Show(context.Background(), "tinyt")
	if err != nil {
		t.Fatal(err)
	}
	if d.ContextLength != 2048 || d.Family != "llama" || d.ParameterSize != "135M" || d.Quantization != "Q8_0" || strings.Join(d.Capabilities, ",") != "completion,tools" {
		t.Errorf("details = %+v", d)
	}
	if !strings.Contains(d.Template, "Tools: ") || !strings.Contains(d.Parameters, "num_ctx                        2048") {
		t.Errorf("template %q, parameters %q", d.Template, d.Parameters)
	}
	// Cached: a second look costs no request.
	if _, err := e.Show(context.Background(), "TINYT:latest"); err != nil || len(srv.Requests()) != 1 {
		t.Errorf("second Show: %v, %d requests", err, len(srv.Requests()))
	}
}

func TestLoadedListsTheWindowInForce(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	srv.AddModel(ollamatest.ModelSpec{Name: "qwen3", Size: 5000})
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)
	if got, err := e.Loaded(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("nothing loaded yet: %+v, %v", got, err)
	}
	before := time.Now()
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("hi"), Options: engine.Options{NumCtx: 1024, KeepAlive: time.Hour}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "tinyt", Messages: ask("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := e.Loaded(context.Background())
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v, %v", got, err)
	}
	q, tiny := got[0], got[1]
	if q.Name != "qwen3:latest" || q.ContextLength != 1024 || q.SizeBytes <= 5000 || q.VRAMBytes != q.SizeBytes || q.ExpiresAt.Before(before.Add(time.Hour)) {
		t.Errorf("qwen3 = %+v", q)
	}
	if tiny.Name != "tinyt:latest" || tiny.ContextLength != 2048 {
		t.Errorf("tinyt = %+v (its num_ctx parameter)", tiny)
	}
}

func TestRenderPromptReturnsWhatTheModelReads(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	e := newEngine(t, srv.URL)
	req := engine.ChatRequest{
		Model:    "tinyt",
		Messages: []engine.Message{{Role: engine.RoleSystem, Content: "be brief"}, {Role: engine.RoleUser, Content: "hi"}},
		Tools:    []engine.ToolDef{{Name: "calculator", Description: "Evaluates arithmetic."}},
	}
	got, err := e.RenderPrompt(context.Background(), req)
	if err != nil || got != "Tools: calculator\nsystem: be brief\nuser: hi\nassistant: " {
		t.Fatalf("rendered %q, %v", got, err)
	}
	rec := srv.Requests()[0]
	if !rec.RenderOnly || rec.Truncate == nil || *rec.Truncate || rec.EvalTokens != 0 || rec.Reply != "" {
		t.Errorf("recorded %+v", rec)
	}

	// A conversation bigger than the window renders whole: truncation is
	// off, so the rendering is what the engine would really send.
	req.Messages = append([]engine.Message{{Role: engine.RoleUser, Content: strings.Repeat("long words here ", 1000)}}, req.Messages...)
	got, err = e.RenderPrompt(context.Background(), req)
	if err != nil || !strings.HasPrefix(got, "Tools: calculator\nuser: long words") || ollamatest.CountTokens(got) <= 2048 {
		t.Errorf("whole rendering: %.80q (%d tokens), %v", got, ollamatest.CountTokens(got), err)
	}
	noSilentCut(t, srv)
}

func TestRenderPromptWithoutTheFeatureIsUnsupportedOnce(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	srv.SetRenderSupport(false)
	srv.On().Reply(et.Text("A reply the engine did not want."))
	e := newEngine(t, srv.URL)
	req := engine.ChatRequest{Model: "tinyt", Messages: ask("hi")}
	if _, err := e.RenderPrompt(context.Background(), req); !errors.Is(err, engine.ErrUnsupported) {
		t.Fatalf("err = %v, want engine.ErrUnsupported", err)
	}
	// The server answered for real; the engine kept that to one token.
	rec := srv.Requests()[0]
	if rec.EvalTokens != 1 || rec.DoneReason != "length" || rec.NumPredict != 1 {
		t.Errorf("the fallback reply: %d tokens, done %q, num_predict %d", rec.EvalTokens, rec.DoneReason, rec.NumPredict)
	}
	if _, err := e.RenderPrompt(context.Background(), req); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("second call: %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: the engine asked again", n)
	}
}

func TestChatNeverLetsTheServerCut(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)

	// The note's conversation: "hi", 3,000 words, "second question".
	msgs := []engine.Message{
		{Role: engine.RoleUser, Content: "hi"},
		{Role: engine.RoleAssistant, Content: strings.Repeat("word ", 3000)},
		{Role: engine.RoleUser, Content: "second question"},
	}
	_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "tinyt", Messages: msgs}, nil)
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) || overflow.Model != "tinyt" || overflow.ServerMessage != "the input length exceeds the context length" {
		t.Fatalf("err = %v (%T), want *engine.ContextOverflowError", err, err)
	}
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "tinyt", Messages: ask("hi")}, nil)
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
	for _, r := range srv.Requests() {
		if r.Truncate == nil || *r.Truncate || r.Shift == nil || *r.Shift {
			t.Errorf("request %d: truncate %v, shift %v; want both false", r.Seq, r.Truncate, r.Shift)
		}
		if !strings.Contains(string(r.Body), `"truncate":false,"shift":false`) {
			t.Errorf("request %d body: %s", r.Seq, r.Body)
		}
	}
	noSilentCut(t, srv)
}

func TestChatReplyThatFillsTheWindowEndsWithLength(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("m")
	srv.On().Reply(et.Text(strings.Repeat("This answer is longer than the window allows. ", 40)))
	e := newEngine(t, srv.URL)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("go"), Options: engine.Options{NumCtx: 128}}, nil)
	if err != nil {
		t.Fatalf("err = %v: with shift off a full window is a proper end, not a lost stream", err)
	}
	if resp.DoneReason != "length" || resp.Usage.PromptTokens+resp.Usage.OutputTokens != 128 {
		t.Errorf("done %q, %d + %d tokens", resp.DoneReason, resp.Usage.PromptTokens, resp.Usage.OutputTokens)
	}
}

func TestPullReportsProgressAndTheServersError(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Pullable(ollamatest.ModelSpec{Name: "smollm2:135m", ContextLength: 8192, Family: "llama"}, ollamatest.PullSpec{Layers: []int64{4000, 40}, Steps: 4})
	e := newEngine(t, srv.URL)
	if _, err := e.Show(context.Background(), "smollm2:135m"); !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Fatalf("before the pull: %v", err)
	}
	var steps []engine.PullProgress
	if err := e.Pull(context.Background(), "smollm2:135m", func(p engine.PullProgress) { steps = append(steps, p) }); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1+2*5+3 || steps[0].Status != "pulling manifest" || steps[len(steps)-1].Status != "success" {
		t.Fatalf("steps = %+v", steps)
	}
	var last int64 = -1
	for _, p := range steps[1:6] {
		if p.Total != 4000 || p.Completed <= last || !strings.HasPrefix(p.Digest, "sha256:") || p.Status != "pulling "+p.Digest[7:19] {
			t.Errorf("progress %+v after %d", p, last)
		}
		last = p.Completed
	}
	if last != 4000 {
		t.Errorf("first layer ended at %d of 4000", last)
	}
	if d, err := e.Show(context.Background(), "smollm2:135m"); err != nil || d.ContextLength != 8192 {
		t.Errorf("after the pull: %+v, %v", d, err)
	}

	err := e.Pull(context.Background(), "no-such-model", nil)
	var se *engine.ServerError
	if !errors.As(err, &se) || se.Message != "pull model manifest: file does not exist" {
		t.Errorf("unknown model: %v (%T)", err, err)
	}
	if err := e.Pull(context.Background(), " ", nil); err == nil {
		t.Error("a blank name was pulled")
	}
}

func TestPullCancelledStops(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Pullable(ollamatest.ModelSpec{Name: "huge"}, ollamatest.PullSpec{Layers: []int64{1 << 40}, Steps: 100000, Interval: time.Millisecond})
	e := newEngine(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := e.Pull(ctx, "huge", func(engine.PullProgress) {
		if n++; n == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !srv.Requests()[0].PullCancelled {
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the pull cancelled")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUnloadFreesTheModel(t *testing.T) {
	srv := ollamatest.New(t)
	tinyt(srv)
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "tinyt", Messages: ask("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Unload(context.Background(), "tinyt"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Loaded(context.Background()); err != nil || len(got) != 0 {
		t.Errorf("loaded after Unload: %+v, %v", got, err)
	}
	events := srv.LoadEvents()
	if len(events) != 2 || events[0].Kind != ollamatest.Load || events[1].Kind != ollamatest.Unload {
		t.Errorf("events = %+v", events)
	}
	if err := e.Unload(context.Background(), "nope"); !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Errorf("unknown model: %v", err)
	}
}

// The engine's window stays put across turns that set the same num_ctx:
// no reload, so the server's prompt cache survives.
func TestSameWindowNoReload(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("m")
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)
	msgs := ask("hi")
	for range 3 {
		resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: msgs, Options: engine.Options{NumCtx: 4096}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, resp.Message, engine.Message{Role: engine.RoleUser, Content: "more"})
	}
	if ev := srv.LoadEvents(); len(ev) != 1 || ev[0].Kind != ollamatest.Load {
		t.Errorf("events = %+v", ev)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.CachedTokens == 0 || last.Load != "" {
		t.Errorf("third turn: %d tokens cached, load %q", last.CachedTokens, last.Load)
	}
}

// The official client ends a stream that breaks off without an error. A
// server that answers 200 and then drops the connection must not look like
// a finished pull, an unload, or a server without rendering.
func TestAnswersCutShortAreErrors(t *testing.T) {
	var hits atomic.Int32
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer cut.Close()
	e := newEngine(t, cut.URL)
	ctx := context.Background()
	req := engine.ChatRequest{Model: "m", Messages: ask("hi")}
	for i := range 2 {
		if _, err := e.RenderPrompt(ctx, req); err == nil || errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("render %d: err = %v, want a lost connection", i, err)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("%d requests: a lost answer was taken for a server without rendering", hits.Load())
	}
	if err := e.Pull(ctx, "m", nil); err == nil || !strings.Contains(err.Error(), "pulling m") {
		t.Errorf("pull: %v", err)
	}
	if err := e.Unload(ctx, "m"); err == nil || !strings.Contains(err.Error(), "unloading m") {
		t.Errorf("unload: %v", err)
	}
}

// A thinking model's template renders differently with thinking on and
// off, so the rendering must be asked with the think value Chat sends.
func TestRenderPromptCarriesThink(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{
		Name: "qwen3", Capabilities: []string{"completion", "thinking"},
		Template: `{{ range .Messages }}{{ .Role }}: {{ .Content }}{{ if not $.Think }} /no_think{{ end }}` + "\n" + `{{ end }}assistant: `,
	})
	e := newEngine(t, srv.URL)
	for think, want := range map[string]string{"": "user: hi\nassistant: ", "false": "user: hi /no_think\nassistant: ", "true": "user: hi\nassistant: "} {
		got, err := e.RenderPrompt(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("hi"), Options: engine.Options{Think: think}})
		if err != nil || got != want {
			t.Errorf("think %q: rendered %q, want %q (%v)", think, got, want, err)
		}
	}
	if _, err := e.RenderPrompt(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("hi"), Options: engine.Options{Think: "maybe"}}); err == nil {
		t.Error("an invalid think value was sent")
	}
}
