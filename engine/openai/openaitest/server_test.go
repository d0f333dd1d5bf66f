package openaitest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	return answer(t, resp, err)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	_, body := answer(t, resp, err)
	return body
}

// answer reads a response whole.
func answer(t *testing.T, resp *http.Response, err error) (int, string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestUsageChunkOnlyWhenAskedFor(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("m")
	srv.On().Reply(et.Text("a b"))
	_, plain := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	_, asked := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(plain, `"usage"`) || !strings.Contains(asked, `"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}`) {
		t.Errorf("without include_usage:\n%s\nwith:\n%s", plain, asked)
	}
	for _, s := range []string{plain, asked} {
		if !strings.HasPrefix(s, `data: {"id":"chatcmpl-`) || !strings.HasSuffix(s, "data: [DONE]\n\n") || !strings.Contains(s, `"delta":{"content":"","role":"assistant"}`) {
			t.Errorf("stream framing:\n%s", s)
		}
	}
}

func TestWholeReplyWithToolCallsAndReasoning(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Think("hmm"), et.ToolCall("calc", `{"x":1}`).WithID("c1"))
	status, body := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var resp struct {
		Object  string
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content          *string
				ReasoningContent string `json:"reasoning_content"`
				ToolCalls        []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
		Timings struct {
			PredictedN int `json:"predicted_n"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || status != 200 {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	c := resp.Choices[0]
	if resp.Object != "chat.completion" || c.FinishReason != "tool_calls" || c.Message.Content != nil || c.Message.ReasoningContent != "hmm" ||
		len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].ID != "c1" || c.Message.ToolCalls[0].Function.Arguments != `{"x":1}` ||
		resp.Usage.PromptTokens == 0 || resp.Timings.PredictedN == 0 {
		t.Errorf("reply = %s", body)
	}
}

func TestMountedUnderAnotherServer(t *testing.T) {
	fake := ot.NewHandler(ot.LlamaCpp)
	fake.Model("qwen3:latest")
	fake.On().Reply(et.Text("from the mounted fake"))
	mux := http.NewServeMux()
	mux.Handle("/v1/", fake)
	mux.HandleFunc("/api/version", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"version":"0.17.4"}`) })
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer fake.Close()
	status, body := post(t, hs.URL+"/v1/chat/completions", `{"model":"qwen3:latest","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(body, `"delta":{"content":" mounted"}`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("%d %s", status, body)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("requests = %d", len(fake.Requests()))
	}
}

func TestUnmatchedRequestSaysWhatItAsked(t *testing.T) {
	srv := ot.New(t, ot.OpenAI)
	srv.Model("m")
	srv.On(et.UserSays("weather")).Times(1).Reply(et.Text("sunny"))
	q := `{"model":"m","messages":[{"role":"user","content":"weather?"}]}`
	if status, body := post(t, srv.BaseURL+"/chat/completions", q); status != 200 || !strings.Contains(body, "sunny") {
		t.Fatalf("%d %s", status, body)
	}
	status, body := post(t, srv.BaseURL+"/chat/completions", q)
	if status != 500 || !strings.Contains(body, `no scripted reply matches this request (last message: user: \"weather?\")`) {
		t.Errorf("used-up rule: %d %s", status, body)
	}
	if status, body := post(t, srv.BaseURL+"/chat/completions", `{"model":`); status != 400 || !strings.Contains(body, "invalid JSON") {
		t.Errorf("malformed body: %d %s", status, body)
	}
}

func TestModelEntriesPerFlavor(t *testing.T) {
	for flavor, want := range map[ot.Flavor]string{
		ot.LlamaCpp: `"owned_by":"llamacpp"`,
		ot.VLLM:     `"max_model_len":2048`,
		ot.LMStudio: `"owned_by":"organization_owner"`,
		ot.OpenAI:   `"owned_by":"openai"`,
	} {
		srv := ot.New(t, flavor)
		srv.AddModel(ot.ModelSpec{Name: "m", Window: 2048})
		resp, err := http.Get(srv.BaseURL + "/models")
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), `"object":"list"`) {
			t.Errorf("%s: %s", flavor, b.String())
		}
	}
}

// Each flavor says what the window is where its real server does.
func TestEachFlavorSaysItsWindowWhereTheServerDoes(t *testing.T) {
	spec := ot.ModelSpec{Name: "m", Window: 8192, TrainWindow: 40960}
	llama := ot.New(t, ot.LlamaCpp)
	llama.AddModel(spec)
	if props := get(t, llama.URL+"/props"); !strings.Contains(props, `"default_generation_settings":{"n_ctx":8192,`) {
		t.Errorf("llama.cpp /props: %s", props)
	}
	if models := get(t, llama.BaseURL+"/models"); !strings.Contains(models, `"n_ctx_train":40960`) {
		t.Errorf("llama.cpp /v1/models: %s", models)
	}
	vllm := ot.New(t, ot.VLLM)
	vllm.AddModel(spec)
	if models := get(t, vllm.BaseURL+"/models"); !strings.Contains(models, `"max_model_len":8192`) {
		t.Errorf("vLLM /v1/models: %s", models)
	}
	lms := ot.New(t, ot.LMStudio)
	lms.AddModel(spec)
	lms.AddModel(ot.ModelSpec{Name: "idle", TrainWindow: 32768, NotLoaded: true})
	lms.AddModel(ot.ModelSpec{Name: "embed", Window: 2048, Type: "embeddings"})
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(get(t, lms.URL+"/api/v0/models")), &list); err != nil || len(list.Data) != 3 {
		t.Fatalf("LM Studio /api/v0/models: %v %+v", err, list)
	}
	for i, want := range []map[string]any{
		{"type": "llm", "state": "loaded", "loaded_context_length": 8192.0, "max_context_length": 40960.0},
		{"type": "llm", "state": "not-loaded", "loaded_context_length": nil, "max_context_length": 32768.0},
		{"type": "embeddings", "state": "loaded", "loaded_context_length": 2048.0},
	} {
		for k, v := range want {
			if got := list.Data[i][k]; got != v {
				t.Errorf("LM Studio model %d: %s = %v, want %v", i, k, got, v)
			}
		}
	}
}

// A conversation longer than the window is refused in the flavor's words.
func TestTheWindowIsEnforcedAsTheServerDoes(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.AddModel(ot.ModelSpec{Name: "m", Window: 64})
	srv.On().Reply(et.Text("ok"))
	long := strings.Repeat("word ", 100)
	status, body := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+long+`"}]}`)
	if status != 400 || !strings.Contains(body, `"type":"exceed_context_size_error"`) || !strings.Contains(body, `"n_ctx":64`) ||
		!strings.Contains(body, "exceeds the available context size (64 tokens)") {
		t.Errorf("%d %s", status, body)
	}
	if status, body := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); status != 200 {
		t.Errorf("a short one: %d %s", status, body)
	}
}

// The model's raw text is sent as it is: the stand-in runs none of these
// servers' tool-call parsers.
func TestRawTextIsContent(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("m")
	srv.On().Reply(et.Raw(`<tool_call>{"name": "f"}</tool_call>`))
	_, body := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(body, `"content":"\u003ctool_call\u003e{\"name\": \"f\"}\u003c/tool_call\u003e"`) || strings.Contains(body, `"tool_calls"`) {
		t.Errorf("%s", body)
	}
}

func TestScripts(t *testing.T) {
	sc, err := ot.LoadScript("testdata/llama-server.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ot.Listen("127.0.0.1:0", sc.Flavor, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Flavor() != ot.LlamaCpp || !strings.Contains(get(t, srv.URL+"/props"), `"n_ctx":8192`) {
		t.Errorf("flavor %s", srv.Flavor())
	}
	for _, c := range []struct{ script, want string }{
		{`{"flavor": "ollama"}`, `flavor must be one of llama.cpp, vllm, lmstudio, openai, not "ollama" (Ollama's /v1 is served by the Ollama stand-in)`},
		{`{"flavor": "vllm", "models": [{"window": 5}]}`, "model 1: a name is required"},
		{`{"flavor": "vllm", "models": [{"name": "m", "window": -5}]}`, "model 1 (m): window and train_window must be positive"},
		{`{"flavor": "lmstudio", "models": [{"name": "m", "type": "chat"}]}`, `type must be "llm", "vlm" or "embeddings"`},
		{"{\"flavor\": \"vllm\",\n \"models\": [{\"name\": \"m\", \"windw\": 5}]}", `line 2: unknown field "windw"`},
		{`{"flavor": "vllm", "rules": [{"reply": []}]}`, `rule 1: "reply" needs at least one step`},
	} {
		if _, err := ot.ParseScript([]byte(c.script)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.script, err, c.want)
		}
	}
}
