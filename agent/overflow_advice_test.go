package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

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

// A server whose window is smaller than the one jarvis counts with (it
// does not say it: llama.cpp without /props) refuses the first request
// that passes it; jarvis takes the window from the refusal, counts with
// it from then on, and refuses what does not fit with the real sizes.
func TestAServerWithASmallerWindowThanAssumed(t *testing.T) {
	srv := openaitest.New(t, openaitest.LlamaCpp)
	srv.AddModel(openaitest.ModelSpec{Name: "small", Window: 2048, TrainWindow: 40960})
	srv.FailPath("/props", 404)
	srv.On().Reply(et.Text("ok"))
	eng, err := openai.New(srv.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	// A short reply's room, so that a request the server counts past
	// 2,048 tokens still fits jarvis's padded estimate of 4,096.
	view := agent.NewModelView(eng, "small", agent.ViewOptions{NumPredict: 64})
	w, err := view.Window(context.Background())
	if err != nil || w.Tokens != 4096 || !w.Unknown || !strings.Contains(w.Source, "unknown") {
		t.Fatalf("window %+v, %v: want jarvis's assumption, said to be one", w, err)
	}
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "small", View: view, Options: engine.Options{NumPredict: 64}})
	conv := &agent.Conversation{}
	res, err := a.Run(context.Background(), conv, words(2080, "long"))
	var overflow *engine.ContextOverflowError
	if !errors.As(err, &overflow) || !res.Refused || overflow.Window != 2048 {
		t.Fatalf("err = %v, refused %v", err, res.Refused)
	}
	if msg := err.Error(); !strings.Contains(msg, "small runs with a 2,048-token window") || strings.Contains(msg, "4,096") {
		t.Fatalf("the refusal's sizes are not the server's: %q", msg)
	}
	if len(conv.Messages) != 0 {
		t.Fatal("the refused message stayed in the conversation")
	}
	w, _ = view.Window(context.Background())
	if w.Tokens != 2048 {
		t.Fatalf("after the refusal jarvis counts with %+v", w)
	}
	if res, err := a.Run(context.Background(), conv, "And a short one?"); err != nil || res.Content != "ok" || res.Context.Window != 2048 {
		t.Fatalf("a short question after: %v, %+v", err, res)
	}
}
