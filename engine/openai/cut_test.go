package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/openai"
)

// cuttingServer plays a server that cuts a prompt too long for its window
// and answers the rest as if nothing happened, reporting the prompt it
// kept: Ollama's /v1 (its window on /api/ps) or LM Studio with a
// truncating context policy (its window in /api/v0/models). Every chat
// reports prompt tokens.
func cuttingServer(t *testing.T, owner string, window, prompt int) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"small","object":"model","created":1,"owned_by":%q}]}`, owner)
		case "/api/show":
			fmt.Fprintf(w, `{"capabilities":["completion"],"model_info":{"general.architecture":"qwen3","qwen3.context_length":%d}}`, window)
		case "/api/ps":
			fmt.Fprintf(w, `{"models":[{"name":"small:latest","model":"small:latest","context_length":%d}]}`, window)
		case "/api/v0/models":
			fmt.Fprintf(w, `{"data":[{"id":"small","type":"llm","state":"loaded","max_context_length":32768,"loaded_context_length":%d}]}`, window)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","model":"small","choices":[{"index":0,"delta":{"role":"assistant","content":"An answer to part of it."}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","model":"small","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","model":"small","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":7,"total_tokens":%d}}`+"\n\n", prompt, prompt+7)
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

// A reply whose reported prompt fills the server's window answered a cut
// conversation: it is an error with the sizes, the reply kept beside it,
// never a silent answer. A prompt under the window is an answer.
func TestAPromptThatFillsTheWindowIsACut(t *testing.T) {
	for _, c := range []struct{ name, owner string }{{"Ollama's /v1", "library"}, {"LM Studio", "organization_owner"}} {
		t.Run(c.name, func(t *testing.T) {
			hs := cuttingServer(t, c.owner, 2048, 2048)
			eng, err := openai.New(hs.URL + "/v1")
			if err != nil {
				t.Fatal(err)
			}
			resp, err := eng.Chat(context.Background(), engine.ChatRequest{Model: "small", Messages: []engine.Message{{Role: engine.RoleUser, Content: strings.Repeat("word ", 7000)}}}, nil)
			var overflow *engine.ContextOverflowError
			if !errors.As(err, &overflow) || overflow.Window != 2048 || overflow.PromptTokens != 2048 {
				t.Fatalf("err = %v (%T)", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "a prompt of 2,048 tokens, its whole 2,048-token window for small") || !strings.Contains(msg, "cut the conversation to fit") {
				t.Fatalf("message %q", msg)
			}
			if resp.Message.Content != "An answer to part of it." {
				t.Fatalf("the reply is not kept: %+v", resp.Message)
			}

			fits := cuttingServer(t, c.owner, 2048, 1500)
			eng, _ = openai.New(fits.URL + "/v1")
			if _, err := eng.Chat(context.Background(), engine.ChatRequest{Model: "small", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}, nil); err != nil {
				t.Fatalf("a prompt under the window: %v", err)
			}
		})
	}
}
