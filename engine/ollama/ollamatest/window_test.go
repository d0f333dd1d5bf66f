package ollamatest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// reply is an answer as a client reads it: every NDJSON line decoded, and
// the final chunk when one came.
type reply struct {
	status  int
	body    string
	chunks  []api.ChatResponse
	final   *api.ChatResponse
	content string
	readErr error // how reading the body ended (nil: cleanly)
}

// send posts v as JSON to path and reads whatever comes back, including a
// body cut off by a dropped connection.
func send(t *testing.T, url, path string, v any) reply {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, body: string(data), readErr: readErr}
	if resp.StatusCode != http.StatusOK {
		return r
	}
	for _, l := range strings.Split(strings.TrimSpace(r.body), "\n") {
		var c api.ChatResponse
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		r.chunks = append(r.chunks, c)
		r.content += c.Message.Content
		if c.Done {
			r.final = &r.chunks[len(r.chunks)-1]
		}
	}
	return r
}

func no() *bool { f := false; return &f }

func user(s string) api.Message { return api.Message{Role: "user", Content: s} }

// lastRequest is the most recent request the server recorded.
func lastRequest(t *testing.T, srv *Server) Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request recorded")
	}
	return reqs[len(reqs)-1]
}

// tinyt is the model of the project's wire notes: a 2,048-token window,
// tools, and a template that renders every message.
func tinyt(srv *Server) {
	srv.AddModel(ModelSpec{Name: "tinyt", Capabilities: []string{"completion", "tools"}, ContextLength: 2048, Family: "llama", Template: TemplateNames})
}

func TestShowReportsTheMaximumWindowAndTheTemplate(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{
		Name: "tinyt", Capabilities: []string{"completion", "tools"}, ContextLength: 2048, Family: "llama",
		ParameterSize: "135M", Quantization: "Q8_0", Template: TemplateNames,
		Parameters: map[string]any{"num_ctx": 1024, "stop": []any{"user:", "system:"}},
	})
	_, _, body := post(t, srv.URL, "/api/show", `{"model":"tinyt"}`)
	var show api.ShowResponse
	if err := json.Unmarshal([]byte(body), &show); err != nil {
		t.Fatal(err)
	}
	if show.ModelInfo["general.architecture"] != "llama" || show.ModelInfo["llama.context_length"] != 2048.0 {
		t.Errorf("model_info = %v", show.ModelInfo)
	}
	if show.Template != ownTemplates[TemplateNames] {
		t.Errorf("template = %q", show.Template)
	}
	wantParams := "num_ctx                        1024\nstop                           \"user:\"\nstop                           \"system:\""
	if show.Parameters != wantParams {
		t.Errorf("parameters =\n%s\nwant\n%s", show.Parameters, wantParams)
	}
	if show.Details.Family != "llama" || show.Details.ParameterSize != "135M" || show.Details.QuantizationLevel != "Q8_0" || len(show.Capabilities) != 2 {
		t.Errorf("details %+v, capabilities %v", show.Details, show.Capabilities)
	}
}

// The note's measurement: "hi", an assistant message of 3,000 words and
// "second question" on a 2,048-token model. The real server answered
// prompt_eval_count 35 (only the last message reached the model) and said
// nothing; with "truncate": false it refused.
func TestTheSilentCutOfTheNotes(t *testing.T) {
	srv := New(t)
	tinyt(srv)
	srv.On().Reply(et.Text("It depends."))
	conversation := []api.Message{
		user("hi"),
		{Role: "assistant", Content: strings.TrimSpace(strings.Repeat("lorem ipsum dolor ", 1000))},
		user("second question"),
	}

	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: conversation})
	if r.status != 200 || r.final == nil || r.content != "It depends." {
		t.Fatalf("%d %s", r.status, r.body)
	}
	lastAlone := CountTokens("user: second question\nassistant: ")
	if r.final.PromptEvalCount != lastAlone || lastAlone > 50 {
		t.Errorf("prompt_eval_count = %d, want %d (the last message alone)", r.final.PromptEvalCount, lastAlone)
	}
	if strings.Contains(r.body, "trunc") || strings.Contains(r.body, "cut") {
		t.Errorf("the reply mentions the cut: %s", r.body)
	}
	rec := lastRequest(t, srv)
	if !rec.SilentCut() || rec.CutMessages != 2 || rec.CutTokens != 0 || rec.Window != 2048 || rec.FullPromptTokens <= 2048 {
		t.Errorf("recorded cut %d messages, %d tokens, window %d, full prompt %d", rec.CutMessages, rec.CutTokens, rec.Window, rec.FullPromptTokens)
	}
	if rec.Prompt != "user: second question\nassistant: " || rec.Truncate != nil {
		t.Errorf("prompt %q, truncate %v", rec.Prompt, rec.Truncate)
	}

	r = send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: conversation, Truncate: no()})
	if r.status != 400 || r.body != `{"error":"the input length exceeds the context length"}` {
		t.Errorf("truncate false: %d %s", r.status, r.body)
	}
	if rec := lastRequest(t, srv); rec.SilentCut() || rec.Reply != "" || *rec.Truncate {
		t.Errorf("refused request recorded as %+v", rec)
	}
}

func TestSilentCutKeepsSystemMessagesAndTheLastMessage(t *testing.T) {
	srv := New(t)
	srv.Model("m")
	srv.On().Reply(et.Text("ok"))
	long := strings.Repeat("a fairly long message that fills the window quickly ", 4)
	msgs := []api.Message{
		{Role: "system", Content: "You are terse."},
		user(long), {Role: "assistant", Content: long},
		{Role: "system", Content: "Mind the budget."},
		user(long), {Role: "assistant", Content: long},
		user("and now?"),
	}
	// Ollama's template code joins the two system messages, now next to
	// each other, into one.
	want := "system: You are terse.\n\nMind the budget.\nassistant: " + long + "\nuser: and now?\nassistant: "
	// Room for the kept messages and a short reply, not for one more message.
	window := CountTokens(want) + 5
	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: msgs, Options: map[string]any{"num_ctx": window}})
	if r.status != 200 || r.final == nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rec := lastRequest(t, srv)
	if rec.Prompt != want || rec.CutMessages != 3 || r.final.PromptEvalCount != CountTokens(want) {
		t.Errorf("cut %d messages, prompt\n%q\nwant\n%q", rec.CutMessages, rec.Prompt, want)
	}

	// When the last message alone is too big, the runner keeps the
	// window's worth of tokens.
	r = send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: []api.Message{user("hi"), user(long)}, Options: map[string]any{"num_ctx": 16}, Shift: no()})
	rec = lastRequest(t, srv)
	if r.status != 200 || rec.CutMessages != 1 || rec.CutTokens != CountTokens("user: "+long+"\nassistant: ")-16 || r.final.PromptEvalCount != 16 || r.final.DoneReason != "length" {
		t.Errorf("%d %s; recorded %+v", r.status, r.body, rec)
	}
}

func TestAFullWindowEndsTheReply(t *testing.T) {
	srv := New(t)
	srv.Model("m")
	answer := strings.Repeat("Every word of this answer costs the window a token or more. ", 20)
	srv.On().Reply(et.Text(answer))
	const window = 64
	prompt := CountTokens("user: go\nassistant: ")
	room := window - prompt
	req := api.ChatRequest{Model: "m", Messages: []api.Message{user("go")}, Options: map[string]any{"num_ctx": window}}

	t.Run("shift false: done_reason length", func(t *testing.T) {
		req := req
		req.Shift = no()
		r := send(t, srv.URL, "/api/chat", req)
		if r.final == nil || r.final.DoneReason != "length" || r.readErr != nil {
			t.Fatalf("%d %s (%v)", r.status, r.body, r.readErr)
		}
		if r.final.PromptEvalCount != prompt || r.final.EvalCount != room || r.content != cutTokens(answer, room) {
			t.Errorf("prompt %d + reply %d tokens in a %d window; content %q", r.final.PromptEvalCount, r.final.EvalCount, window, r.content)
		}
		if rec := lastRequest(t, srv); !rec.WindowFull || rec.DoneReason != "length" || rec.EvalTokens != room {
			t.Errorf("recorded %+v", rec)
		}
	})
	t.Run("shift false, not streaming", func(t *testing.T) {
		req := req
		req.Shift, req.Stream = no(), no()
		r := send(t, srv.URL, "/api/chat", req)
		if r.final == nil || r.final.DoneReason != "length" || r.final.Message.Content != cutTokens(answer, room) {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("shift unset: the server shifts the context and goes on", func(t *testing.T) {
		r := send(t, srv.URL, "/api/chat", req)
		if r.final == nil || r.final.DoneReason != "stop" || r.content != answer || r.final.EvalCount != CountTokens(answer) {
			t.Fatalf("%d %s (%v)", r.status, r.body, r.readErr)
		}
		if rec := lastRequest(t, srv); rec.WindowFull || !rec.Shifted {
			t.Errorf("recorded window full %v, shifted %v", rec.WindowFull, rec.Shifted)
		}
	})
	t.Run("shift unset on a model that drops the stream: it stops", func(t *testing.T) {
		srv := New(t)
		srv.AddModel(ModelSpec{Name: "m", DropOnShift: true})
		srv.On().Reply(et.Text(answer))
		r := send(t, srv.URL, "/api/chat", req)
		if r.final != nil || !errors.Is(r.readErr, io.ErrUnexpectedEOF) {
			t.Fatalf("final chunk %v, read error %v", r.final, r.readErr)
		}
		if r.content != cutTokens(answer, room) {
			t.Errorf("received %q", r.content)
		}
		if rec := lastRequest(t, srv); !rec.WindowFull || rec.DoneReason != "" {
			t.Errorf("recorded window full %v, done reason %q", rec.WindowFull, rec.DoneReason)
		}
	})
	t.Run("a reply that fits ends normally", func(t *testing.T) {
		srv := New(t)
		srv.Model("m")
		srv.On().Reply(et.Text("Short."))
		r := send(t, srv.URL, "/api/chat", req)
		if r.final == nil || r.final.DoneReason != "stop" || lastRequest(t, srv).WindowFull {
			t.Errorf("%s", r.body)
		}
	})
	t.Run("num_predict", func(t *testing.T) {
		req := req
		req.Options = map[string]any{"num_predict": 5}
		r := send(t, srv.URL, "/api/chat", req)
		if r.final == nil || r.final.DoneReason != "length" || r.final.EvalCount != 5 || r.content != cutTokens(answer, 5) {
			t.Errorf("%s", r.body)
		}
		if rec := lastRequest(t, srv); rec.WindowFull || rec.NumPredict != 5 {
			t.Errorf("recorded %+v", rec)
		}
	})
}

func TestRenderOnly(t *testing.T) {
	srv := New(t)
	tinyt(srv)
	srv.AddModel(ModelSpec{Name: "old", Capabilities: []string{"completion", "tools"}, NoRender: true})
	srv.On().Reply(et.Text("a real answer"))
	calc := api.Tool{Type: "function", Function: api.ToolFunction{Name: "calculator", Parameters: api.ToolFunctionParameters{Type: "object"}}}
	req := api.ChatRequest{Model: "tinyt", Messages: []api.Message{{Role: "system", Content: "be brief"}, user("hi")}, Tools: []api.Tool{calc}, DebugRenderOnly: true}

	status, ctype, body := post(t, srv.URL, "/api/chat", mustJSON(t, req))
	want := regexp.MustCompile(`^\{"model":"tinyt","created_at":"[^"]+","message":\{"role":"","content":""\},"done":false,"_debug_info":\{"rendered_template":"Tools: calculator\\nsystem: be brief\\nuser: hi\\nassistant: "\}\}$`)
	if status != 200 || ctype != "application/json; charset=utf-8" || !want.MatchString(body) {
		t.Errorf("%d %q %s", status, ctype, body)
	}
	rec := lastRequest(t, srv)
	if !rec.RenderOnly || rec.Reply != "" || rec.EvalTokens != 0 || rec.Load != Load {
		t.Errorf("recorded %+v (a rendering consults no rule, generates nothing, and loads the model as the real server does)", rec)
	}
	if w, ok := srv.LoadedWindow("tinyt"); !ok || w != 2048 {
		t.Errorf("loaded window %d, %v", w, ok)
	}

	// The rendering is what the model would read: cut, unless truncation
	// is off, when it is whole (the 400 comes from generating, which a
	// rendering does not do).
	big := append([]api.Message{user(strings.Repeat("many words here ", 1000))}, req.Messages...)
	req.Messages = big
	var r api.ChatResponse
	_, _, body = post(t, srv.URL, "/api/chat", mustJSON(t, req))
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.DebugInfo == nil || r.DebugInfo.RenderedTemplate != "Tools: calculator\nsystem: be brief\nuser: hi\nassistant: " {
		t.Errorf("cut rendering: %s", body)
	}
	req.Truncate = no()
	status, _, body = post(t, srv.URL, "/api/chat", mustJSON(t, req))
	if err := json.Unmarshal([]byte(body), &r); status != 200 || err != nil || r.DebugInfo == nil || !strings.HasPrefix(r.DebugInfo.RenderedTemplate, "Tools: calculator\nuser: many words") {
		t.Errorf("whole rendering: %d %.200s", status, body)
	}

	// Generate renders too.
	status, _, body = post(t, srv.URL, "/api/generate", `{"model":"tinyt","system":"be brief","prompt":"hi","_debug_render_only":true}`)
	if status != 200 || !strings.Contains(body, `"response":"","done":false,"_debug_info":{"rendered_template":"system: be brief\nuser: hi\nassistant: "}`) {
		t.Errorf("generate: %d %s", status, body)
	}

	// A server (or model) without the feature ignores the field.
	req = api.ChatRequest{Model: "old", Messages: []api.Message{user("hi")}, DebugRenderOnly: true}
	if r := send(t, srv.URL, "/api/chat", req); r.content != "a real answer" || strings.Contains(r.body, "_debug_info") {
		t.Errorf("model without rendering: %s", r.body)
	}
	srv.SetRenderSupport(false)
	req.Model = "tinyt"
	if r := send(t, srv.URL, "/api/chat", req); r.content != "a real answer" {
		t.Errorf("server without rendering: %s", r.body)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ps returns /api/ps.
func ps(t *testing.T, url string) []api.ProcessModelResponse {
	t.Helper()
	resp, err := http.Get(url + "/api/ps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pr api.ProcessResponse
	if err := json.NewDecoder(resp.Body).Decode(&pr); err != nil {
		t.Fatal(err)
	}
	return pr.Models
}

func TestPSShowsTheWindowInForce(t *testing.T) {
	srv := New(t)
	tinyt(srv)
	srv.AddModel(ModelSpec{Name: "big", Size: 1000, Family: "qwen3", ParameterSize: "8B"})
	srv.On().Reply(et.Text("ok"))
	if got := ps(t, srv.URL); len(got) != 0 {
		t.Fatalf("ps before any request: %+v", got)
	}
	before := time.Now()
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: []api.Message{user("hi")}})
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "big", Messages: []api.Message{user("hi")}, Options: map[string]any{"num_ctx": 8192}, KeepAlive: &api.Duration{Duration: time.Hour}})
	after := time.Now()
	got := ps(t, srv.URL)
	if len(got) != 2 || got[0].Name != "big:latest" || got[1].Name != "tinyt:latest" {
		t.Fatalf("ps = %+v (want the longest to live first)", got)
	}
	big, tiny := got[0], got[1]
	if tiny.ContextLength != 2048 {
		t.Errorf("tinyt: context_length %d, want 2048 (the default 4096, capped by the model)", tiny.ContextLength)
	}
	if big.ContextLength != 8192 || big.Size != 1000+8192*kvBytesPerToken || big.SizeVRAM != big.Size || big.Model != "big:latest" || big.Details.Family != "qwen3" || len(big.Digest) != 64 {
		t.Errorf("big = %+v", big)
	}
	if big.ExpiresAt.Before(before.Add(time.Hour)) || big.ExpiresAt.After(after.Add(time.Hour)) {
		t.Errorf("expires_at %v, want an hour after the request", big.ExpiresAt)
	}
	if tiny.ExpiresAt.Before(before.Add(DefaultKeepAlive)) || tiny.ExpiresAt.After(after.Add(DefaultKeepAlive)) {
		t.Errorf("expires_at %v, want the default keep_alive after the request", tiny.ExpiresAt)
	}

	// A negative keep_alive is forever: the real server shows a date
	// some 292 years ahead.
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: []api.Message{user("hi")}, KeepAlive: &api.Duration{Duration: -1}})
	if got := ps(t, srv.URL); got[0].Name != "tinyt:latest" || got[0].ExpiresAt.Year() < 2300 {
		t.Errorf("forever: %+v", got[0])
	}

	// The server's default window, and the model's own num_ctx parameter.
	srv.SetDefaultContextLength(16384)
	srv.AddModel(ModelSpec{Name: "tuned", Parameters: map[string]any{"num_ctx": 6000}})
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "big", Messages: []api.Message{user("hi")}})
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tuned", Messages: []api.Message{user("hi")}})
	if w, _ := srv.LoadedWindow("big"); w != 16384 {
		t.Errorf("big without num_ctx: %d, want the server default 16384", w)
	}
	if w, _ := srv.LoadedWindow("tuned"); w != 6000 {
		t.Errorf("tuned: %d, want its parameter 6000", w)
	}
	// A model loaded by an empty chat gets the window asked for.
	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tuned", Options: map[string]any{"num_ctx": 1024}})
	if w, _ := srv.LoadedWindow("tuned"); r.final == nil || r.final.DoneReason != "load" || w != 1024 {
		t.Errorf("load by empty chat: window %d, %s", w, r.body)
	}
}

func TestReloadOnlyWhenNumCtxChanges(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{Name: "m", ContextLength: 2048, LoadTime: 30 * time.Millisecond})
	srv.On().Reply(et.Text("ok"))
	ask := func(numCtx int) (reply, Request) {
		req := api.ChatRequest{Model: "m", Messages: []api.Message{user("hi")}}
		if numCtx > 0 {
			req.Options = map[string]any{"num_ctx": numCtx}
		}
		r := send(t, srv.URL, "/api/chat", req)
		return r, lastRequest(t, srv)
	}
	kinds := func() []string {
		var out []string
		for _, e := range srv.LoadEvents() {
			out = append(out, string(e.Kind)+"@"+strconv.Itoa(e.ContextLength))
		}
		return out
	}

	r, rec := ask(1024)
	if rec.Load != Load || r.final.LoadDuration < 30*time.Millisecond {
		t.Errorf("first request: load %q, load_duration %v", rec.Load, r.final.LoadDuration)
	}
	_, rec = ask(1024)
	if rec.Load != "" || strings.Join(kinds(), " ") != "load@1024" {
		t.Errorf("same num_ctx: load %q, events %v", rec.Load, kinds())
	}
	r, rec = ask(2048)
	if rec.Load != Reload || r.final.LoadDuration < 30*time.Millisecond || rec.Window != 2048 {
		t.Errorf("new num_ctx: %+v", rec)
	}
	// The scheduler compares num_ctx as asked for: 8192 runs with the
	// model's 2048 like the request before, but it is a different ask.
	_, rec = ask(8192)
	if rec.Load != Reload || rec.Window != 2048 {
		t.Errorf("num_ctx above the maximum: %+v", rec)
	}
	_, rec = ask(8192)
	if rec.Load != "" {
		t.Errorf("repeated: %+v", rec)
	}
	if got := strings.Join(kinds(), " "); got != "load@1024 reload@2048 reload@2048" {
		t.Errorf("events = %s", got)
	}
}

func TestTheCacheMakesAPromptFasterNotSmaller(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{Name: "m", PromptRate: 1e6}) // a microsecond a token
	srv.On().Reply(et.Text("Fine, thanks."))
	first := []api.Message{{Role: "system", Content: strings.Repeat("Context the model reads every turn. ", 30)}, user("how are you?")}
	r1 := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: first})
	n1 := r1.final.PromptEvalCount
	if n1 != CountTokens(lastRequest(t, srv).Prompt) || r1.final.PromptEvalDuration != time.Duration(n1)*time.Microsecond {
		t.Fatalf("cold: %d tokens in %v", n1, r1.final.PromptEvalDuration)
	}
	second := append(first, api.Message{Role: "assistant", Content: "Fine, thanks."}, user("and today?"))
	r2 := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: second})
	rec := lastRequest(t, srv)
	n2 := r2.final.PromptEvalCount
	if n2 != CountTokens(rec.Prompt) || n2 <= n1 {
		t.Errorf("prompt_eval_count %d after %d: it counts the whole prompt every turn", n2, n1)
	}
	if rec.CachedTokens < n1 || r2.final.PromptEvalDuration != time.Duration(n2-rec.CachedTokens)*time.Microsecond || r2.final.PromptEvalDuration*5 > r1.final.PromptEvalDuration {
		t.Errorf("warm: %d cached of %d, %v (cold was %v)", rec.CachedTokens, n2, r2.final.PromptEvalDuration, r1.final.PromptEvalDuration)
	}
	// A reload loses the cache.
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: second, Options: map[string]any{"num_ctx": 8192}})
	if rec := lastRequest(t, srv); rec.Load != Reload || rec.CachedTokens != 0 {
		t.Errorf("after a reload: %d tokens cached", rec.CachedTokens)
	}
}

func TestUnloadAndKeepAlive(t *testing.T) {
	srv := New(t)
	srv.Model("m")
	srv.Model("other")
	srv.On().Reply(et.Text("ok"))
	hi := api.ChatRequest{Model: "m", Messages: []api.Message{user("hi")}}
	send(t, srv.URL, "/api/chat", hi)

	// What `ollama stop` and the engine's Unload send.
	status, _, body := post(t, srv.URL, "/api/generate", `{"model":"m","keep_alive":0}`)
	if status != 200 || !strings.Contains(body, `"response":"","done":true,"done_reason":"unload"`) {
		t.Errorf("unload: %d %s", status, body)
	}
	if rec := lastRequest(t, srv); !rec.Unloaded || rec.KeepAlive == nil || rec.KeepAlive.Duration != 0 {
		t.Errorf("recorded %+v", rec)
	}
	if got := ps(t, srv.URL); len(got) != 0 {
		t.Errorf("ps after unload: %+v", got)
	}
	// The chat form, and unloading what is not loaded.
	send(t, srv.URL, "/api/chat", hi)
	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", KeepAlive: &api.Duration{}})
	if r.final == nil || r.final.DoneReason != "unload" {
		t.Errorf("chat unload: %s", r.body)
	}
	post(t, srv.URL, "/api/generate", `{"model":"other","keep_alive":0}`)

	// keep_alive 0 on a real request: answered, then unloaded.
	req := hi
	req.KeepAlive = &api.Duration{}
	if r := send(t, srv.URL, "/api/chat", req); r.content != "ok" {
		t.Errorf("keep_alive 0 request: %s", r.body)
	}
	if got := ps(t, srv.URL); len(got) != 0 {
		t.Errorf("ps after a keep_alive 0 request: %+v", got)
	}
	// A short keep_alive runs out.
	req.KeepAlive = &api.Duration{Duration: time.Millisecond}
	send(t, srv.URL, "/api/chat", req)
	time.Sleep(5 * time.Millisecond)
	if got := ps(t, srv.URL); len(got) != 0 {
		t.Errorf("ps after keep_alive ran out: %+v", got)
	}
	var kinds []string
	for _, e := range srv.LoadEvents() {
		kinds = append(kinds, string(e.Kind))
		if e.Model != "m:latest" {
			t.Errorf("event for %s", e.Model)
		}
	}
	if got := strings.Join(kinds, " "); got != "load unload load unload load unload load expire" {
		t.Errorf("events: %s", got)
	}
}

func TestWindowOptionsAndGenerate(t *testing.T) {
	srv := New(t)
	srv.Model("m")
	srv.On().Reply(et.Text("ok"))
	status, _, body := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_ctx":"big"}}`)
	if status != 500 || body != `{"error":"option \"num_ctx\" must be of type integer"}` {
		t.Errorf("%d %s", status, body)
	}
	// Generate renders the system prompt and prompt through the template
	// and follows the same rules.
	status, _, body = post(t, srv.URL, "/api/generate", `{"model":"m","system":"be brief","prompt":"`+strings.Repeat("word ", 100)+`","options":{"num_ctx":32},"truncate":false}`)
	if status != 400 || body != `{"error":"the input length exceeds the context length"}` {
		t.Errorf("generate too long: %d %s", status, body)
	}
	post(t, srv.URL, "/api/generate", `{"model":"m","prompt":"`+strings.Repeat("word ", 100)+`","options":{"num_ctx":32},"raw":true,"shift":false}`)
	if rec := lastRequest(t, srv); rec.CutTokens != 200-32 || rec.PromptTokens != 32 || rec.Prompt != strings.Repeat("word ", 100) || !rec.SilentCut() {
		t.Errorf("raw generate: %+v", rec)
	}
	status, _, body = post(t, srv.URL, "/api/generate", `{"model":"m","system":"be brief","prompt":"hi"}`)
	if rec := lastRequest(t, srv); status != 200 || rec.Prompt != "system: be brief\nuser: hi\nassistant: " || !strings.Contains(body, `"prompt_eval_count":`+strconv.Itoa(CountTokens(rec.Prompt))) {
		t.Errorf("generate: %s; prompt %q", body, rec.Prompt)
	}
}

func TestLogSaysWhatTheWindowDid(t *testing.T) {
	srv := New(t)
	tinyt(srv)
	srv.On().Reply(et.Text("ok"))
	var log strings.Builder
	srv.LogTo(&log)
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: []api.Message{user("hi"), {Role: "assistant", Content: strings.Repeat("word ", 3000)}, user("again")}})
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyt", Messages: []api.Message{user("hi")}, Options: map[string]any{"num_ctx": 512}, DebugRenderOnly: true})
	send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "\x1b[2Jtinyt", Messages: []api.Message{user("hi")}})
	srv.Close() // every line written
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("log:\n%s", log.String())
	}
	if want := "POST /api/chat -> 200 model=tinyt load num_ctx=2048 prompt=" + strconv.Itoa(CountTokens("user: again\nassistant: ")) + " SILENT CUT (2 messages of "; !strings.Contains(lines[0], want) {
		t.Errorf("line 1: %s\nwant %s", lines[0], want)
	}
	if !strings.Contains(lines[1], "reload num_ctx=512 prompt=8 render-only") {
		t.Errorf("line 2: %s", lines[1])
	}
	if strings.ContainsRune(log.String(), 0x1b) || !strings.Contains(lines[2], "404 model=\uFFFD[2Jtinyt") {
		t.Errorf("line 3 lets escape sequences through: %q", lines[2])
	}
}
