package ollama

import (
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
)

// BenchmarkAccumulate is the engine's own share of a chunk's cost: turning
// a decoded chunk into an engine.Chunk, appending it to the reply and
// calling onChunk. The rest (HTTP, JSON decoding) belongs to the client.
// Replies are 20,000 chunks long, as in the flood benchmarks.
func BenchmarkAccumulate(b *testing.B) {
	const replyLen = 20000
	chunk := api.ChatResponse{Model: "qwen3", Message: api.Message{Role: "assistant", Content: " token"}}
	delivered, i := 0, 0
	onChunk := func(engine.Chunk) { delivered++ }
	acc := &accumulator{onChunk: onChunk}
	b.ReportAllocs()
	for b.Loop() {
		if i++; i%replyLen == 0 {
			acc = &accumulator{onChunk: onChunk}
		}
		_ = acc.add(chunk)
	}
	if delivered != b.N {
		b.Fatalf("%d chunks delivered for %d", delivered, b.N)
	}
}
