package ollama_test

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// BenchmarkChatFlood measures a whole streamed reply over loopback: the
// fake server writing NDJSON, the engine's reader decoding it, and the
// engine accumulating and delivering each chunk. ns/chunk is the cost per
// token of everything between the socket and onChunk.
func BenchmarkChatFlood(b *testing.B) {
	const tokens = 20000
	srv := ollamatest.New(b)
	srv.Model("qwen3")
	srv.On().Reply(et.Flood(tokens))
	e, err := newBenchEngine(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	req := engine.ChatRequest{Model: "qwen3", Messages: []engine.Message{{Role: engine.RoleUser, Content: "go"}}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		resp, err := e.Chat(context.Background(), req, func(engine.Chunk) { n++ })
		if err != nil || n != tokens || resp.Usage.OutputTokens != tokens {
			b.Fatalf("err %v, %d chunks, usage %+v", err, n, resp.Usage)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/chunk")
}
