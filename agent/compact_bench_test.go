package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
)

// BenchConversation is a conversation of n messages for the benchmarks:
// questions, answers, tool calls and their results. It is exported for
// the package's external benchmarks too.
func BenchConversation(n int) []engine.Message {
	msgs := make([]engine.Message, 0, n+3)
	for i := 0; len(msgs) < n; i++ {
		msgs = append(msgs,
			engine.Message{Role: engine.RoleUser, Content: fmt.Sprintf("Question %d: what is %d%% of %d, and why does it matter for the report?", i, i%90, i*7)},
			engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: fmt.Sprint("c", i), Name: "calculator", Arguments: fmt.Sprintf(`{"expression":"%d/100*%d"}`, i%90, i*7)}}},
			engine.Message{Role: engine.RoleTool, ToolName: "calculator", ToolCallID: fmt.Sprint("c", i), Content: fmt.Sprint(float64(i%90*i*7) / 100)},
			engine.Message{Role: engine.RoleAssistant, Content: strings.Repeat("The answer follows from the calculation, and it matters because the totals add up. ", 3)},
		)
	}
	return msgs[:n]
}

// BenchmarkCompactionDecision measures what every turn pays to decide
// whether to compact: the budget of a 2,000-message conversation and the
// plan made from it (where to cut, how long the summary may be), with no
// server call. Target: under 1 ms.
func BenchmarkCompactionDecision(b *testing.B) {
	msgs := BenchConversation(2000)
	view := NewModelView(&fakeEngine{}, "qwen3:8b", ViewOptions{NumCtx: 65536})
	in := Request{System: DefaultSystemPrompt, Messages: msgs}
	ctx := context.Background()
	_, budget, err := view.Prepare(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	if budget.Used() <= DefaultCompactAt {
		b.Fatalf("the conversation takes %.0f%% of the window: not enough to decide anything", budget.Used()*100)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, budget, err := view.Prepare(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if plan, err := view.planCompaction(budget, in.Messages, false); err != nil || plan.split == 0 {
			b.Fatalf("no plan: %v", err)
		}
	}
}
