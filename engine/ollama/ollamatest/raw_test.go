package ollamatest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

const calcTools = `[{"type":"function","function":{"name":"calculator","parameters":{"type":"object","properties":{"expression":{"type":"string"}}}}}]`

func TestARendererModelIsShownAndParsedAsOllamaDoesIt(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{Name: "coder", Capabilities: []string{"completion", "tools"}, Renderer: "qwen3-coder", Parser: "qwen3-coder"})
	srv.On(et.UserSays("2+2")).Reply(et.Raw("Sure.\n<tool_call>\n<function=calculator>\n<parameter=expression>\n2+2\n</parameter>\n</function>\n</tool_call>"))

	// /api/show says what a real server says of a RENDERER model: its
	// template is Ollama's default.
	_, _, body := post(t, srv.URL, "/api/show", `{"model":"coder"}`)
	var shown api.ShowResponse
	if err := json.Unmarshal([]byte(body), &shown); err != nil || shown.Template != "{{ .Prompt }}" {
		t.Errorf("show: %s", body)
	}
	// The renderer's prompt, tools in its own XML.
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"coder","_debug_render_only":true,"messages":[{"role":"user","content":"2+2?"}],"tools":`+calcTools+`}`)
	if !strings.Contains(body, `\u003cfunction\u003e\n\u003cname\u003ecalculator\u003c/name\u003e`) || !strings.Contains(body, `\u003c|im_start|\u003euser\n2+2?`) {
		t.Errorf("rendered: %s", body)
	}
	// What the model writes is read by Ollama's qwen3-coder parser.
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"coder","stream":false,"messages":[{"role":"user","content":"2+2?"}],"tools":`+calcTools+`}`)
	var r api.ChatResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Message.Content != "Sure." || len(r.Message.ToolCalls) != 1 ||
		r.Message.ToolCalls[0].Function.Name != "calculator" || r.Message.ToolCalls[0].Function.Arguments.String() != `{"expression":"2+2"}` {
		t.Errorf("parsed: %s", body)
	}
	// The model's tokens are what it wrote, markup and all.
	if rec := lastRequest(t, srv); rec.EvalTokens != CountTokens("Sure.\n<tool_call>\n<function=calculator>\n<parameter=expression>\n2+2\n</parameter>\n</function>\n</tool_call>") {
		t.Errorf("eval tokens %d", rec.EvalTokens)
	}
}

func TestRawTextIsHeldToNumPredict(t *testing.T) {
	srv := New(t)
	srv.Model("m")
	srv.On().Reply(et.Raw("one two three four five six seven"))
	r := send(t, srv.URL, "/api/chat", api.ChatRequest{Model: "m", Messages: []api.Message{user("go")}, Options: map[string]any{"num_predict": 3}})
	if r.final == nil || r.final.DoneReason != "length" || r.content != cutTokens("one two three four five six seven", 3) || r.final.EvalCount != 3 {
		t.Errorf("%d %s", r.status, r.body)
	}
}

func TestAThinkingLevelIsForHarmonyModelsOnly(t *testing.T) {
	srv := New(t)
	srv.Model("qwen3", "completion", "thinking")
	srv.AddModel(ModelSpec{Name: "gpt-oss", Capabilities: []string{"completion", "thinking"}, Parser: "harmony"})
	srv.On().Reply(et.Think("hm"), et.Text("ok"))
	status, _, body := post(t, srv.URL, "/api/chat", `{"model":"qwen3","think":"high","messages":[{"role":"user","content":"x"}]}`)
	if status != 400 || !strings.Contains(body, `{"error":"think value \"high\" is not supported for this model"}`) {
		t.Errorf("qwen3: %d %s", status, body)
	}
	if status, _, body := post(t, srv.URL, "/api/chat", `{"model":"gpt-oss","think":"high","messages":[{"role":"user","content":"x"}]}`); status != 200 || !strings.Contains(body, `"thinking":"hm"`) {
		t.Errorf("gpt-oss: %d %s", status, body)
	}
}

func TestQwen3ThinkingOfEarlierAnswersIsNotRendered(t *testing.T) {
	srv := New(t)
	srv.AddModel(ModelSpec{Name: "qwen3", Family: "qwen3", Capabilities: []string{"completion"}})
	srv.AddModel(ModelSpec{Name: "other", Family: "llama", Capabilities: []string{"completion"}})
	msgs := `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"<think>secret</think>shown"},{"role":"user","content":"b"}]`
	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"qwen3","_debug_render_only":true,`+msgs+`}`)
	if strings.Contains(body, "secret") || !strings.Contains(body, "assistant: shown") {
		t.Errorf("qwen3: %s", body)
	}
	if _, _, body = post(t, srv.URL, "/api/chat", `{"model":"other","_debug_render_only":true,`+msgs+`}`); !strings.Contains(body, "secret") {
		t.Errorf("another family: %s", body)
	}
}

func TestABrokenCallCannotComeFromOllama(t *testing.T) {
	srv := New(t)
	srv.Model("m", "completion", "tools")
	srv.On().Reply(et.BrokenToolCall("calculator", `{"expression": `))
	status, _, body := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":`+calcTools+`}`)
	if status != 500 || !strings.Contains(body, "Ollama's parsers never send one") {
		t.Errorf("%d %s", status, body)
	}
}
