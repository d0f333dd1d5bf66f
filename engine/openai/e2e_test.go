package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

// These run the real agent loop over this engine against the fake: the
// orchestrator, the executor with the calculator, the OpenAI wire format.

func runAgent(t *testing.T, base, question string, bus events.Publisher) (*agent.Result, *agent.Conversation, error) {
	t.Helper()
	calc, _ := compute.NewCalculator(tools.Deps{})
	exec, err := tools.NewExecutor([]tools.Tool{calc}, tools.ExecutorOptions{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Orchestrator, agent.Config{Engine: newEngine(t, base), Model: "qwen3", Executor: exec, Bus: bus, MaxTurns: 4})
	if err != nil {
		t.Fatal(err)
	}
	conv := &agent.Conversation{}
	res, err := a.Run(context.Background(), conv, question)
	return res, conv, err
}

func TestE2ECalculatorRoundTrip(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.Model("qwen3")
	srv.On(et.UserSays("15% of 340")).Reply(
		et.Think("A percentage: the calculator is exact."),
		et.ToolCall("calculator", `{"expression":"15/100*340"}`).WithID("call_calc").InPieces(5))
	srv.On(et.ToolResult("calculator")).Reply(et.TextChunks("15% of 340 ", "is ", "51."))
	rec := &events.Recorder{}
	res, conv, err := runAgent(t, srv.BaseURL, "What is 15% of 340?", rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Turns != 2 || res.Usage.OutputTokens == 0 || res.Usage.Estimated {
		t.Fatalf("result = %+v", res)
	}
	chats := srv.Chats()
	if len(chats) != 2 || len(chats[0].Tools) != 1 || chats[0].Tools[0].Function.Name != "calculator" {
		t.Fatalf("requests = %+v", chats)
	}
	msgs := chats[1].Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_calc" ||
		call.ToolCalls[0].Function.Arguments != `{"expression":"15/100*340"}` {
		t.Fatalf("assistant message with the call = %+v", call)
	}
	if result.Role != "tool" || result.ToolCallID != "call_calc" || result.Text() != "51.0" {
		t.Fatalf("tool message on the wire = %+v (%s)", result, result.Content)
	}
	var streamed strings.Builder
	for _, e := range rec.Events() {
		if e.Type == events.Token {
			streamed.WriteString(e.Text)
		}
	}
	if streamed.String() != "15% of 340 is 51." {
		t.Fatalf("streamed %q", streamed.String())
	}
	if len(conv.Messages) != 4 || conv.Messages[2].ToolCallID != "call_calc" {
		t.Fatalf("conversation = %+v", conv.Messages)
	}
}

func TestE2EServerRefusingToolsFallsBackToReact(t *testing.T) {
	// llama-server started without --jinja answers tools with a 500.
	srv := ot.New(t, ot.LlamaCpp)
	srv.AddModel(ot.ModelSpec{Name: "qwen3", NoTools: true})
	srv.On(et.UserSays("Observation:"), et.NoTools()).Reply(et.Text("Thought: done\nFinal Answer: 15% of 340 is 51."))
	srv.On(et.UserSays("15% of 340"), et.NoTools()).Reply(et.Text("Thought: use it\nAction: calculator\nAction Input: {\"expression\": \"15/100*340\"}"))
	res, _, err := runAgent(t, srv.BaseURL, "What is 15% of 340?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Agent != agent.ReAct {
		t.Fatalf("result = %+v", res)
	}
	if chats := srv.Chats(); len(chats) != 3 || len(chats[0].Tools) != 1 || len(chats[1].Tools) != 0 {
		t.Fatalf("requests: %d, the first with tools, then none", len(chats))
	}
}
