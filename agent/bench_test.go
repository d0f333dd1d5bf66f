package agent

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// streamEngine streams a fixed list of tokens as fast as the agent takes
// them: all that is measured is the agent's own work per token.
type streamEngine struct {
	fakeEngine
	tokens []string
}

func (s *streamEngine) Chat(ctx context.Context, req engine.ChatRequest, onChunk func(engine.Chunk)) (engine.ChatResponse, error) {
	for _, t := range s.tokens {
		onChunk(engine.Chunk{Content: t})
	}
	return engine.ChatResponse{Model: "m", Message: engine.Message{Role: engine.RoleAssistant, Content: "done"}}, nil
}

// BenchmarkAgentLoopPerToken reports the orchestrator's overhead per
// streamed token, with a bus that has one subscriber draining it (as the
// TUI does). Target: under 2µs per token, far below generating one.
func BenchmarkAgentLoopPerToken(b *testing.B) {
	const perRun = 10_000
	tokens := make([]string, perRun)
	for i := range tokens {
		tokens[i] = "tok "
	}
	bus := events.New()
	sub := bus.Subscribe(4096)
	go func() {
		for range sub.C {
		}
	}()
	defer bus.Close()
	eng := &streamEngine{tokens: tokens}
	a, err := New(Orchestrator, Config{Engine: eng, Model: "m", Bus: bus})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conv := &Conversation{}
		if _, err := a.Run(context.Background(), conv, "go"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perRun), "ns/token")
}
