package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

func newEngine(t *testing.T, base string, opts ...openai.Option) *openai.Engine {
	t.Helper()
	e, err := openai.New(base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ask(q string) []engine.Message {
	return []engine.Message{{Role: engine.RoleUser, Content: q}}
}

// collect runs Chat and returns the chunks it delivered.
func collect(t *testing.T, ctx context.Context, e *openai.Engine, req engine.ChatRequest) (engine.ChatResponse, []engine.Chunk, error) {
	t.Helper()
	var chunks []engine.Chunk
	resp, err := e.Chat(ctx, req, func(c engine.Chunk) { chunks = append(chunks, c) })
	return resp, chunks, err
}

func deltas(chunks []engine.Chunk) (thinking, content []string) {
	for _, c := range chunks {
		if c.Thinking != "" {
			thinking = append(thinking, c.Thinking)
		}
		if c.Content != "" {
			content = append(content, c.Content)
		}
	}
	return thinking, content
}

func TestChatStreamsThinkingUnderEitherNameAndContent(t *testing.T) {
	for _, tc := range []struct {
		flavor ot.Flavor
		field  string
	}{
		{ot.LlamaCpp, "reasoning_content"}, // llama.cpp, vLLM, DeepSeek
		{ot.OpenAI, "reasoning"},           // OpenRouter; Ollama's /v1 in ollama_v1_test.go
	} {
		t.Run(tc.field, func(t *testing.T) {
			srv := ot.New(t, tc.flavor)
			srv.Model("qwen3")
			srv.On(et.UserSays("capital")).Reply(et.Think("Easy one."), et.Text("The capital is Paris."))
			e := newEngine(t, srv.BaseURL)

			resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: ask("What is the capital of France?")})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(lastBodyOf(t, srv)), `"stream":true`) {
				t.Errorf("request not streamed: %s", lastBodyOf(t, srv))
			}
			thinking, content := deltas(chunks)
			if want := []string{"Easy", " one."}; !slices.Equal(thinking, want) {
				t.Errorf("thinking deltas = %q, want %q", thinking, want)
			}
			if want := []string{"The", " capital", " is", " Paris."}; !slices.Equal(content, want) {
				t.Errorf("content deltas = %q, want %q", content, want)
			}
			for i, c := range chunks {
				if c.Thinking != "" && i >= 2 {
					t.Errorf("thinking %q arrived after content", c.Thinking)
				}
			}
			if resp.Message.Role != engine.RoleAssistant || resp.Message.Content != "The capital is Paris." || resp.Message.Thinking != "Easy one." {
				t.Errorf("message = %+v", resp.Message)
			}
			if resp.DoneReason != "stop" || resp.Model != "qwen3" {
				t.Errorf("done reason %q, model %q", resp.DoneReason, resp.Model)
			}
		})
	}
}

func lastBodyOf(t *testing.T, srv *ot.Server) []byte {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return reqs[len(reqs)-1].Body
}

func TestChatUsageFromTheUsageChunk(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On().Reply(et.Think("hmm"), et.Text("four words of answer")).
		Usage(et.Usage{PromptTokens: 25, CompletionTokens: 7, ReasoningTokens: 3})
	e := newEngine(t, srv.BaseURL)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if u.PromptTokens != 25 || u.OutputTokens != 7 || u.ThinkingTokens != 3 || u.Estimated {
		t.Errorf("usage = %+v", u)
	}
	if u.WallSeconds <= 0 || u.EvalSeconds <= 0 || u.EvalSeconds > u.WallSeconds || u.TokensPerSec <= 0 {
		t.Errorf("durations not measured: %+v", u)
	}
	if math.Abs(u.TokensPerSec-7/u.EvalSeconds) > 1e-6 {
		t.Errorf("tokens/s %v, want output tokens over generation time %v", u.TokensPerSec, 7/u.EvalSeconds)
	}
	var body struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(lastBodyOf(t, srv), &body); err != nil || !body.StreamOptions.IncludeUsage {
		t.Errorf("include_usage not asked for: %s", lastBodyOf(t, srv))
	}
}

func TestChatUsageEstimatedWhenTheServerSendsNone(t *testing.T) {
	srv := ot.New(t, ot.OpenAI)
	srv.Model("gpt-x")
	srv.On().Reply(et.Text(strings.Repeat("abcd ", 20))).NoUsage()
	e := newEngine(t, srv.BaseURL)
	q := strings.Repeat("q", 400)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "gpt-x", Messages: ask(q)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if !u.Estimated || u.PromptTokens != 100 || u.OutputTokens != 25 {
		t.Errorf("usage = %+v, want estimated 100 in, 25 out", u)
	}
	if u.EvalSeconds <= 0 || u.TokensPerSec <= 0 {
		t.Errorf("speed not measured: %+v", u)
	}
}

func TestChatUsesLlamaCppTimings(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.Model("qwen3")
	srv.On().Reply(et.Text("a b c")).ChunkDelay(2 * time.Millisecond)
	e := newEngine(t, srv.BaseURL)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if u.Estimated || u.OutputTokens != 3 || u.TotalSeconds <= 0 || u.EvalSeconds < 0.004 {
		t.Fatalf("usage = %+v", u)
	}
	if math.Abs(u.TokensPerSec-3/u.EvalSeconds) > 0.01*u.TokensPerSec {
		t.Errorf("tokens/s %v, want the server's %v", u.TokensPerSec, 3/u.EvalSeconds)
	}
}

func TestChatAssemblesToolCallArgumentsSplitAcrossChunks(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	args := `{"expression":"15/100*340","note":"a < b & c"}`
	srv.On().Reply(et.Text("Let me compute."), et.ToolCall("calculator", args).WithID("call_srv").InPieces(9))
	e := newEngine(t, srv.BaseURL)
	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: ask("15% of 340"),
		Tools: []engine.ToolDef{{Name: "calculator"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.ToolCall{{ID: "call_srv", Index: 0, Name: "calculator", Arguments: args}}
	if !slices.Equal(resp.Message.ToolCalls, want) || resp.DoneReason != "tool_calls" {
		t.Fatalf("tool calls %+v, done %q", resp.Message.ToolCalls, resp.DoneReason)
	}
	// The call arrives whole, once, after the text.
	var got [][]engine.ToolCall
	for i, c := range chunks {
		if len(c.ToolCalls) > 0 {
			got = append(got, c.ToolCalls)
			if i != len(chunks)-1 {
				t.Errorf("tool calls delivered before the reply finished (chunk %d of %d)", i, len(chunks))
			}
		}
	}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Errorf("tool call chunks = %+v", got)
	}
	// The server did split it.
	if n := len(argumentIndexes(t, rawPost(t, srv.BaseURL+"/chat/completions", lastBodyOf(t, srv)))); n != 9 {
		t.Errorf("%d argument deltas on the wire, want 9", n)
	}
}

func TestChatAssemblesParallelCallsInterleavedByIndex(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.Model("qwen3")
	srv.On().Reply(et.ToolCalls(
		et.ToolCall("calculator", `{"expression":"2+2"}`).InPieces(4),
		et.ToolCall("clock", `{"zone":"Europe/Paris"}`).WithID("").InPieces(5),
		et.ToolCall("file_read", "").WithID("call_1"), // the conversation already has call_1
	))
	e := newEngine(t, srv.BaseURL)
	history := []engine.Message{
		{Role: engine.RoleUser, Content: "time and sums"},
		{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "clock", Arguments: `{}`}}},
		{Role: engine.RoleTool, ToolName: "clock", ToolCallID: "call_1", Content: "12:00"},
	}
	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: history,
		Tools: []engine.ToolDef{{Name: "calculator"}, {Name: "clock"}, {Name: "file_read"}}})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 3 {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].Name != "calculator" || calls[0].Arguments != `{"expression":"2+2"}` || calls[0].ID == "" || calls[0].Index != 0 {
		t.Errorf("first call = %+v", calls[0])
	}
	// No id from the server: numbered after the call already in the
	// conversation; a server id the conversation already has is replaced.
	if calls[1] != (engine.ToolCall{ID: "call_3", Index: 1, Name: "clock", Arguments: `{"zone":"Europe/Paris"}`}) {
		t.Errorf("second call = %+v", calls[1])
	}
	if calls[2] != (engine.ToolCall{ID: "call_4", Index: 2, Name: "file_read", Arguments: `{}`}) {
		t.Errorf("third call = %+v", calls[2])
	}
	n := 0
	for _, c := range chunks {
		if len(c.ToolCalls) > 0 {
			n++
			if !slices.Equal(c.ToolCalls, calls) {
				t.Errorf("delivered %+v", c.ToolCalls)
			}
		}
	}
	if n != 1 {
		t.Errorf("tool calls delivered in %d chunks, want 1", n)
	}
	// The wire really interleaved them: a piece of call 1 comes between
	// two pieces of call 0.
	order := argumentIndexes(t, rawPost(t, srv.BaseURL+"/chat/completions", lastBodyOf(t, srv)))
	if !strings.Contains(fmt.Sprint(order), "0 1 0") {
		t.Errorf("argument pieces by index: %v, want them interleaved", order)
	}
}

func TestChatSendsMessagesToolsAndOptions(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.BaseURL)

	temp, seed := 0.2, 42
	params := &jsonschema.Schema{
		Type:          "object",
		PropertyOrder: []string{"zeta", "alpha", "nested"},
		Properties: map[string]*jsonschema.Schema{
			"zeta":  {Type: "string", Description: "last letter first", MinLength: jsonschema.Ptr(1)},
			"alpha": {Types: []string{"integer", "null"}},
			"nested": {Type: "object", PropertyOrder: []string{"y", "x"}, Properties: map[string]*jsonschema.Schema{
				"y": {Type: "number"}, "x": {Type: "number"},
			}},
		},
		Required: []string{"zeta"},
	}
	msgs := []engine.Message{
		{Role: engine.RoleSystem, Content: "be brief"},
		{Role: engine.RoleUser, Content: "go"},
		{Role: engine.RoleAssistant, Thinking: "secret thoughts", ToolCalls: []engine.ToolCall{{ID: "call_7", Name: "calc", Arguments: `{"b":2,"a":1}`}}},
		{Role: engine.RoleTool, ToolName: "calc", ToolCallID: "call_7", Content: "3"},
		{Role: engine.RoleAssistant, Content: "It is 3."},
		{Role: engine.RoleUser, Content: "and?"},
	}
	_, err := e.Chat(context.Background(), engine.ChatRequest{
		Model: "qwen3", Messages: msgs,
		Tools: []engine.ToolDef{{Name: "calc", Description: "adds", Parameters: params}},
		Options: engine.Options{NumCtx: 8192, NumPredict: 256, Temperature: &temp, Seed: &seed,
			KeepAlive: time.Minute, Think: "high"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := string(lastBodyOf(t, srv))
	got := srv.Chats()[0]
	if got.MaxTokens == nil || *got.MaxTokens != 256 || got.MaxCompletionTokens != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", got.MaxTokens, got.MaxCompletionTokens)
	}
	if got.Temperature == nil || *got.Temperature != 0.2 || got.Seed == nil || *got.Seed != 42 || got.ReasoningEffort != "high" {
		t.Errorf("options = temp %v seed %v effort %q", got.Temperature, got.Seed, got.ReasoningEffort)
	}
	for _, absent := range []string{"num_ctx", "keep_alive", "secret thoughts", "8192"} {
		if strings.Contains(body, absent) {
			t.Errorf("%q sent: %s", absent, body)
		}
	}
	// The schema goes whole and in its declared order.
	assertOrder(t, body, `"zeta":`, `"alpha":`, `"nested":`)
	assertOrder(t, body, `"y":{"type":"number"}`, `"x":{"type":"number"}`)
	if !strings.Contains(body, `"minLength":1`) || !strings.Contains(body, `"required":["zeta"]`) {
		t.Errorf("schema keywords lost: %s", body)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "calc" || got.Tools[0].Function.Description != "adds" {
		t.Errorf("tools = %+v", got.Tools)
	}
	if len(got.Messages) != 6 {
		t.Fatalf("messages = %+v", got.Messages)
	}
	sys, asst, tool, reply := got.Messages[0], got.Messages[2], got.Messages[3], got.Messages[4]
	if sys.Role != "system" || sys.Text() != "be brief" {
		t.Errorf("system message = %+v", sys)
	}
	if asst.Role != "assistant" || len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "call_7" ||
		asst.ToolCalls[0].Type != "function" || asst.ToolCalls[0].Function.Name != "calc" ||
		asst.ToolCalls[0].Function.Arguments != `{"b":2,"a":1}` || asst.Content != nil {
		t.Errorf("assistant message with the call = %+v (content %s)", asst, asst.Content)
	}
	if tool.Role != "tool" || tool.ToolCallID != "call_7" || tool.Text() != "3" {
		t.Errorf("tool message = %+v", tool)
	}
	if reply.Role != "assistant" || reply.Text() != "It is 3." {
		t.Errorf("assistant reply = %+v", reply)
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

func TestThinkOption(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.BaseURL)
	for _, c := range []struct{ think, effort string }{
		{"", ""}, {"true", ""}, {"false", ""}, {"on", ""}, {"off", ""},
		{"low", "low"}, {"Medium", "medium"}, {"high", "high"},
	} {
		if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("x"), Options: engine.Options{Think: c.think}}, nil); err != nil {
			t.Fatalf("think %q: %v", c.think, err)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Chat.ReasoningEffort != c.effort {
			t.Errorf("think %q: reasoning_effort %q, want %q", c.think, got.Chat.ReasoningEffort, c.effort)
		}
		if c.effort == "" && strings.Contains(string(got.Body), "reasoning_effort") {
			t.Errorf("think %q: reasoning_effort sent: %s", c.think, got.Body)
		}
	}
	before := len(srv.Requests())
	_, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen3", Messages: ask("x"), Options: engine.Options{Think: "maximum"}}, nil)
	if err == nil || !strings.Contains(err.Error(), `invalid think value "maximum"`) {
		t.Errorf("bad think value: %v", err)
	}
	if len(srv.Requests()) != before {
		t.Error("a request with an invalid think value was sent")
	}
}

func TestChatLeavesUnsetOptionsToTheServer(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.BaseURL)
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "any", Messages: ask("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	body := string(lastBodyOf(t, srv))
	for _, key := range []string{"max_tokens", "temperature", "seed", "reasoning_effort", "tools"} {
		if strings.Contains(body, `"`+key+`"`) {
			t.Errorf("%s sent although unset: %s", key, body)
		}
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
}

func TestGenerate(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On(et.Streaming(false), et.SystemContains("terse"), et.UserSays("summarize")).
		Reply(et.Think("short"), et.Text("A summary.")).Usage(et.Usage{PromptTokens: 12, CompletionTokens: 3})
	e := newEngine(t, srv.BaseURL)
	seed := 7
	out, err := e.Generate(context.Background(), engine.GenerateRequest{
		Model: "qwen3", System: "be terse", Prompt: "summarize this", Options: engine.Options{Seed: &seed, NumPredict: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "A summary." || out.Model != "qwen3" || out.Usage.PromptTokens != 12 || out.Usage.OutputTokens != 3 || out.Usage.Estimated || out.Usage.WallSeconds <= 0 {
		t.Errorf("out = %+v", out)
	}
	got := srv.Chats()[0]
	if got.Stream || len(got.Messages) != 2 || got.Messages[0].Role != "system" || got.Messages[1].Role != "user" ||
		got.Seed == nil || *got.Seed != 7 || got.MaxTokens == nil || *got.MaxTokens != 50 {
		t.Errorf("request = %s", lastBodyOf(t, srv))
	}

	srv.On(et.UserSays("nothing")).Reply(et.Text("twelve chars")).NoUsage()
	out, err = e.Generate(context.Background(), engine.GenerateRequest{Model: "qwen3", Prompt: "say nothing"})
	if err != nil || !out.Usage.Estimated || out.Usage.OutputTokens != 3 || out.Usage.PromptTokens != 3 {
		t.Errorf("estimated usage = %+v, %v", out.Usage, err)
	}

	_, err = e.Generate(context.Background(), engine.GenerateRequest{Model: "missing", Prompt: "x"})
	if !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Errorf("missing model: %v", err)
	}
}

func TestMaxCompletionTokensWhenTheServerAsks(t *testing.T) {
	srv := ot.New(t, ot.OpenAI)
	srv.Model("o9")
	srv.On(et.Match("max_tokens set", func(c *et.Call) bool { return c.Request.(*ot.Request).Chat.MaxTokens != nil })).Reply(et.ErrorBody(400,
		`{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`))
	srv.On().Reply(et.Text("ok"))
	e := newEngine(t, srv.BaseURL)
	req := engine.ChatRequest{Model: "o9", Messages: ask("hi"), Options: engine.Options{NumPredict: 100}}
	for i := range 2 {
		resp, err := e.Chat(context.Background(), req, nil)
		if err != nil || resp.Message.Content != "ok" {
			t.Fatalf("chat %d: %+v, %v", i, resp.Message, err)
		}
	}
	out, err := e.Generate(context.Background(), engine.GenerateRequest{Model: "o9", Prompt: "x", Options: engine.Options{NumPredict: 100}})
	if err != nil || out.Content != "ok" {
		t.Fatalf("generate: %+v, %v", out, err)
	}
	chats := srv.Chats()
	// One refusal, then max_completion_tokens for every request.
	if len(chats) != 4 || chats[0].MaxTokens == nil {
		t.Fatalf("%d requests", len(chats))
	}
	for _, c := range chats[1:] {
		if c.MaxTokens != nil || c.MaxCompletionTokens == nil || *c.MaxCompletionTokens != 100 {
			t.Errorf("request after the refusal: max_tokens %v, max_completion_tokens %v", c.MaxTokens, c.MaxCompletionTokens)
		}
	}
}
