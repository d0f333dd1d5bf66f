package openai

import (
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/jarvis-workbench/jarvis/engine"
)

// BenchmarkAccumulate is the engine's own share of a chunk's cost: taking a
// decoded chunk, appending it to the reply and calling onChunk. The rest
// (HTTP, event framing, JSON decoding) belongs to the SDK and encoding/json.
// Replies are 20,000 chunks long, as in the flood benchmarks.
func BenchmarkAccumulate(b *testing.B) {
	const replyLen = 20000
	chunk := streamChunk{Model: "qwen3", Choices: []streamChoice{{Delta: streamDelta{Content: " token"}}}}
	delivered, i := 0, 0
	onChunk := func(engine.Chunk) { delivered++ }
	acc := &assembler{onChunk: onChunk}
	b.ReportAllocs()
	for b.Loop() {
		if i++; i%replyLen == 0 {
			acc = &assembler{onChunk: onChunk}
		}
		acc.add(&chunk)
	}
	if delivered != b.N {
		b.Fatalf("%d chunks delivered for %d", delivered, b.N)
	}
}

// BenchmarkDecodeChunk compares decoding one streamed event into the SDK's
// ChatCompletionChunk with decoding it into the engine's streamChunk: the
// reason the engine keeps its own type for the stream's events.
func BenchmarkDecodeChunk(b *testing.B) {
	event := []byte(`{"id":"chatcmpl-0a1b2c3d","object":"chat.completion.chunk","created":1764579267,"model":"qwen3","system_fingerprint":"b6123-0a1b2c3d","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}`)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c oai.ChatCompletionChunk
			if err := json.Unmarshal(event, &c); err != nil || c.Choices[0].Delta.Content != " token" {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c streamChunk
			if err := json.Unmarshal(event, &c); err != nil || c.Choices[0].Delta.Content != " token" {
				b.Fatal(err)
			}
		}
	})
}
