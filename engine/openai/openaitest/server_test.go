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
