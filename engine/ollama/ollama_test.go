package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

func newEngine(t *testing.T, host string) *ollama.Engine {
	t.Helper()
	e, err := ollama.New(host)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ask(q string) []engine.Message {
	return []engine.Message{{Role: engine.RoleUser, Content: q}}
}

// collect runs Chat and returns the chunks it delivered.
func collect(t *testing.T, ctx context.Context, e *ollama.Engine, req engine.ChatRequest) (engine.ChatResponse, []engine.Chunk, error) {
	t.Helper()
	var chunks []engine.Chunk
	resp, err := e.Chat(ctx, req, func(c engine.Chunk) { chunks = append(chunks, c) })
	return resp, chunks, err
}

func TestChatStreamsThinkingContentAndUsage(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.On(et.UserSays("capital")).
		Reply(et.Think("Easy one."), et.Text("The capital is Paris.")).
		Usage(et.Usage{
			TotalDuration: 9963538, LoadDuration: 2328807,
			PromptTokens: 25, PromptDuration: 1369763,
			CompletionTokens: 4, EvalDuration: 4566328,
		})
	e := newEngine(t, srv.URL)

	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: ask("What is the capital of France?")})
	if err != nil {
		t.Fatal(err)
	}
	var thinking, content []string
	for _, c := range chunks {
		if c.Thinking != "" {
			if len(content) > 0 {
				t.Errorf("thinking %q arrived after content", c.Thinking)
			}
			thinking = append(thinking, c.Thinking)
		}
		if c.Content != "" {
			content = append(content, c.Content)
		}
	}
	if want := []string{"Easy", " one."}; !slices.Equal(thinking, want) {
		t.Errorf("thinking deltas = %q, want %q", thinking, want)
	}
	if want := []string{"The", " capital", " is", " Paris."}; !slices.Equal(content, want) {
		t.Errorf("content deltas = %q, want %q", content, want)
	}
	if resp.Message.Role != engine.RoleAssistant || resp.Message.Content != "The capital is Paris." || resp.Message.Thinking != "Easy one." {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.DoneReason != "stop" || resp.Model != "qwen3" {
		t.Errorf("done reason %q, model %q", resp.DoneReason, resp.Model)
	}
	u := resp.Usage
	if u.PromptTokens != 25 || u.OutputTokens != 4 {
		t.Errorf("tokens = %d in, %d out; want 25, 4", u.PromptTokens, u.OutputTokens)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(u.EvalSeconds, 0.004566328) || !near(u.LoadSeconds, 0.002328807) || !near(u.TotalSeconds, 0.009963538) {
		t.Errorf("durations eval %v load %v total %v", u.EvalSeconds, u.LoadSeconds, u.TotalSeconds)
	}
	if !near(u.TokensPerSec, 4/0.004566328) {
		t.Errorf("tokens/s = %v", u.TokensPerSec)
	}
	if u.WallSeconds <= 0 {
		t.Errorf("wall seconds not measured: %v", u.WallSeconds)
	}
}

func TestChatToolCallsKeepIDsOrderAndArgumentOrder(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.ToolResult("clock")).Reply(
		et.ToolCalls(
			et.ToolCall("calculator", `{"zeta":1,"alpha":"a < b & c","mid":{"b":1,"a":2}}`).WithID("call_server"),
			et.ToolCall("calculator", `{"expression":"2+2"}`).WithID(""),
		),
		et.ToolCall("file_read", "").WithID(""),
	)
	e := newEngine(t, srv.URL)
	history := []engine.Message{
		{Role: engine.RoleUser, Content: "time and sums"},
		{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "clock", Arguments: `{}`}}},
		{Role: engine.RoleTool, ToolName: "clock", ToolCallID: "call_1", Content: "12:00"},
	}
	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{
		Model: "qwen3", Messages: history,
		Tools: []engine.ToolDef{{Name: "calculator"}, {Name: "file_read"}, {Name: "clock"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.ToolCall{
		{ID: "call_server", Index: 0, Name: "calculator", Arguments: `{"zeta":1,"alpha":"a < b & c","mid":{"a":2,"b":1}}`},
		// No id from the server: numbered after the one call already in
		// the conversation, so ids stay unique within it.
		{ID: "call_3", Index: 1, Name: "calculator", Arguments: `{"expression":"2+2"}`},
		{ID: "call_4", Index: 2, Name: "file_read", Arguments: `{}`},
	}
	if !slices.Equal(resp.Message.ToolCalls, want) {
		t.Errorf("tool calls =\n%+v\nwant\n%+v", resp.Message.ToolCalls, want)
	}
	// The chunks deliver the same calls, grouped as they arrived.
	var groups [][]engine.ToolCall
	for _, c := range chunks {
		if len(c.ToolCalls) > 0 {
			groups = append(groups, c.ToolCalls)
		}
	}
	if len(groups) != 2 || len(groups[0]) != 2 || len(groups[1]) != 1 || groups[1][0] != want[2] {
		t.Errorf("tool call chunks = %+v", groups)
	}
}

func TestChatSendsToolsMessagesAndOptionsOnTheWire(t *testing.T) {
	srv := ollamatest.New(t)
	// A thinking level is for a model with Ollama's harmony parser (gpt-oss):
	// a real server refuses one for any other model.
	srv.AddModel(ollamatest.ModelSpec{Name: "qwen3", Capabilities: []string{"completion", "tools", "thinking"}, Parser: "harmony"})
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)

	temp, seed := 0.2, 42
	params := &jsonschema.Schema{
		Type:          "object",
		PropertyOrder: []string{"zeta", "alpha", "items", "mode", "nested"},
		Properties: map[string]*jsonschema.Schema{
			"zeta":  {Type: "string", Description: "last letter first"},
			"alpha": {Types: []string{"integer", "null"}},
			"items": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			"mode":  {Type: "string", Enum: []any{"fast", "exact"}},
			"nested": {Type: "object", PropertyOrder: []string{"y", "x"}, Properties: map[string]*jsonschema.Schema{
				"y": {Type: "number"}, "x": {Type: "number"},
			}},
		},
		Required: []string{"zeta"},
	}
	msgs := []engine.Message{
		{Role: engine.RoleSystem, Content: "be brief"},
		{Role: engine.RoleUser, Content: "go"},
		{Role: engine.RoleAssistant, Thinking: "hmm", ToolCalls: []engine.ToolCall{{ID: "call_7", Index: 0, Name: "calc", Arguments: `{"b":2,"a":1}`}}},
		{Role: engine.RoleTool, ToolName: "calc", ToolCallID: "call_7", Content: "3"},
	}
	_, err := e.Chat(context.Background(), engine.ChatRequest{
		Model: "qwen3", Messages: msgs,
		Tools: []engine.ToolDef{{Name: "calc", Description: "adds", Parameters: params}},
		Options: engine.Options{
			NumCtx: 8192, NumPredict: 256, Temperature: &temp, Seed: &seed,
			KeepAlive: 10 * time.Minute, Think: "high",
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The level asks first whether the model takes one (/api/show).
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Show == nil || reqs[1].Chat == nil {
		t.Fatalf("requests = %+v", reqs)
	}
	got := reqs[1].Chat
	body := string(reqs[1].Body)

	if got.Stream != nil {
		t.Errorf("stream = %v, want unset (the server streams by default)", *got.Stream)
	}
	wantOpts := map[string]any{"num_ctx": 8192.0, "num_predict": 256.0, "temperature": 0.2, "seed": 42.0}
	if len(got.Options) != len(wantOpts) {
		t.Errorf("options = %v, want %v", got.Options, wantOpts)
	}
	for k, v := range wantOpts {
		if got.Options[k] != v {
			t.Errorf("option %s = %v, want %v", k, got.Options[k], v)
		}
	}
	if !strings.Contains(body, `"keep_alive":"10m0s"`) || !strings.Contains(body, `"think":"high"`) {
		t.Errorf("keep_alive or think missing from body: %s", body)
	}
	// Property order survives, at both levels.
	assertOrder(t, body, `"zeta":`, `"alpha":`, `"items":`, `"mode":`, `"nested":`)
	assertOrder(t, body, `"y":{"type":"number"}`, `"x":{"type":"number"}`)
	if len(got.Tools) != 1 {
		t.Fatalf("tools = %+v", got.Tools)
	}
	fn := got.Tools[0].Function
	if got.Tools[0].Type != "function" || fn.Name != "calc" || fn.Description != "adds" || !slices.Equal(fn.Parameters.Required, []string{"zeta"}) {
		t.Errorf("tool = %+v", got.Tools[0])
	}
	alpha, _ := fn.Parameters.Properties.Get("alpha")
	mode, _ := fn.Parameters.Properties.Get("mode")
	if !slices.Equal(alpha.Type, api.PropertyType{"integer", "null"}) || !slices.Equal(mode.Enum, []any{"fast", "exact"}) {
		t.Errorf("alpha %+v, mode %+v", alpha, mode)
	}
	if !strings.Contains(body, `"items":{"type":"array","items":{"type":"string"}}`) {
		t.Errorf("array items lost: %s", body)
	}
	// Messages: the tool call's arguments are an object in the model's
	// order, and the tool result names its call.
	if len(got.Messages) != 4 {
		t.Fatalf("messages = %+v", got.Messages)
	}
	asst, tool := got.Messages[2], got.Messages[3]
	if asst.Thinking != "hmm" || len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "call_7" || asst.ToolCalls[0].Function.Name != "calc" {
		t.Errorf("assistant message = %+v", asst)
	}
	assertOrder(t, body, `"arguments":{"b":2,"a":1}`)
	if tool.Role != "tool" || tool.ToolName != "calc" || tool.ToolCallID != "call_7" || tool.Content != "3" {
		t.Errorf("tool message = %+v", tool)
	}
}

func assertOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Errorf("%s not found in order in %s", p, s)
			return
		}
		at += i + len(p)
	}
}

func TestChatLeavesUnsetOptionsToTheServer(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	for _, key := range []string{`"keep_alive"`, `"think"`, `"tools"`, `"num_ctx"`} {
		if strings.Contains(body, key) {
			t.Errorf("%s sent although unset: %s", key, body)
		}
	}
	if !strings.Contains(body, `"options":null`) {
		t.Errorf("options not left empty: %s", body)
	}
}

func TestThinkOptionForms(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.AddModel(ollamatest.ModelSpec{Name: "gpt-oss", Capabilities: []string{"completion", "thinking"}, Parser: "harmony"})
	srv.On().Reply(et.Think("hmm"), et.Text("ok"))
	e := newEngine(t, srv.URL)
	cases := []struct {
		model, think, wire string
		thinking           string
	}{
		{"qwen3", "true", `"think":true`, "hmm"},
		{"qwen3", "on", `"think":true`, "hmm"},
		{"qwen3", "false", `"think":false`, ""},
		{"qwen3", "off", `"think":false`, ""},
		// Levels are for gpt-oss: a real server refuses them for
		// others, which are asked to think (and told so, see ThinkFor).
		{"gpt-oss", "low", `"think":"low"`, "hmm"},
		{"qwen3", "high", `"think":true`, "hmm"},
	}
	for _, c := range cases {
		before := len(srv.Requests())
		resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: c.model, Messages: ask("x"), Options: engine.Options{Think: c.think}}, nil)
		if err != nil {
			t.Fatalf("think %q: %v", c.think, err)
		}
		reqs := srv.Requests()
		if body := string(reqs[len(reqs)-1].Body); len(reqs) == before || !strings.Contains(body, c.wire) {
			t.Errorf("think %q: body %s lacks %s", c.think, body, c.wire)
		}
		if resp.Message.Thinking != c.thinking {
			t.Errorf("think %q: thinking %q, want %q", c.think, resp.Message.Thinking, c.thinking)
		}
	}
	if sent, note := e.ThinkFor(context.Background(), "qwen3", "high"); sent != "true" || !strings.Contains(note, `qwen3 takes thinking on or off, not a level: think "high" was sent as true`) {
		t.Errorf("qwen3 high: sent %q, note %q", sent, note)
	}
	if sent, note := e.ThinkFor(context.Background(), "gpt-oss", "high"); sent != "high" || note != "" {
		t.Errorf("gpt-oss high: sent %q, note %q", sent, note)
	}
	before := len(srv.Requests())
	_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("x"), Options: engine.Options{Think: "maximum"}}, nil)
	if err == nil || !strings.Contains(err.Error(), `invalid think value "maximum"`) {
		t.Errorf("bad think value: err = %v", err)
	}
	if len(srv.Requests()) != before {
		t.Error("a request with an invalid think value was sent")
	}
}

func TestChatErrorsAreTyped(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("plain", "completion")
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("boom")).Reply(et.Error(500, "llama runner process has terminated: exit status 2"))
	srv.On(et.UserSays("proxy")).Reply(et.ErrorBody(502, "<html>Bad Gateway</html>"))
	srv.On(et.UserSays("late")).Reply(et.Text("half an"), et.Error(500, "runner crashed"))
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.URL)
	tools := []engine.ToolDef{{Name: "calculator"}}

	t.Run("unreachable", func(t *testing.T) {
		closed := ollamatest.ClosedURL(t)
		down := newEngine(t, closed)
		_, err := down.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("hi")}, nil)
		var ue *engine.UnreachableError
		if !errors.As(err, &ue) || !errors.Is(err, engine.ErrUnreachable) {
			t.Fatalf("err = %v (%T), want *engine.UnreachableError", err, err)
		}
		if ue.Host != closed || !strings.Contains(err.Error(), "ollama serve") {
			t.Errorf("message = %q", err)
		}
		if _, err := down.Version(context.Background()); !errors.Is(err, engine.ErrUnreachable) {
			t.Errorf("Version: %v", err)
		}
	})
	t.Run("model not found", func(t *testing.T) {
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3:0.6b", Messages: ask("hi")}, nil)
		var nf *engine.ModelNotFoundError
		if !errors.As(err, &nf) || nf.Model != "qwen3:0.6b" || !strings.Contains(err.Error(), "ollama pull qwen3:0.6b") {
			t.Fatalf("err = %v (%T)", err, err)
		}
	})
	t.Run("tools unsupported", func(t *testing.T) {
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "plain", Messages: ask("hi"), Tools: tools}, nil)
		var tu *engine.ToolsUnsupportedError
		if !errors.As(err, &tu) || tu.Model != "plain" {
			t.Fatalf("err = %v (%T)", err, err)
		}
	})
	t.Run("thinking unsupported", func(t *testing.T) {
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "plain", Messages: ask("hi"), Options: engine.Options{Think: "true"}}, nil)
		var tu *engine.ThinkingUnsupportedError
		if !errors.As(err, &tu) || tu.Model != "plain" {
			t.Fatalf("err = %v (%T)", err, err)
		}
	})
	t.Run("server error", func(t *testing.T) {
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("boom")}, nil)
		var se *engine.ServerError
		if !errors.As(err, &se) || se.Status != 500 || se.Message != "llama runner process has terminated: exit status 2" {
			t.Fatalf("err = %v (%T)", err, err)
		}
	})
	t.Run("error page from a proxy", func(t *testing.T) {
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("proxy")}, nil)
		var se *engine.ServerError
		if !errors.As(err, &se) || se.Status != 502 || se.Message != "<html>Bad Gateway</html>" {
			t.Fatalf("err = %v (%T)", err, err)
		}
	})
	t.Run("error inside the stream", func(t *testing.T) {
		resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("late")}, nil)
		var se *engine.ServerError
		if !errors.As(err, &se) || se.Status != 0 || se.Message != "runner crashed" {
			t.Fatalf("err = %v (%T)", err, err)
		}
		if resp.Message.Content != "half an" {
			t.Errorf("partial content = %q", resp.Message.Content)
		}
	})
	t.Run("tool call with broken arguments in history", func(t *testing.T) {
		msgs := []engine.Message{{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "calc", Arguments: "[1"}}}}
		_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: msgs}, nil)
		if err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestChatDisconnectMidStreamKeepsPartialReply(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.On().Reply(et.Think("let me see"), et.Text("The answer is forty-two.")).DisconnectAfter(5)
	e := newEngine(t, srv.URL)

	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: ask("?")})
	var se *engine.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *engine.StreamError", err, err)
	}
	if resp.Message.Thinking != "let me see" || resp.Message.Content != "The answer" {
		t.Errorf("partial reply = %+v", resp.Message)
	}
	if se.Received != len("The answer") || len(chunks) != 5 {
		t.Errorf("received %d bytes in %d chunks", se.Received, len(chunks))
	}
	if se.Err == nil || !strings.Contains(err.Error(), "partial reply is kept") {
		t.Errorf("message = %q", err)
	}
}

func TestChatDisconnectBeforeAnyChunk(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3")
	srv.On().Reply(et.Disconnect())
	e := newEngine(t, srv.URL)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, nil)
	var se *engine.StreamError
	if !errors.As(err, &se) || se.Received != 0 || resp.Message.Content != "" {
		t.Fatalf("err = %v (%T), content %q", err, err, resp.Message.Content)
	}
}

func TestChatCancelKeepsPartialReply(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3")
	srv.On().Reply(et.Text("I was saying"), et.Hang())
	e := newEngine(t, srv.URL)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got strings.Builder
	resp, err := e.Chat(ctx, engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, func(c engine.Chunk) {
		got.WriteString(c.Content)
		if got.String() == "I was saying" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var se *engine.StreamError
	if errors.As(err, &se) {
		t.Errorf("a cancel reported as a lost connection: %v", err)
	}
	if resp.Message.Content != "I was saying" {
		t.Errorf("partial content = %q", resp.Message.Content)
	}
}

func TestChatDeadlineWhileWaiting(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3")
	srv.On().Reply(et.Hang())
	e := newEngine(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Chat(ctx, engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestGenerate(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.On(et.Endpoint("/api/generate"), et.SystemContains("terse"), et.UserSays("summarize")).
		Reply(et.Think("short"), et.Text("A summary.")).
		Usage(et.Usage{PromptTokens: 12, CompletionTokens: 3, EvalDuration: 30 * time.Millisecond, TotalDuration: 50 * time.Millisecond})
	e := newEngine(t, srv.URL)
	seed := 7
	out, err := e.Generate(context.Background(), engine.GenerateRequest{
		Model: "qwen3", System: "be terse", Prompt: "summarize this", Options: engine.Options{Seed: &seed},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "A summary." || out.Usage.PromptTokens != 12 || out.Usage.OutputTokens != 3 || math.Abs(out.Usage.TokensPerSec-100) > 1e-9 {
		t.Errorf("out = %+v", out)
	}
	req := srv.Requests()[0]
	if req.Generate == nil || req.Generate.Stream == nil || *req.Generate.Stream || req.Generate.Options["seed"] != 7.0 {
		t.Errorf("request = %s", req.Body)
	}

	if _, err := e.Generate(context.Background(), engine.GenerateRequest{Model: "missing", Prompt: "x"}); !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Errorf("missing model: %v", err)
	}
}

func TestCapabilitiesAreCachedPerModel(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "tools", "thinking")
	e := newEngine(t, srv.URL)
	for _, name := range []string{"qwen3", "qwen3:latest", "QWEN3"} {
		caps, err := e.Capabilities(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(caps, []string{"completion", "tools", "thinking"}) {
			t.Errorf("%s: caps = %v", name, caps)
		}
		caps[0] = "scribbled" // the cache must not share the caller's slice
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d /api/show requests for one model, want 1", n)
	}

	_, err := e.Capabilities(context.Background(), "llama3.2")
	if !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Fatalf("err = %v", err)
	}
	srv.Model("llama3.2", "completion") // pulled meanwhile: the failure was not cached
	if caps, err := e.Capabilities(context.Background(), "llama3.2"); err != nil || !slices.Equal(caps, []string{"completion"}) {
		t.Errorf("after pull: %v, %v", caps, err)
	}
}

func TestListModelsAndVersion(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: "qwen3:8b", Capabilities: []string{"completion"}, Size: 5225388164, Family: "qwen3", ParameterSize: "8.2B", Quantization: "Q4_K_M"})
	srv.Model("gemma2")
	srv.SetVersion("0.17.9")
	e := newEngine(t, srv.URL)
	models, err := e.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 {
		t.Fatalf("models = %+v", models)
	}
	m := models[0]
	if m.Name != "qwen3:8b" || m.SizeBytes != 5225388164 || m.Family != "qwen3" || m.ParameterSize != "8.2B" || m.Quantization != "Q4_K_M" || m.ModifiedAt.IsZero() {
		t.Errorf("model = %+v", m)
	}
	if models[1].Name != "gemma2:latest" {
		t.Errorf("second model = %+v", models[1])
	}
	v, err := e.Version(context.Background())
	if err != nil || v != "0.17.9" {
		t.Errorf("version = %q, %v", v, err)
	}
	srv.FailEndpoint("/api/tags", 500, "disk on fire")
	_, err = e.ListModels(context.Background())
	var se *engine.ServerError
	if !errors.As(err, &se) || se.Status != 500 || se.Message != "disk on fire" {
		t.Errorf("err = %v", err)
	}
}

func TestEmbed(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: "nomic-embed-text", Capabilities: []string{"embedding"}, EmbeddingLength: 32})
	e := newEngine(t, srv.URL)
	var emb engine.Embedder = e
	vecs, err := emb.Embed(context.Background(), "nomic-embed-text", []string{"red apples", "green apples"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || !slices.Equal(vecs[0], ollamatest.Embedding("red apples", 32)) {
		t.Fatalf("vectors = %v", vecs)
	}
	var in struct{ Input []string }
	if err := json.Unmarshal(srv.Requests()[0].Body, &in); err != nil || !slices.Equal(in.Input, []string{"red apples", "green apples"}) {
		t.Errorf("input sent = %s", srv.Requests()[0].Body)
	}
	if _, err := emb.Embed(context.Background(), "missing", []string{"x"}); !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Errorf("missing model: %v", err)
	}
}

func TestNewRejectsBadHost(t *testing.T) {
	if _, err := ollama.New("ftp://example.com"); err == nil || !strings.Contains(err.Error(), "http or https") {
		t.Errorf("err = %v", err)
	}
	e, err := ollama.New("localhost:9999")
	if err != nil || e.Host() != "http://localhost:9999" {
		t.Errorf("host = %v, %v", e, err)
	}
}

func newBenchEngine(url string) (*ollama.Engine, error) { return ollama.New(url) }
