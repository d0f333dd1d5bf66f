package ollamatest

import (
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// The small-window demo script configures every window rule: a 2,048-token
// model with tools and rendering, one without rendering, a 256-token model
// a long answer fills, and a model to pull.
func TestSmallWindowScript(t *testing.T) {
	sc, err := LoadScript("testdata/small-window.json")
	if err != nil {
		t.Fatal(err)
	}
	if sc.DefaultContextLength != 4096 || sc.KeepAlive == nil || *sc.KeepAlive != 5*time.Minute || len(sc.Pullable) != 1 {
		t.Fatalf("script settings: %+v", sc)
	}
	srv := New(t)
	srv.SetDefaultContextLength(1000) // the script's 4096 replaces it
	srv.Use(sc)
	for _, r := range sc.Rules {
		r.ChunkDelay(0)
	}
	sc.Fallback.ChunkDelay(0)
	calc := api.Tool{Type: "function", Function: api.ToolFunction{Name: "calculator", Parameters: api.ToolFunctionParameters{Type: "object"}}}

	_, _, body := post(t, srv.URL, "/api/show", `{"model":"tinyt"}`)
	if !strings.Contains(body, `"llama.context_length":2048`) || !strings.Contains(body, `"capabilities":["completion","tools"]`) {
		t.Errorf("show tinyt: %s", body)
	}
	_, _, body = post(t, srv.URL, "/api/chat", mustJSON(t, api.ChatRequest{Model: "tinyt", Messages: []api.Message{{Role: "system", Content: "be brief"}, user("hi")}, Tools: []api.Tool{calc}, DebugRenderOnly: true}))
	if !strings.Contains(body, `"rendered_template":"Tools: calculator\nsystem: be brief\nuser: hi\nassistant: "`) {
		t.Errorf("tinyt renders: %s", body)
	}
	if w, _ := srv.LoadedWindow("tinyt"); w != 2048 {
		t.Errorf("tinyt window %d", w)
	}
	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "oldtiny", Messages: []api.Message{user("hi")}, DebugRenderOnly: true})
	if r.final == nil || !strings.HasPrefix(r.content, "I read only what fits") {
		t.Errorf("oldtiny ignores rendering: %s", r.body)
	}

	// The note's silent cut, on the script's model.
	note := []api.Message{user("hi"), {Role: "assistant", Content: strings.Repeat("word ", 3000)}, user("second question")}
	r = send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tinyj", Messages: note})
	if rec := lastRequest(t, srv); r.final == nil || rec.CutMessages != 2 || r.final.PromptEvalCount != CountTokens("user: second question\nassistant: ") {
		t.Errorf("silent cut: %s", r.body)
	}

	// A long answer fills the 256-token window.
	r = send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "tiny256", Messages: []api.Message{user("a long answer, please")}, Shift: no()})
	if r.final == nil || r.final.DoneReason != "length" || r.final.PromptEvalCount+r.final.EvalCount != 256 {
		t.Errorf("long answer: %s", r.body)
	}

	// The pullable model.
	if r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "smollm2:135m", Messages: []api.Message{user("hi")}}); r.status != 404 {
		t.Errorf("before the pull: %d", r.status)
	}
	sc.Pullable[0].Pull.Interval = time.Microsecond
	srv.Pullable(sc.Pullable[0].Model, sc.Pullable[0].Pull)
	_, ls := pull(t, srv.URL, `{"model":"smollm2:135m"}`)
	if len(ls) != 1+4*21+3 || ls[len(ls)-1] != `{"status":"success"}` {
		t.Errorf("pull: %d lines, last %s", len(ls), ls[len(ls)-1])
	}
	_, _, body = post(t, srv.URL, "/api/show", `{"model":"smollm2:135m"}`)
	if !strings.Contains(body, `"llama.context_length":8192`) {
		t.Errorf("show after the pull: %s", body)
	}
}
