package enginetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

type stepKind int

const (
	stepText stepKind = iota
	stepThink
	stepToolCalls
	stepRaw
	stepError
	stepDelay
	stepDisconnect
	stepHang
	stepFlood
)

// Step is one part of a scripted reply. A reply is a list of steps played
// in order, then the end of the reply in the wire's format (Ollama's final
// chunk; OpenAI's finishing chunk, usage and [DONE]), unless a step ended
// the reply.
type Step struct {
	kind   stepKind
	chunks []string
	calls  []ScriptedCall
	fail   Failure
	delay  time.Duration
	n      int
}

// ScriptedCall is one tool call of a ToolCall or ToolCalls step.
type ScriptedCall struct {
	Name string
	// Arguments is the JSON text of the arguments as written ("" for
	// none): Ollama's wire sends it as an object with the keys in this
	// order, OpenAI's as this text.
	Arguments string
	// ID is the call's id when HasID (WithID; "" sends none); otherwise
	// the stand-in makes one of its server's form.
	ID    string
	HasID bool
	// Pieces is how many deltas OpenAI's wire streams the arguments in
	// (InPieces); 0 means pieces of about four characters.
	Pieces int
}

// Failure is what an Error, ErrorBody or stand-in specific error step
// answers.
type Failure struct {
	Status int
	// Message is the error's text, sent in the server's error shape;
	// with AsIs the whole body, sent as it is.
	Message string
	AsIs    bool
	// Header is sent with the status (a 429's Retry-After).
	Header http.Header
}

// Text streams content split into word-sized chunks, each with the
// whitespace before it: "It is 51." -> "It", " is", " 51.".
func Text(s string) Step { return Step{kind: stepText, chunks: fakewire.SplitTokens(s)} }

// TextChunks streams content exactly in the chunks given.
func TextChunks(chunks ...string) Step { return Step{kind: stepText, chunks: chunks} }

// Think streams thinking in word-sized chunks. Like the real servers, the
// Ollama stand-in sends none when the request turned thinking off or the
// model cannot think; the OpenAI stand-in sends it under its flavour's
// reasoning field.
func Think(s string) Step { return Step{kind: stepThink, chunks: fakewire.SplitTokens(s)} }

// Raw is what the model itself writes, before the server parses it: tags,
// tool-call markup and all, in word-sized pieces. The Ollama stand-in
// runs it through Ollama's own parsers (the model's PARSER, else the
// thinking tags and the tool-call tag its template implies) exactly as
// the server does, so what reaches the client is what a real server makes
// of that text, including what its parser drops. The OpenAI stand-in
// sends it as content, as those servers do without a tool-call parser.
func Raw(s string) Step { return Step{kind: stepRaw, chunks: fakewire.SplitTokens(s)} }

// RawChunks is Raw in exactly the pieces given: the model's tokens as a
// real server streamed them.
func RawChunks(pieces ...string) Step { return Step{kind: stepRaw, chunks: pieces} }

// ToolCall makes one tool call. args is the JSON object of arguments,
// sent with its keys in the order written ("" for none). The call gets
// an id of the server's form unless WithID sets one. It panics when args
// is not a JSON object, which a script must not need (see
// BrokenToolCall).
func ToolCall(name, args string) Step {
	if a := strings.TrimSpace(args); a != "" && !isObject(a) {
		panic(fmt.Sprintf("enginetest.ToolCall(%q): arguments must be a JSON object: %q", name, args))
	}
	return BrokenToolCall(name, args)
}

// BrokenToolCall is ToolCall with arguments sent as they are, valid JSON
// or not: a model that wrote a broken call, as an OpenAI-compatible
// server passes it on. (Ollama's parsers never yield one: its stand-in
// refuses the step.)
func BrokenToolCall(name, args string) Step {
	return Step{kind: stepToolCalls, calls: []ScriptedCall{{Name: name, Arguments: args}}}
}

func isObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// WithID sets the id of a ToolCall step's call; "" sends the call without
// one, as some servers and older models do. It panics on other steps.
func (s Step) WithID(id string) Step {
	return s.withCall("WithID", func(c *ScriptedCall) { c.ID, c.HasID = id, true })
}

// InPieces streams a ToolCall step's arguments in n deltas of about equal
// size, on the OpenAI-compatible wire (Ollama's sends a call whole). It
// panics on other steps.
func (s Step) InPieces(n int) Step {
	return s.withCall("InPieces", func(c *ScriptedCall) { c.Pieces = n })
}

func (s Step) withCall(what string, set func(*ScriptedCall)) Step {
	if s.kind != stepToolCalls || len(s.calls) != 1 {
		panic("enginetest: " + what + " applies to a ToolCall step")
	}
	c := s.calls[0]
	set(&c)
	s.calls = []ScriptedCall{c}
	return s
}

// ToolCalls makes several calls at once: on Ollama's wire one chunk
// carrying them all (several ToolCall steps in a row send one chunk each);
// on OpenAI's their first deltas in index order, then their argument
// pieces interleaved, as servers that stream parallel calls do. It panics
// when given other steps.
func ToolCalls(calls ...Step) Step {
	out := Step{kind: stepToolCalls}
	for _, c := range calls {
		if c.kind != stepToolCalls {
			panic("enginetest: ToolCalls takes ToolCall steps")
		}
		out.calls = append(out.calls, c.calls...)
	}
	return out
}

// Error answers with an HTTP error in the server's error shape. Before any
// chunk it is the response's status; after chunks were streamed the status
// is already 200, so like the real servers it becomes an error inside the
// stream (Ollama's {"error": ...} line, OpenAI's data: {"error": ...}
// event) that ends it.
func Error(status int, message string) Step {
	return Step{kind: stepError, fail: Failure{Status: status, Message: message}}
}

// ErrorBody answers with status and body exactly as given: another shape
// of error, or what a proxy in front of the server would answer. After
// chunks were streamed the body is sent as a line (or event) of the
// stream.
func ErrorBody(status int, body string) Step {
	return Step{kind: stepError, fail: Failure{Status: status, Message: body, AsIs: true}}
}

// WithHeader adds a header to an Error or ErrorBody step's answer. It
// panics on other steps.
func (s Step) WithHeader(key, value string) Step {
	if s.kind != stepError {
		panic("enginetest: WithHeader applies to an Error or ErrorBody step")
	}
	h := s.fail.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	s.fail.Header = h
	return s
}

// Delay pauses before the next step (or the end of the reply).
func Delay(d time.Duration) Step { return Step{kind: stepDelay, delay: d} }

// Disconnect drops the connection at this point, without the end of the
// reply and without ending the HTTP response properly: a crashed or
// unplugged server as the client sees it.
func Disconnect() Step { return Step{kind: stepDisconnect} }

// Hang stops answering until the client gives up (cancels its request) or
// the server is closed.
func Hang() Step { return Step{kind: stepHang} }

// Flood streams n content tokens, one per chunk, as fast as the
// connection takes them, flushing in bulk rather than per chunk: a load
// generator for benchmarks of everything downstream of the stream. Unlike
// the other steps it is not held to a window or num_predict.
func Flood(n int) Step { return Step{kind: stepFlood, n: n} }
