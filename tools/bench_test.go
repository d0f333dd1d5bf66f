package tools_test

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

// BenchmarkExecutorThink measures the executor's own overhead per call: the
// think tool does nothing, and the bus has one subscriber draining it. The
// target is under 5µs per call (the reference spends about 1 ms).
func BenchmarkExecutorThink(b *testing.B) {
	bus := events.New()
	sub := bus.Subscribe(1024)
	go func() {
		for range sub.C {
		}
	}()
	defer bus.Close()
	think, _ := compute.NewThink(tools.Deps{})
	e, err := tools.NewExecutor([]tools.Tool{think}, tools.ExecutorOptions{Bus: bus})
	if err != nil {
		b.Fatal(err)
	}
	call := tools.Call{ID: "call_1", Name: "think", Arguments: `{"thought":"Let me break this problem into steps..."}`}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := e.Execute(ctx, call); !r.Success {
			b.Fatal(r.Content)
		}
	}
}

// BenchmarkDescribeTwoTools measures BuildToolDescriptions for calculator
// and think (target under 3µs; the reference spends about 34µs).
func BenchmarkDescribeTwoTools(b *testing.B) {
	calc, _ := compute.NewCalculator(tools.Deps{})
	think, _ := compute.NewThink(tools.Deps{})
	list := []tools.Tool{calc, think}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if tools.BuildToolDescriptions(list, true, false) == "" {
			b.Fatal("empty")
		}
	}
}
