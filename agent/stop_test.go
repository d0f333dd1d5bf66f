package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// A reply cut short says why in Stopped, keeps the model's words as the
// content, and says it after the turn's end: a transcript draws the reply
// whole, then the notice.
func TestCutReplySaysWhyAfterItsTurn(t *testing.T) {
	cases := []struct {
		name       string
		numPredict int
		usage      events.Usage
		want       string
	}{
		{"num_predict", 5, events.Usage{PromptTokens: 10, OutputTokens: 5}, StopLength},
		{"server cap", 0, events.Usage{PromptTokens: 10, OutputTokens: 5}, StopLength},
		{"window full", 0, events.Usage{PromptTokens: 4000, OutputTokens: 96}, StopWindowFull},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := &fakeEngine{reply: func(engine.ChatRequest, int) (engine.ChatResponse, []string, error) {
				r := text("The list: one, two, thr")
				r.DoneReason, r.Usage = "length", c.usage
				return r, nil, nil
			}}
			rec := &events.Recorder{}
			a, err := New(Orchestrator, Config{Engine: eng, Model: "m", Bus: rec, Options: engine.Options{NumPredict: c.numPredict, NumCtx: 4096}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), &Conversation{}, "list")
			if err != nil || res.Stopped != c.want || res.Content != "The list: one, two, thr" {
				t.Fatalf("stopped %q content %q err %v", res.Stopped, res.Content, err)
			}
			var order []events.Type
			for _, e := range rec.Events() {
				if e.Type == events.TurnEnd || e.Type == events.Notice {
					order = append(order, e.Type)
				}
			}
			if len(order) != 2 || order[0] != events.TurnEnd || order[1] != events.Notice {
				t.Fatalf("events %v: the notice must follow the turn's end", order)
			}
		})
	}
}

// A run stopped by the turn limit or the loop guard has no answer: the
// notice is a notice, never the content.
func TestStoppedRunHasNoAnswer(t *testing.T) {
	for _, name := range []string{Orchestrator, ReAct} {
		t.Run(name, func(t *testing.T) {
			eng := &fakeEngine{reply: func(_ engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
				if name == ReAct {
					return text(fmt.Sprintf("Thought: once more\nAction: calculator\nAction Input: {\"expression\":\"%d+1\"}", n)), nil, nil
				}
				r := calls(call(fmt.Sprint("c", n), "calculator", fmt.Sprintf(`{"expression":"%d+1"}`, n)))
				r.Message.Content = "Let me compute that."
				return r, nil, nil
			}}
			res, err := newAgent(t, name, eng, executor(t, nil, nil), nil).Run(context.Background(), &Conversation{}, "loop")
			if err != nil || res.Stopped != StopMaxTurns || res.Content != "" {
				t.Fatalf("stopped %q content %q err %v", res.Stopped, res.Content, err)
			}
			if n := res.Notices[len(res.Notices)-1]; !strings.Contains(n, "Stopped after 5 turns (max_turns)") || !strings.Contains(n, "({{turns}})") {
				t.Fatalf("notice %q", n)
			}
		})
	}
}

// Every turn's thinking is kept, in order.
func TestThinkingOfEveryTurn(t *testing.T) {
	eng := &fakeEngine{reply: func(_ engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			r := calls(call("c1", "calculator", `{"expression":"2+2"}`))
			r.Message.Thinking = "I need the calculator."
			return r, nil, nil
		}
		r := text("4")
		r.Message.Thinking = "The calculator said 4."
		return r, nil, nil
	}}
	res, err := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil).Run(context.Background(), &Conversation{}, "2+2?")
	if err != nil || res.Thinking != "I need the calculator.\n\nThe calculator said 4." {
		t.Fatalf("thinking %q err %v", res.Thinking, err)
	}
}

// An embedding model is refused before anything is sent, by every agent:
// orchestrator does not take it for a model without tools and go on as
// react.
func TestEmbeddingModelIsRefusedBeforeAnythingIsSent(t *testing.T) {
	for _, name := range Names {
		eng := &fakeEngine{caps: []string{engine.CapEmbedding}, reply: func(engine.ChatRequest, int) (engine.ChatResponse, []string, error) {
			return text("never"), nil, nil
		}}
		rec := &events.Recorder{}
		conv := &Conversation{}
		res, err := newAgent(t, name, eng, executor(t, nil, nil), rec).Run(context.Background(), conv, "hi")
		var notChat *engine.NotAChatModelError
		if !errors.As(err, &notChat) || eng.count() != 0 || len(conv.Messages) != 0 || len(res.Notices) != 0 {
			t.Fatalf("%s: err %v, %d requests, %d messages, notices %q", name, err, eng.count(), len(conv.Messages), res.Notices)
		}
	}
}
