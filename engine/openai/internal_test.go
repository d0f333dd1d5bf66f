package openai

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	oai "github.com/openai/openai-go/v3"

	"github.com/jarvis-workbench/jarvis/engine"
)

func callDelta(index int64, id, name, args string) streamChunk {
	tc := oai.ChatCompletionChunkChoiceDeltaToolCall{Index: index, ID: id}
	tc.Function.Name, tc.Function.Arguments = name, args
	return streamChunk{Choices: []streamChoice{{Delta: streamDelta{ToolCalls: []oai.ChatCompletionChunkChoiceDeltaToolCall{tc}}}}}
}

func TestAssemblerServerQuirks(t *testing.T) {
	var delivered [][]engine.ToolCall
	a := assembler{onChunk: func(c engine.Chunk) {
		if len(c.ToolCalls) > 0 {
			delivered = append(delivered, c.ToolCalls)
		}
	}, ids: newIDSet(nil)}
	for _, c := range []streamChunk{
		// Every call whole at index 0, told apart by their ids.
		callDelta(0, "a", "clock", `{}`),
		callDelta(0, "b", "calculator", `{"expression":`),
		// A name repeated in a later delta is not doubled.
		callDelta(0, "", "calculator", `"1+1"}`),
		// -1 is how some servers number a lone call: index 0.
		callDelta(-1, "", "", ""),
	} {
		a.add(&c)
	}
	if len(delivered) != 0 {
		t.Fatalf("delivered before the finish: %+v", delivered)
	}
	stop := streamChunk{Choices: []streamChoice{{FinishReason: "tool_calls"}}}
	a.add(&stop)
	a.add(&stop) // a second finish delivers nothing more
	want := []engine.ToolCall{
		{ID: "a", Index: 0, Name: "clock", Arguments: "{}"},
		{ID: "b", Index: 1, Name: "calculator", Arguments: `{"expression":"1+1"}`},
	}
	if len(delivered) != 1 || !slices.Equal(delivered[0], want) || a.finish != "tool_calls" {
		t.Errorf("delivered %+v, finish %q", delivered, a.finish)
	}
}

func TestAssemblerIgnoresOtherChoicesAndKeepsOneReasoning(t *testing.T) {
	var got []engine.Chunk
	a := assembler{onChunk: func(c engine.Chunk) { got = append(got, c) }}
	c := streamChunk{Choices: []streamChoice{
		{Index: 0, Delta: streamDelta{ReasoningContent: "think", Reasoning: "think"}},
		{Index: 1, Delta: streamDelta{Content: "other choice"}},
	}}
	a.add(&c)
	if len(got) != 1 || got[0].Thinking != "think" || got[0].Content != "" || a.thinking.String() != "think" {
		t.Errorf("chunks %+v, thinking %q", got, a.thinking.String())
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    map[string]string
		msg  string
		want time.Duration
	}{
		{map[string]string{"Retry-After-Ms": "250"}, "", 250 * time.Millisecond},
		{map[string]string{"Retry-After": "7"}, "", 7 * time.Second},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, "", 90 * time.Second},
		{nil, "Rate limit reached. Please try again in 2.5s. Visit ...", 2500 * time.Millisecond},
		{nil, "Please try again in 120ms.", 120 * time.Millisecond},
		{map[string]string{"Retry-After": "soon"}, "no figure", 0},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, c.msg, now); got != c.want {
			t.Errorf("%v %q: %v, want %v", c.h, c.msg, got, c.want)
		}
	}
}

func TestParseAPIErrorShapes(t *testing.T) {
	for body, want := range map[string]apiError{
		`{"error":{"code":400,"message":"m1","type":"exceed_context_size_error","n_prompt_tokens":5,"n_ctx":4}}`: {Message: "m1", Type: "exceed_context_size_error", Code: "400", NPromptTokens: 5, NCtx: 4},
		`{"error":{"message":"m2","type":"invalid_request_error","param":null,"code":"model_not_found"}}`:        {Message: "m2", Type: "invalid_request_error", Code: "model_not_found"},
		`{"error":"Unauthorized"}`: {Message: "Unauthorized"},
		`{"object":"error","message":"m3","type":"BadRequestError","param":null,"code":400}`: {Message: "m3", Type: "BadRequestError", Code: "400"},
		`{"detail":"Not Found"}`:      {Message: "Not Found"},
		"<html>\n<b>502</b>\n</html>": {Message: "<html> <b>502</b> </html>"},
		"bad \x1b]0;title\x07 news":   {Message: "bad ]0;title news"},
	} {
		if got := parseAPIError([]byte(body)); got != want {
			t.Errorf("%q: %+v, want %+v", body, got, want)
		}
	}
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'x'
	}
	if got := parseAPIError(long).Message; len(got) > 610 {
		t.Errorf("a page-long message kept %d bytes", len(got))
	}
}

func TestToolSchemaDefaults(t *testing.T) {
	for _, c := range []struct {
		params *jsonschema.Schema
		want   string
	}{
		{nil, `{"properties":{},"type":"object"}`},
		{&jsonschema.Schema{}, `{"properties":{},"type":"object"}`}, // encodes as true
		{&jsonschema.Schema{Type: "object"}, `{"properties":{},"type":"object"}`},
		{&jsonschema.Schema{Required: []string{"a"}, Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}},
			`{"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`},
	} {
		tool, _, err := toTool(engine.ToolDef{Name: "t", Parameters: c.params})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(tool.OfFunction.Function.Parameters)
		if string(got) != c.want {
			t.Errorf("%+v: parameters %s, want %s", c.params, got, c.want)
		}
	}
}
