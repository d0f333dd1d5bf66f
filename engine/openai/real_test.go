//go:build real

package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/internal/realollama"
)

// The OpenAI-compatible engine against a real Ollama's /v1, with scripted
// models (make test-real), and the same questions to the Ollama stand-in,
// whose /v1 is Ollama's own translation code.

func TestRealOllamaV1RoundTripAndThinking(t *testing.T) {
	srv := realollama.Start(t, realollama.Options{Models: []string{"scripted-think"}})
	srv.Create(t, "qwen3", srv.Modelfile(t, "scripted")) // the model runAgent asks for
	res, _, err := runAgent(t, srv.URL+"/v1", "What is 15% of 340?", &events.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || len(res.ToolResults) != 1 || res.ToolResults[0].Content != "51.0" || res.Usage.Estimated {
		t.Fatalf("result = %+v", res)
	}
	// A thinking model's thinking arrives as the reasoning field.
	e := newEngine(t, srv.URL+"/v1")
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "scripted-think",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "hello scripted"}}}, nil)
	if want := srv.Manifest.Scenarios["chat"]["reply.thinking"]; err != nil || resp.Message.Thinking != want || resp.Message.Content != srv.Manifest.Scenarios["chat"]["reply"] {
		t.Errorf("message %+v (thinking wanted %q), %v", resp.Message, want, err)
	}
}

func TestRealOllamaV1WindowAsOnTheStandIn(t *testing.T) {
	real := realollama.Start(t, realollama.Options{Ctx: 2048, Models: []string{"scripted"}})
	stand := real.StandIn(t, "scripted", "completion", "tools")
	stand.Default(et.Text("15% of 340 is 51."))
	long := strings.Repeat("many words here ", 800)
	for _, server := range []struct{ name, url string }{{"real", real.URL}, {"stand-in", stand.URL}} {
		t.Run(server.name, func(t *testing.T) {
			e := newEngine(t, server.url+"/v1")
			// Ollama's /v1 says nothing about the window; its native API
			// on the same host does, and the engine asks it.
			d, err := e.Show(context.Background(), "scripted")
			if err != nil || d.ContextLength != 2048 {
				t.Errorf("shown: %+v, %v", d, err)
			}
			// A prompt bigger than the window is cut by the server without
			// a word: the usage says the model read the window's worth,
			// and the engine reports the cut instead of the answer.
			resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "scripted",
				Messages: []engine.Message{{Role: engine.RoleUser, Content: long}}}, nil)
			var overflow *engine.ContextOverflowError
			if !errors.As(err, &overflow) || overflow.Window != 2048 || resp.Usage.PromptTokens != 2048 {
				t.Errorf("usage %+v, %v: want the cut reported with the 2,048-token window", resp.Usage, err)
			}
		})
	}
}
