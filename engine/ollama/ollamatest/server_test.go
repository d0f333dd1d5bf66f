package ollamatest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// post sends a raw body and returns status, content type and body.
func post(t *testing.T, url, path, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading body: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func lines(body string) []string {
	return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
}

const chatHi = `{"model":"tiny","messages":[{"role":"user","content":"hi"}]}`

func TestChatStreamMatchesTheRealWireFormat(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On().Reply(et.TextChunks("<s>"))
	status, ctype, body := post(t, srv.URL, "/api/chat", chatHi)
	if status != 200 || ctype != "application/x-ndjson" {
		t.Fatalf("status %d, content type %q", status, ctype)
	}
	ls := lines(body)
	if len(ls) != 2 {
		t.Fatalf("lines = %q", ls)
	}
	// The shapes recorded from a real server, timestamps and durations
	// aside: same keys, same order, same escaping.
	first := regexp.MustCompile(`^\{"model":"tiny","created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z","message":\{"role":"assistant","content":"\\u003cs\\u003e"\},"done":false\}$`)
	last := regexp.MustCompile(`^\{"model":"tiny","created_at":"[^"]+","message":\{"role":"assistant","content":""\},"done":true,"done_reason":"stop","total_duration":\d+,"load_duration":\d+,"prompt_eval_count":\d+,"prompt_eval_duration":\d+,"eval_count":3,"eval_duration":\d+\}$`) // "<s>" is 3 tokens
	if !first.MatchString(ls[0]) {
		t.Errorf("first chunk %s", ls[0])
	}
	if !last.MatchString(ls[1]) {
		t.Errorf("final chunk %s", ls[1])
	}
}

func TestToolCallChunkShape(t *testing.T) {
	srv := New(t)
	srv.Model("qwen3", "completion", "tools")
	srv.On().Reply(et.ToolCall("calculator", `{"expression":"2+2","precision":2}`), et.ToolCall("clock", "").WithID("call_1"))
	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"qwen3","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"calculator","parameters":{"type":"object","properties":{}}}}]}`)
	ls := lines(body)
	want0 := `"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_00000001","function":{"index":0,"name":"calculator","arguments":{"expression":"2+2","precision":2}}}]},"done":false}`
	want1 := `"tool_calls":[{"id":"call_1","function":{"index":1,"name":"clock","arguments":{}}}]`
	if len(ls) != 3 || !strings.HasSuffix(ls[0], want0) || !strings.Contains(ls[1], want1) {
		t.Errorf("lines:\n%s", body)
	}
}

func TestErrorsMatchTheRealServer(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.Model("tiny-notools", "completion")
	srv.Model("nomic-embed-text", "embedding")
	srv.On().Reply(et.Text("x"))
	tools := `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]`
	cases := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"model not pulled (chat)", "/api/chat", `{"model":"qwen3:0.6b","messages":[{"role":"user","content":"hi"}]}`, 404, `{"error":"model 'qwen3:0.6b' not found"}`},
		{"model not pulled (show)", "/api/show", `{"model":"qwen3:0.6b"}`, 404, `{"error":"model 'qwen3:0.6b' not found"}`},
		{"tools without the capability", "/api/chat", `{"model":"tiny-notools","messages":[{"role":"user","content":"hi"}]` + tools + `}`, 400, `{"error":"registry.ollama.ai/library/tiny-notools:latest does not support tools"}`},
		{"think without the capability", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"think":true}`, 400, `{"error":"\"tiny\" does not support thinking"}`},
		{"think level without the capability", "/api/generate", `{"model":"tiny","prompt":"hi","think":"high"}`, 400, `{"error":"\"tiny\" does not support thinking"}`},
		{"malformed JSON", "/api/chat", `{"model":"tiny","messages":[`, 400, `{"error":"unexpected EOF"}`},
		{"empty body", "/api/chat", ``, 400, `{"error":"missing request body"}`},
		{"no model", "/api/chat", `{"messages":[]}`, 400, `{"error":"model is required"}`},
		{"chat with an embedding model", "/api/chat", `{"model":"nomic-embed-text","messages":[{"role":"user","content":"hi"}]}`, 400, `{"error":"\"nomic-embed-text\" does not support chat"}`},
	}
	for _, c := range cases {
		status, ctype, body := post(t, srv.URL, c.path, c.body)
		if status != c.status || body != c.want || ctype != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %q %s; want %d %s", c.name, status, ctype, body, c.status, c.want)
		}
	}
	// think:false is fine on any model.
	if status, _, body := post(t, srv.URL, "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"think":false}`); status != 200 {
		t.Errorf("think:false: %d %s", status, body)
	}
}

func TestRulesFollowTheConversation(t *testing.T) {
	srv := New(t)
	srv.Model("m", "completion", "tools")
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResultContains("calculator", "error")).Reply(et.Text("The calculator failed."))
	srv.On(et.ToolResult("calculator"), et.QuestionContains("15%")).Reply(et.Text("It is 51."))
	srv.On(et.Turn(3)).Reply(et.Text("third turn"))
	srv.On(et.UserMatches(`^count to \d+$`), et.Not(et.ModelIs("other"))).Reply(et.Text("1 2 3"))
	srv.On(et.AnyOf(et.SystemContains("pirate"), et.OffersTool("parrot"))).Reply(et.Text("Arr."))
	srv.On(et.NoTools(), et.UserSays("limited")).Times(1).Reply(et.Text("once"))
	srv.Default(et.Text("default answer"))

	chat := func(msgs ...api.Message) string {
		t.Helper()
		b, _ := json.Marshal(api.ChatRequest{Model: "m", Messages: msgs})
		status, _, body := post(t, srv.URL, "/api/chat", string(b))
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var text strings.Builder
		for _, l := range lines(body) {
			var r api.ChatResponse
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			text.WriteString(r.Message.Content)
			for _, tc := range r.Message.ToolCalls {
				text.WriteString("call " + tc.Function.Name + " " + tc.Function.Arguments.String())
			}
		}
		return text.String()
	}
	user := func(s string) api.Message { return api.Message{Role: "user", Content: s} }
	call := api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "call_1", Function: api.ToolCallFunction{Name: "calculator"}}}}
	result := func(s string) api.Message {
		return api.Message{Role: "tool", ToolName: "calculator", ToolCallID: "call_1", Content: s}
	}

	checks := []struct {
		got, want string
	}{
		{chat(user("What is 15% of 340?")), `call calculator {"expression":"15/100*340"}`},
		// The question is still the last user message, but no longer the
		// last message: UserSays does not fire again.
		{chat(user("What is 15% of 340?"), call, result("51")), "It is 51."},
		{chat(user("What is 15% of 340?"), call, result("Error: division by zero")), "The calculator failed."},
		{chat(user("What is 20% of 10?"), call, result("2")), "default answer"},
		{chat(user("a"), api.Message{Role: "assistant", Content: "b"}, user("c"), api.Message{Role: "assistant", Content: "d"}, user("e")), "third turn"},
		{chat(user("count to 3")), "1 2 3"},
		{chat(api.Message{Role: "system", Content: "Talk like a pirate."}, user("hello")), "Arr."},
		{chat(user("limited")), "once"},
		{chat(user("limited")), "default answer"},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q", i, c.got, c.want)
		}
	}
	var replies []string
	for _, r := range srv.Requests() {
		replies = append(replies, r.Reply)
	}
	if !strings.HasPrefix(replies[0], `rule 1 (user says "15% of 340")`) || replies[3] != "default" {
		t.Errorf("recorded replies = %q", replies)
	}
}

func TestReplyWithComputesStepsFromTheRequest(t *testing.T) {
	srv := New(t)
	srv.Model("m", "completion", "tools")
	srv.On(et.ToolResult("calculator")).ReplyWith(func(c *et.Call) []et.Step {
		return []et.Step{et.ToolCall("calculator", fmt.Sprintf(`{"expression":"%d+1"}`, c.Turn()))}
	})
	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":""},{"role":"tool","tool_name":"calculator","content":"1"}]}`)
	if !strings.Contains(body, `"arguments":{"expression":"2+1"}`) {
		t.Errorf("body:\n%s", body)
	}
}

func TestNoMatchingRuleIsAClearError(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On(et.UserSays("something else")).Reply(et.Text("x"))
	status, _, body := post(t, srv.URL, "/api/chat", chatHi)
	if status != 500 || !strings.Contains(body, `no scripted reply matches this request (last message: user: \"hi\")`) {
		t.Errorf("%d %s", status, body)
	}
}

func TestNonStreamingAndGenerate(t *testing.T) {
	srv := New(t)
	srv.Model("qwen3", "completion", "tools", "thinking")
	srv.On(et.Endpoint("/api/generate")).Reply(et.Think("hm"), et.Text("generated text"))
	srv.On().Reply(et.Think("hmm"), et.Text("whole answer"), et.ToolCall("f", `{"a":1}`).WithID("call_x"))

	status, ctype, body := post(t, srv.URL, "/api/chat", `{"model":"qwen3","stream":false,"messages":[{"role":"user","content":"q"}]}`)
	var r api.ChatResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != 200 || ctype != "application/json; charset=utf-8" {
		t.Fatalf("%d %q %s (%v)", status, ctype, body, err)
	}
	if !r.Done || r.Message.Content != "whole answer" || r.Message.Thinking != "hmm" || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].ID != "call_x" ||
		r.EvalCount != CountTokens("hmm")+CountTokens("whole answer")+CountTokens(`{"name":"f","arguments":{"a":1}}`) {
		t.Errorf("response = %s", body)
	}

	_, _, body = post(t, srv.URL, "/api/generate", `{"model":"qwen3","prompt":"q"}`)
	ls := lines(body)
	if len(ls) != 4 || !strings.Contains(ls[0], `"response":"","thinking":"hm","done":false`) || !strings.Contains(ls[1], `"response":"generated","done":false`) || !strings.Contains(ls[3], `"done":true,"done_reason":"stop"`) {
		t.Errorf("generate stream:\n%s", body)
	}

	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"qwen3","think":false,"messages":[{"role":"user","content":"q"}]}`)
	if strings.Contains(body, `"thinking"`) {
		t.Errorf("thinking sent although the request turned it off:\n%s", body)
	}
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"qwen3","messages":[]}`)
	if !strings.Contains(body, `"done":true,"done_reason":"load"`) {
		t.Errorf("empty conversation (a model load): %s", body)
	}
}

func TestMidStreamErrorAndDisconnect(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On(et.UserSays("error")).Reply(et.Text("partial answer"), et.Error(500, "runner crashed"))
	srv.On(et.UserSays("drop")).Reply(et.Text("one two three four")).DisconnectAfter(2)
	srv.On(et.UserSays("early")).Reply(et.Error(503, "busy"), et.Text("never"))

	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"error"}]}`)
	ls := lines(body)
	if len(ls) != 3 || ls[2] != `{"error":"runner crashed"}` {
		t.Errorf("stream with an error:\n%s", body)
	}
	status, _, body := post(t, srv.URL, "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"early"}]}`)
	if status != 503 || body != `{"error":"busy"}` {
		t.Errorf("early error: %d %s", status, body)
	}

	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"tiny","messages":[{"role":"user","content":"drop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if len(got) != 2 || !errors.Is(sc.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("dropped stream: %d lines, read error %v", len(got), sc.Err())
	}
}

func TestHangEndsWhenTheClientCancelsOrTheServerCloses(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On().Reply(et.Text("waiting"), et.Hang())

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/chat", strings.NewReader(chatHi))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"content":"waiting"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	resp.Body.Close()

	// A second hanging request is ended by Close, which must return.
	go func() { _, _ = http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(chatHi)) }()
	for len(srv.Requests()) < 2 {
		time.Sleep(time.Millisecond)
	}
	srv.Close()
}

func TestTagsShowAndVersion(t *testing.T) {
	srv := New(t)
	older := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	srv.AddModel(ModelSpec{Name: "old", ModifiedAt: older})
	srv.AddModel(ModelSpec{Name: "qwen3:8b", Capabilities: []string{"completion", "tools", "thinking"}, Size: 5225388164, Family: "qwen3", ParameterSize: "8.2B", Quantization: "Q4_K_M", ContextLength: 40960})

	resp, err := http.Get(srv.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	var tags api.ListResponse
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(tags.Models) != 2 || tags.Models[0].Name != "qwen3:8b" || tags.Models[1].Name != "old:latest" {
		t.Fatalf("tags = %+v (want newest first)", tags.Models)
	}
	q := tags.Models[0]
	if q.Size != 5225388164 || q.Details.Family != "qwen3" || q.Details.ParameterSize != "8.2B" || q.Details.QuantizationLevel != "Q4_K_M" || len(q.Digest) != 64 {
		t.Errorf("model = %+v", q)
	}

	_, _, body := post(t, srv.URL, "/api/show", `{"model":"qwen3:8b"}`)
	var show map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &show); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range show {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"capabilities", "details", "model_info", "modelfile", "modified_at", "parameters", "template", "tensors"}; !slices.Equal(keys, want) {
		t.Errorf("show keys = %v, want %v", keys, want)
	}
	if string(show["capabilities"]) != `["completion","tools","thinking"]` || !strings.Contains(string(show["model_info"]), `"qwen3.context_length":40960`) {
		t.Errorf("show = %s", body)
	}
	// "name" is the older spelling of "model".
	if status, _, _ := post(t, srv.URL, "/api/show", `{"name":"old"}`); status != 200 {
		t.Errorf("show by name: %d", status)
	}

	srv.SetVersion("9.9.9")
	resp, err = http.Get(srv.URL + "/api/version")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"version":"9.9.9"}` {
		t.Errorf("version = %s", b)
	}
	resp, err = http.Get(srv.URL + "/api/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
}

func TestEmbedIsDeterministicAndSimilarityAware(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{Name: "emb", Capabilities: []string{"embedding"}, EmbeddingLength: 128})
	_, _, body := post(t, srv.URL, "/api/embed", `{"model":"emb","input":["the cat sat on the mat","a cat sat on a mat","stock prices fell sharply"]}`)
	var r api.EmbedResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Embeddings) != 3 {
		t.Fatalf("%s (%v)", body, err)
	}
	if !slices.Equal(r.Embeddings[0], Embedding("the cat sat on the mat", 128)) {
		t.Error("server vector differs from Embedding()")
	}
	cos := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if norm := cos(r.Embeddings[0], r.Embeddings[0]); math.Abs(norm-1) > 1e-5 {
		t.Errorf("not a unit vector: |v|² = %v", norm)
	}
	if near, far := cos(r.Embeddings[0], r.Embeddings[1]), cos(r.Embeddings[0], r.Embeddings[2]); near <= far {
		t.Errorf("similar texts not closer: %v <= %v", near, far)
	}
	if status, _, body := post(t, srv.URL, "/api/embed", `{"model":"emb","input":[1]}`); status != 400 || body != `{"error":"invalid input type"}` {
		t.Errorf("bad input: %d %s", status, body)
	}
}

func TestRecordKeepsEveryRequest(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On().Reply(et.Text("ok"))
	post(t, srv.URL, "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_name":"calc","tool_call_id":"call_9","content":"4"}]}`)
	post(t, srv.URL, "/api/chat", `{"model":"tiny","messages":[`)
	post(t, srv.URL, "/api/show", `{"model":"tiny"}`)
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].Seq != 1 || reqs[0].Status != 200 || reqs[0].Chat.Messages[1].ToolCallID != "call_9" || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Errorf("first = %+v", reqs[0])
	}
	if reqs[1].Chat != nil || reqs[1].Status != 400 || string(reqs[1].Body) != `{"model":"tiny","messages":[` {
		t.Errorf("malformed = %+v", reqs[1])
	}
	if reqs[2].Show == nil || reqs[2].Show.Model != "tiny" {
		t.Errorf("show = %+v", reqs[2])
	}
	if chats := srv.Chats(); len(chats) != 1 || chats[0].Messages[1].ToolName != "calc" {
		t.Errorf("chats = %+v", chats)
	}
}

func TestFlood(t *testing.T) {
	srv := New(t)
	srv.Model("tiny")
	srv.On().Reply(et.Flood(5000))
	_, _, body := post(t, srv.URL, "/api/chat", chatHi)
	ls := lines(body)
	if len(ls) != 5001 {
		t.Fatalf("%d lines, want 5001", len(ls))
	}
	var text strings.Builder
	for _, l := range ls {
		var r api.ChatResponse
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		text.WriteString(r.Message.Content)
	}
	if text.String() != FloodText(5000) {
		t.Error("flooded content differs from FloodText")
	}
	// The hand-built lines are byte-identical to json.Marshal's.
	var r api.ChatResponse
	_ = json.Unmarshal([]byte(ls[7]), &r)
	if again, _ := json.Marshal(r); string(again) != ls[7] {
		t.Errorf("flood line\n%s\nre-encodes as\n%s", ls[7], again)
	}
	if !strings.Contains(ls[5000], `"eval_count":5000`) {
		t.Errorf("final chunk %s", ls[5000])
	}
}

func TestListenAndServe(t *testing.T) {
	sc, err := ParseScript([]byte(`{"models":[{"name":"tiny"}],"rules":[{"reply":[{"text":"served"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, "127.0.0.1:0", sc, func(u string) { urls <- u }) }()
	url := <-urls
	_, _, body := post(t, url, "/api/chat", chatHi)
	if !strings.Contains(body, `"content":"served"`) {
		t.Errorf("body %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url + "/api/version"); err == nil {
		t.Error("server still answering after its context ended")
	}
}

func TestClosedURLRefuses(t *testing.T) {
	_, err := http.Get(ClosedURL(t) + "/api/version")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %v", err)
	}
}
