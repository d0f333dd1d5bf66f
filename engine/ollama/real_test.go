//go:build real

package ollama_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/internal/realollama"
)

// The engine against a real Ollama with scripted models (make test-real),
// and the same questions to the stand-in playing the same model: the
// window the server says and gives, its refusal of a prompt too big, and
// a tool call made by the server's own parser.

func TestRealWindowIsReadFromTheServerAsFromTheStandIn(t *testing.T) {
	real := realollama.Start(t, realollama.Options{Ctx: 2048, Models: []string{"scripted"}})
	stand := real.StandIn(t, "scripted", "completion", "tools")
	stand.Default(et.Text("15% of 340 is 51."))
	ctx := context.Background()
	for _, server := range []struct{ name, url string }{{"real", real.URL}, {"stand-in", stand.URL}} {
		t.Run(server.name, func(t *testing.T) {
			e, err := ollama.New(server.url)
			if err != nil {
				t.Fatal(err)
			}
			d, err := e.Show(ctx, "scripted")
			if err != nil || d.ContextLength != 2048 || d.Family != "llama" {
				t.Fatalf("shown: %+v, %v", d, err)
			}
			// The window a request runs with is its num_ctx, never more
			// than the model's own maximum; the server's default (4096
			// here) is capped too.
			for _, c := range []struct{ numCtx, window int }{{0, 2048}, {1024, 1024}, {8192, 2048}} {
				if _, err := e.Chat(ctx, engine.ChatRequest{Model: "scripted", Messages: []engine.Message{{Role: engine.RoleUser, Content: "hello scripted"}},
					Options: engine.Options{NumCtx: c.numCtx}}, nil); err != nil {
					t.Fatalf("num_ctx %d: %v", c.numCtx, err)
				}
				loaded, err := e.Loaded(ctx)
				if err != nil || len(loaded) != 1 || loaded[0].ContextLength != c.window {
					t.Errorf("num_ctx %d: loaded %+v, %v; want a window of %d", c.numCtx, loaded, err, c.window)
				}
			}
			// A prompt bigger than the window is refused, not cut: the
			// engine sends "truncate": false.
			_, err = e.Chat(ctx, engine.ChatRequest{Model: "scripted", Options: engine.Options{NumCtx: 256},
				Messages: []engine.Message{{Role: engine.RoleUser, Content: strings.Repeat("many words here ", 200)}}}, nil)
			var over *engine.ContextOverflowError
			if !errors.As(err, &over) || !strings.Contains(over.ServerMessage, "the input length exceeds the context length") {
				t.Errorf("too big a prompt: %v (%T)", err, err)
			}
			// The prompt as the server renders it, tools and all.
			p, err := e.RenderPrompt(ctx, engine.ChatRequest{Model: "scripted", Messages: []engine.Message{{Role: engine.RoleUser, Content: "What is 15% of 340?"}},
				Tools: []engine.ToolDef{{Name: "calculator", Description: "math"}}})
			if err != nil || !strings.Contains(p, "<|user|>What is 15% of 340?") || !strings.Contains(p, `<|tools|>[{"type":"function","function":{"name":"calculator"`) {
				t.Errorf("rendered: %q, %v", p, err)
			}
		})
	}
}

func TestRealToolCallThroughTheServersParser(t *testing.T) {
	srv := realollama.Start(t, realollama.Options{Models: []string{"scripted", "scripted-think"}})
	e, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []engine.Chunk
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "scripted-think", Options: engine.Options{Think: "true"},
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "What is 15% of 340?"}},
		Tools:    []engine.ToolDef{{Name: "calculator", Description: "math"}}}, func(c engine.Chunk) { chunks = append(chunks, c) })
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Message
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "calculator" || m.ToolCalls[0].Arguments != `{"expression":"15/100*340"}` || m.ToolCalls[0].ID == "" {
		t.Errorf("calls = %+v", m.ToolCalls)
	}
	if want := srv.Manifest.Scenarios["calc"]["call.thinking"]; m.Thinking != want || m.Content != "" {
		t.Errorf("thinking %q (want %q), content %q", m.Thinking, want, m.Content)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.OutputTokens == 0 || resp.DoneReason != "stop" {
		t.Errorf("usage %+v, done reason %q", resp.Usage, resp.DoneReason)
	}
}
