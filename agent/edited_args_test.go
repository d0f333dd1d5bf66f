package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
)

// editor approves every call with the expression replaced.
type editor struct{ to string }

func (e editor) Confirm(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
	return tools.AllowOnce, nil
}

func (e editor) Answer(context.Context, tools.ConfirmRequest) (tools.Answer, error) {
	return tools.Answer{Decision: tools.AllowOnce, Arguments: tools.Args{"expression": e.to}}, nil
}

// confirmedCalculator is the calculator made to ask.
func confirmedCalculator(t *testing.T) tools.Tool {
	yes := true
	calc := executor(t, nil, nil).Tools()[0]
	return tools.ApplySettings(calc, tools.Settings{RequiresConfirmation: &yes})
}

// Arguments a person edited are what the model's tool call says, in the
// conversation, in what OnMessage reports (the session) and in the next
// request; the result follows the call.
func TestEditedArgumentsReplaceTheModelsCall(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			return calls(call("c1", "calculator", `{"expression":"1+1"}`)), nil, nil
		}
		return text("done"), nil, nil
	}}
	exec, err := tools.NewExecutor([]tools.Tool{confirmedCalculator(t)}, tools.ExecutorOptions{Confirmer: editor{to: "2+40"}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []Appended
	a, _ := New(Orchestrator, Config{Engine: eng, Model: "m", Executor: exec, OnMessage: func(m Appended) { seen = append(seen, m) }})
	conv := &Conversation{}
	if _, err := a.Run(context.Background(), conv, "1+1?"); err != nil {
		t.Fatal(err)
	}
	msgs := eng.request(1).Messages
	var reply, result engine.Message
	for i, m := range msgs {
		if m.Role == engine.RoleAssistant && len(m.ToolCalls) == 1 {
			reply, result = m, msgs[i+1]
		}
	}
	if got := reply.ToolCalls[0].Arguments; got != `{"expression":"2+40"}` {
		t.Fatalf("the model's call says %s, want the edited arguments", got)
	}
	if result.Role != engine.RoleTool || result.ToolCallID != "c1" || !strings.Contains(result.Content, "42") {
		t.Fatalf("the result after the call is %+v", result)
	}
	if got := seen[1].Message.ToolCalls[0].Arguments; got != `{"expression":"2+40"}` {
		t.Fatalf("OnMessage reported %s", got)
	}
	if seen[2].Message.Role != engine.RoleTool {
		t.Fatalf("the tool result was not reported after the reply: %+v", seen)
	}
}

// In the text protocol the model's words stay, and the observation says
// what ran.
func TestEditedArgumentsAreSaidInTheObservation(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			return text("Action: calculator\nAction Input: {\"expression\":\"1+1\"}"), nil, nil
		}
		return text("Final Answer: 42"), nil, nil
	}}
	exec, err := tools.NewExecutor([]tools.Tool{confirmedCalculator(t)}, tools.ExecutorOptions{Confirmer: editor{to: "2+40"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := New(ReAct, Config{Engine: eng, Model: "m", Executor: exec})
	if _, err := a.Run(context.Background(), &Conversation{}, "1+1?"); err != nil {
		t.Fatal(err)
	}
	obs := lastMessage(eng.request(1)).Content
	if !strings.Contains(obs, `it ran with {"expression":"2+40"}`) || !strings.Contains(obs, "42") {
		t.Fatalf("observation = %q", obs)
	}
}
