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
// of offering /ctx as if it would reload anything.
func TestOverflowOnAFixedWindowServerSaysToRestartIt(t *testing.T) {
	srv := openaitest.New(t, openaitest.LlamaCpp)
	srv.AddModel(openaitest.ModelSpec{Name: "tiny", Window: 2048})
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
	for _, want := range []string{"Shorten the message, or restart the server with a larger window", "llama-server -c N", "tell jarvis its size"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "Raise the window") {
		t.Fatalf("message %q offers to raise the window per request", msg)
	}
	if len(srv.Chats()) != 0 {
		t.Fatal("a request known not to fit was sent")
	}
}
