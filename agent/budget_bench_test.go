package agent_test

import (
	"context"
	"math"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

// BenchmarkBudget2000Messages23Tools measures what the Context tab and
// every turn pay to count the next request: a 2,000-message conversation
// (questions, answers, tool calls and results) with the 23 built-in tools.
// Target: under 1 ms.
func BenchmarkBudget2000Messages23Tools(b *testing.B) {
	reg := builtin.Registry(builtin.Deps{})
	var defs []engine.ToolDef
	for _, name := range reg.Names() {
		t, err := reg.Build(name, tools.Deps{})
		if err != nil {
			b.Fatal(err)
		}
		s := t.Spec()
		defs = append(defs, engine.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	if len(defs) < 23 {
		b.Fatalf("%d tools", len(defs))
	}
	msgs := agent.BenchConversation(2000)
	view := agent.NewModelView(stubEngine{}, "qwen3:8b", agent.ViewOptions{NumCtx: 1 << 20})
	in := agent.Request{System: agent.DefaultSystemPrompt, Tools: defs, Messages: msgs}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := view.Prepare(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// stubEngine is never called: the window is set.
type stubEngine struct{ engine.InferenceEngine }

// BenchmarkEstimateErrorAfterOneTurn reports how far the calibrated
// estimate of a request is from the fake server's count, after one turn
// has calibrated it (target: within 10%), over conversations of prose,
// tool calls and results.
func BenchmarkEstimateErrorAfterOneTurn(b *testing.B) {
	var worst float64
	for range b.N {
		srv := ot.New(b)
		srv.AddModel(ot.ModelSpec{Name: "big", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 32768})
		srv.On(et.UserSays("compute")).Reply(et.ToolCall("calculator", `{"expression":"6*7"}`))
		srv.On(et.ToolResult("calculator")).Reply(et.Text("The answer is 42, as the calculator says."))
		srv.Default(et.Text(words(60, "reply")))
		eng, _ := ollama.New(srv.URL)
		view := agent.NewModelView(eng, "big", agent.ViewOptions{NumCtx: 32768})
		calc, _ := compute.NewCalculator(tools.Deps{})
		exec, _ := tools.NewExecutor([]tools.Tool{calc}, tools.ExecutorOptions{})
		a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "big", Executor: exec, View: view})
		conv := &agent.Conversation{}
		for i, q := range []string{"Tell me about gardens. " + words(50, "garden"), "Please compute six times seven.", "And the history of cedar? " + words(80, "cedar")} {
			if _, err := a.Run(context.Background(), conv, q); err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				continue
			}
			est, _ := view.Last()
			reqs := srv.Requests()
			real := reqs[len(reqs)-1].PromptTokens
			worst = max(worst, math.Abs(float64(est.Prompt-real))/float64(real))
		}
		srv.Close()
	}
	b.ReportMetric(worst*100, "worst-error-%")
}
