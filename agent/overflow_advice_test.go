package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	"github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// A server that fixed the window when it loaded the model cannot take a
// larger one with the request: the refusal says how to restart it instead
// of offering /ctx as if it would reload anything, and only when the
// model allows a window the message fits.
func TestOverflowOnAFixedWindowServerSaysToRestartIt(t *testing.T) {
	for _, c := range []struct {
		name    string
		train   int
		restart bool
	}{
		{"the model allows more", 32768, true},
		{"the window is the model's maximum", 2048, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.LlamaCpp)
			srv.AddModel(openaitest.ModelSpec{Name: "tiny", Window: 2048, TrainWindow: c.train})
			eng, err := openai.New(srv.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "tiny"})
			_, err = a.Run(context.Background(), &agent.Conversation{}, words(3000, "huge"))
			var overflow *engine.ContextOverflowError
			if !errors.As(err, &overflow) || overflow.Window != 2048 || overflow.What != "your message" {
				t.Fatalf("err = %v", err)
			}
			msg := err.Error()
			wants := []string{"tiny runs with a 2,048-token window", "Shorten the message"}
			if c.restart {
				wants = append(wants, "Shorten the message or restart the server with a larger window", "llama-server -c N", "tell jarvis its size")
			} else if strings.Contains(msg, "restart the server") {
				t.Fatalf("message %q offers a window the model cannot have", msg)
			}
			for _, want := range wants {
				if !strings.Contains(msg, want) {
					t.Fatalf("message %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "Raise the window") || strings.Contains(msg, "raise the window") {
				t.Fatalf("message %q offers to raise the window per request", msg)
			}
			if len(srv.Chats()) != 0 {
				t.Fatal("a request known not to fit was sent")
			}
		})
	}
}
