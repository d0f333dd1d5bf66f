package openai

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/jarvis-workbench/jarvis/engine"
)

// streamChunk is one server-sent event of a streamed chat completion, as
// the engine decodes it. The SDK's own ChatCompletionChunk keeps metadata
// for every field and costs about 11 µs and 52 allocations per event to
// decode, twice the whole per-token cost of the Ollama engine; these few
// fields are what the engine reads, decoded with encoding/json through the
// SDK's event stream. Tool-call deltas and usage keep the SDK's types:
// they arrive once or a few times per reply.
type streamChunk struct {
	Model   string               `json:"model"`
	Choices []streamChoice       `json:"choices"`
	Usage   *oai.CompletionUsage `json:"usage"`
	// Timings are llama.cpp's own measurements, sent with its last chunks.
	Timings *llamaTimings `json:"timings"`
	// Object and Message carry an error event written in vLLM's older
	// shape ({"object":"error","message":...}), which has no "error" key
	// for the SDK to recognise.
	Object  string `json:"object"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

type streamChoice struct {
	Index        int         `json:"index"`
	Delta        streamDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

// streamDelta holds the reasoning text under both names servers use:
// reasoning_content (llama.cpp, vLLM, DeepSeek) and reasoning (Ollama's
// /v1, OpenRouter, newer vLLM). The SDK has no field for either.
type streamDelta struct {
	Content          string                                       `json:"content"`
	ReasoningContent string                                       `json:"reasoning_content"`
	Reasoning        string                                       `json:"reasoning"`
	ToolCalls        []oai.ChatCompletionChunkChoiceDeltaToolCall `json:"tool_calls"`
}

// thinking is the delta's reasoning text. A server that fills both names
// (for clients of either) sends the same text twice; one is kept.
func (d *streamDelta) thinking() string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
}

// llamaTimings is the "timings" object llama.cpp adds to its final chunk
// and to non-streamed replies.
type llamaTimings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// doneWatcher passes the SDK's event decoder through and notes the
// terminating "[DONE]" event, which the SDK's stream consumes silently:
// without it a stream that ended cleanly and one cut at an event boundary
// would look alike.
type doneWatcher struct {
	ssestream.Decoder
	done bool
}

func (d *doneWatcher) Event() ssestream.Event {
	ev := d.Decoder.Event()
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		d.done = true
	}
	return ev
}

// assembler builds the reply from the stream's chunks: content and
// thinking are passed on as they come; tool calls are assembled by index
// from their deltas and passed on whole, all together, once the choice
// finishes (its finish_reason, or the stream's [DONE]).
type assembler struct {
	onChunk  func(engine.Chunk)
	content  strings.Builder
	thinking strings.Builder
	calls    []*callBuilder
	// slot maps a server's tool-call index to its builder in calls.
	slot map[int64]int

	model     string
	finish    string
	finished  bool // a finish_reason arrived
	delivered bool // the tool calls went to onChunk
	usage     *oai.CompletionUsage
	timings   *llamaTimings
	ids       idSet

	// firstDelta is when the first content, reasoning or tool-call delta
	// arrived: the end of the prompt's processing, as seen from here.
	firstDelta time.Time
}

// callBuilder is one tool call being assembled from its deltas.
type callBuilder struct {
	id, name string
	args     strings.Builder
}

func (a *assembler) add(c *streamChunk) {
	if c.Model != "" {
		a.model = c.Model
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	if c.Timings != nil {
		a.timings = c.Timings
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // one choice is asked for; a second would be noise
		}
		a.delta(&ch.Delta)
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
			a.finished = true
			a.deliverCalls()
		}
	}
}

func (a *assembler) delta(d *streamDelta) {
	out := engine.Chunk{Content: d.Content, Thinking: d.thinking()}
	if out.Content == "" && out.Thinking == "" && len(d.ToolCalls) == 0 {
		return
	}
	if a.firstDelta.IsZero() {
		a.firstDelta = time.Now()
	}
	a.content.WriteString(out.Content)
	a.thinking.WriteString(out.Thinking)
	for i := range d.ToolCalls {
		a.callDelta(&d.ToolCalls[i])
	}
	if a.onChunk != nil && (out.Content != "" || out.Thinking != "") {
		a.onChunk(out)
	}
}

// callDelta adds one tool-call delta. The first delta of a call carries
// its id and name, later ones pieces of its arguments under the same
// index; calls made in parallel may interleave. A delta with a new id at
// an index already taken starts a new call: some servers send every call
// whole at index 0.
func (a *assembler) callDelta(tc *oai.ChatCompletionChunkChoiceDeltaToolCall) {
	idx := max(tc.Index, 0) // -1 is how some servers number a lone call
	pos, ok := a.slot[idx]
	if ok && tc.ID != "" && a.calls[pos].id != "" && a.calls[pos].id != tc.ID {
		ok = false
	}
	if !ok {
		if a.slot == nil {
			a.slot = make(map[int64]int, 2)
		}
		pos = len(a.calls)
		a.slot[idx] = pos
		a.calls = append(a.calls, &callBuilder{})
	}
	b := a.calls[pos]
	if b.id == "" {
		b.id = tc.ID
	}
	// A name arrives whole in the first delta; a server that repeats it
	// in later deltas must not double it.
	if name := tc.Function.Name; name != "" && name != b.name {
		b.name += name
	}
	b.args.WriteString(tc.Function.Arguments)
}

// deliverCalls hands the assembled calls to onChunk, once.
func (a *assembler) deliverCalls() {
	if a.delivered || len(a.calls) == 0 {
		return
	}
	a.delivered = true
	if a.onChunk != nil {
		a.onChunk(engine.Chunk{ToolCalls: a.toolCalls()})
	}
}

// toolCalls returns the assembled calls with their ids made final: the
// server's id, or "call_N" numbered after the calls already in the
// conversation when the server sent none or one the conversation already
// has. The first call fixes them; later calls return the same slice.
func (a *assembler) toolCalls() []engine.ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	ids := &a.ids
	if ids.final != nil {
		return ids.final
	}
	out := make([]engine.ToolCall, len(a.calls))
	for i, b := range a.calls {
		id := b.id
		if id == "" || ids.used(id) {
			id = ids.next()
		} else {
			ids.nextN++
		}
		ids.take(id)
		args := strings.TrimSpace(b.args.String())
		if args == "" {
			args = "{}"
		}
		out[i] = engine.ToolCall{ID: id, Index: i, Name: b.name, Arguments: args}
	}
	ids.final = out
	return out
}

// idSet hands out tool-call ids unique within a conversation.
type idSet struct {
	seen  map[string]bool
	nextN int
	final []engine.ToolCall
}

// newIDSet starts numbering after the calls already in msgs.
func newIDSet(msgs []engine.Message) idSet {
	s := idSet{nextN: 1}
	for i := range msgs {
		for _, tc := range msgs[i].ToolCalls {
			s.take(tc.ID)
			s.nextN++
		}
	}
	return s
}

func (s *idSet) used(id string) bool { return s.seen[id] }

func (s *idSet) take(id string) {
	if s.seen == nil {
		s.seen = make(map[string]bool)
	}
	s.seen[id] = true
}

func (s *idSet) next() string {
	for {
		id := "call_" + strconv.Itoa(s.nextN)
		s.nextN++
		if !s.seen[id] {
			return id
		}
	}
}
