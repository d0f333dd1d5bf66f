package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ollamatest "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	"github.com/jarvis-workbench/jarvis/events"
)

// A real Ollama serves the OpenAI API at /v1 beside its own; its fake does
// too, through Ollama's own translation code. These run this engine and
// the agent loop against it, with the same script an Ollama-engine test
// would use.

func ollamaV1(t *testing.T) *ollamatest.Server {
	t.Helper()
	srv := ollamatest.New(t)
	srv.Model("qwen3", engine.CapCompletion, engine.CapTools, engine.CapThinking)
	srv.Model("nomic-embed-text", engine.CapEmbedding)
	srv.On(et.UserSays("15% of 340")).Reply(
		et.Think("A percentage: the calculator is exact."),
		et.ToolCall("calculator", `{"expression":"15/100*340"}`).WithID("call_calc"))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
	return srv
}

func TestOllamaV1CalculatorRoundTrip(t *testing.T) {
	srv := ollamaV1(t)
	rec := &events.Recorder{}
	res, conv, err := runAgent(t, srv.URL+"/v1", "What is 15% of 340?", rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Turns != 2 || len(res.ToolResults) != 1 || res.ToolResults[0].Content != "51.0" {
		t.Fatalf("result = %+v", res)
	}
	if res.Usage.Estimated || res.Usage.OutputTokens == 0 || res.Usage.PromptTokens == 0 {
		t.Fatalf("usage was not Ollama's own: %+v", res.Usage)
	}
	if !strings.Contains(res.Thinking, "the calculator is exact") {
		t.Fatalf("the reasoning did not arrive: %q", res.Thinking)
	}
	reqs := srv.Requests()
	var v1 []ollamatest.Request
	for _, r := range reqs {
		if r.Path == "/v1/chat/completions" {
			v1 = append(v1, r)
		}
	}
	if len(v1) != 2 || v1[0].Chat == nil || v1[1].Chat == nil {
		t.Fatalf("/v1 requests: %d", len(v1))
	}
	// What the client sent is kept; what Ollama's translation made of it
	// is the /api/chat request the script answered.
	if !strings.Contains(string(v1[1].OpenAIBody), `"tool_call_id":"call_calc"`) {
		t.Fatalf("the tool result went without its call id: %s", v1[1].OpenAIBody)
	}
	msgs := v1[1].Chat.Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_calc" || call.ToolCalls[0].Function.Name != "calculator" {
		t.Fatalf("assistant message with the call = %+v", call)
	}
	if result.Role != "tool" || result.ToolCallID != "call_calc" || result.ToolName != "calculator" || result.Content != "51.0" {
		t.Fatalf("tool message as Ollama read it = %+v", result)
	}
	if last := conv.Messages[len(conv.Messages)-1]; last.Content != "15% of 340 is 51." {
		t.Fatalf("conversation ends with %+v", last)
	}
}

func TestOllamaV1ModelsAndErrors(t *testing.T) {
	srv := ollamaV1(t)
	eng, err := openai.New(srv.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	models, err := eng.ListModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range models {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "nomic-embed-text:latest,qwen3:latest" && strings.Join(names, ",") != "qwen3:latest,nomic-embed-text:latest" {
		t.Fatalf("/v1/models = %v", names)
	}
	if v, err := eng.Version(ctx); err != nil || v != "OpenAI-compatible" {
		t.Fatalf("version = %q, %v", v, err)
	}
	// Ollama's /v1 answers a missing model with its own words, as 404.
	_, err = eng.Chat(ctx, engine.ChatRequest{Model: "absent", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}, nil)
	var missing *engine.ModelNotFoundError
	if !errors.As(err, &missing) || missing.Model != "absent" {
		t.Fatalf("missing model: %v", err)
	}
	// A plain streamed answer, and a whole one.
	srv.On(et.UserSays("hello")).Reply(et.TextChunks("Hello ", "there."))
	var streamed strings.Builder
	resp, err := eng.Chat(ctx, engine.ChatRequest{Model: "qwen3", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hello"}}},
		func(c engine.Chunk) { streamed.WriteString(c.Content) })
	if err != nil || resp.Message.Content != "Hello there." || streamed.String() != "Hello there." || resp.DoneReason != "stop" {
		t.Fatalf("chat: %v %+v %q", err, resp, streamed.String())
	}
	gen, err := eng.Generate(ctx, engine.GenerateRequest{Model: "qwen3", Prompt: "hello"})
	if err != nil || gen.Content != "Hello there." || gen.Usage.Estimated {
		t.Fatalf("generate: %v %+v", err, gen)
	}
	// GET /v1/models/{model} is /api/show's answer as one entry.
	r, _ := httpGet(t, srv.URL+"/v1/models/qwen3")
	if !strings.Contains(r, `"id":"qwen3"`) || !strings.Contains(r, `"owned_by":"library"`) {
		t.Fatalf("/v1/models/qwen3 = %s", r)
	}
	r, status := httpGet(t, srv.URL+"/v1/models/absent")
	if status != 404 || !strings.Contains(r, `model 'absent' not found`) || !strings.Contains(r, `"type":"api_error"`) {
		t.Fatalf("/v1/models/absent = %d %s", status, r)
	}
}

func httpGet(t *testing.T, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// Ollama's /v1 has no truncate switch: a prompt bigger than the window is
// cut by the server without a word, and the usage reports the window's
// worth of prompt (make test-real checks this against a real Ollama). The
// engine, which knows the window from the native API, takes a reported
// prompt that fills the window for the cut it is: an error with the
// sizes, never the answer alone.
func TestOllamaV1SilentCutIsAnError(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: "small", Capabilities: []string{engine.CapCompletion}, ContextLength: 2048})
	srv.Default(et.Text("ok"))
	e, err := openai.New(srv.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "small",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: strings.Repeat("many words here ", 800)}}}, nil)
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) || overflow.Window != 2048 || resp.Usage.PromptTokens != 2048 {
		t.Fatalf("a silent cut was not reported: %+v, %v", resp, err)
	}
	cut := false
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			cut = r.SilentCut() && r.Window == 2048
		}
	}
	if !cut {
		t.Errorf("the stand-in did not cut the prompt silently: %+v", srv.Requests())
	}
}

// An Ollama behind /v1 says nothing there of a model's window or
// abilities; the engine asks its native API on the same host: the
// model's maximum and capabilities from /api/show, the window it loaded
// the model with from /api/ps.
func TestOllamaV1KnowsTheWindowFromTheNativeAPI(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: "small", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 2048})
	srv.Default(et.Text("ok"))
	eng, err := openai.New(srv.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := eng.Show(ctx, "small")
	if err != nil || d.ContextLength != 2048 || !slices.Equal(d.Capabilities, []string{engine.CapCompletion, engine.CapTools}) || d.Window != 0 {
		t.Fatalf("before loading: %+v, %v", d, err)
	}
	if _, err := eng.Chat(ctx, engine.ChatRequest{Model: "small", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := eng.Show(ctx, "small"); d.Window != 2048 || !strings.Contains(d.WindowFrom, "/api/ps") {
		t.Fatalf("after loading: %+v", d)
	}
}

// A question too long for the model's window is refused before it is
// sent, with the real sizes, instead of the silent cut Ollama's /v1
// makes of it.
func TestOllamaV1RefusesWhatItWouldCut(t *testing.T) {
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: "small", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 2048})
	srv.Default(et.Text("ok"))
	eng, _ := openai.New(srv.URL + "/v1")
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "small"})
	res, err := a.Run(context.Background(), &agent.Conversation{}, strings.Repeat("word of the question ", 375)) // 1,500 words
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) || !res.Refused || overflow.Window != 2048 || !strings.Contains(err.Error(), "small runs with a 2,048-token window") {
		t.Fatalf("err = %v, refused %v", err, res.Refused)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			t.Fatal("a question known not to fit was sent")
		}
	}
}

// An embedding model is refused before a chat is sent, with its name.
func TestOllamaV1RefusesAChatToAnEmbeddingModel(t *testing.T) {
	srv := ollamaV1(t)
	eng, _ := openai.New(srv.URL + "/v1")
	_, err := eng.Chat(context.Background(), engine.ChatRequest{Model: "nomic-embed-text", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}, nil)
	var notChat *engine.NotAChatModelError
	if !errors.As(err, &notChat) || notChat.Model != "nomic-embed-text" || !strings.Contains(err.Error(), "is an embedding model") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("err = %v", err)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			t.Fatal("the chat was sent")
		}
	}
	if caps, err := eng.Capabilities(context.Background(), "qwen3"); err != nil || !slices.Equal(caps, []string{engine.CapCompletion, engine.CapTools, engine.CapThinking}) {
		t.Fatalf("qwen3's capabilities: %v, %v", caps, err)
	}
}
