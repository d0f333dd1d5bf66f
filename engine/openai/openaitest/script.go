package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// Matcher decides whether a rule answers a request. Matchers look at the
// conversation the request carries, so a script reacts to what was sent,
// not to the order requests happen to arrive in.
type Matcher struct {
	desc  string
	match func(*Request) bool
}

// String describes the matcher, for the "no rule matched" error.
func (m Matcher) String() string { return m.desc }

// Match builds a matcher from a function; desc appears in errors.
func Match(desc string, fn func(*Request) bool) Matcher {
	return Matcher{desc: desc, match: fn}
}

// UserSays matches when the request's last message is from the user and
// contains substr (case-insensitive): the user has just asked it.
func UserSays(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("user says %q", substr), func(r *Request) bool {
		m := r.last()
		return m != nil && m.Role == "user" && strings.Contains(strings.ToLower(m.Text()), low)
	})
}

// ToolResult matches when the request's last message is a tool result
// answering a call to the named tool ("" = any tool). OpenAI's tool
// messages carry only the call's id; the name is found in the assistant
// message that made the call.
func ToolResult(name string) Matcher {
	desc := "tool result"
	if name != "" {
		desc = "tool result from " + name
	}
	return Match(desc, func(r *Request) bool {
		m := r.last()
		return m != nil && m.Role == "tool" && (name == "" || r.ToolName(m.ToolCallID) == name)
	})
}

// Turn matches the n-th model turn of a conversation (1 = no assistant
// message yet, 2 = after one assistant message, ...).
func Turn(n int) Matcher {
	return Match(fmt.Sprintf("turn %d", n), func(r *Request) bool { return r.Turn() == n })
}

// ModelIs matches requests for the named model.
func ModelIs(name string) Matcher {
	return Match("model "+name, func(r *Request) bool { return r.Chat != nil && r.Chat.Model == name })
}

// OffersTool matches requests that offer the named tool.
func OffersTool(name string) Matcher {
	return Match("offers tool "+name, func(r *Request) bool {
		if r.Chat == nil {
			return false
		}
		for _, t := range r.Chat.Tools {
			if t.Function.Name == name {
				return true
			}
		}
		return false
	})
}

// NoTools matches requests that offer no tools.
func NoTools() Matcher {
	return Match("no tools offered", func(r *Request) bool { return r.Chat == nil || len(r.Chat.Tools) == 0 })
}

// SystemContains matches when a system message contains substr
// (case-insensitive).
func SystemContains(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("system prompt contains %q", substr), func(r *Request) bool {
		for _, m := range r.Messages() {
			if m.Role == "system" && strings.Contains(strings.ToLower(m.Text()), low) {
				return true
			}
		}
		return false
	})
}

// Streaming matches streamed requests (true) or whole ones (false).
func Streaming(on bool) Matcher {
	return Match(fmt.Sprintf("stream %v", on), func(r *Request) bool { return r.Chat != nil && r.Chat.Stream == on })
}

type stepKind int

const (
	stepText stepKind = iota
	stepThink
	stepToolCalls
	stepError
	stepRateLimit
	stepDelay
	stepDisconnect
	stepHang
	stepFlood
)

// Step is one part of a scripted reply. A reply is a list of steps played
// in order, then the finishing chunk, the usage chunk and [DONE] (unless a
// step ended the reply).
type Step struct {
	kind   stepKind
	chunks []string
	calls  []callSpec
	status int
	msg    string
	raw    bool
	delay  time.Duration
	n      int
}

// callSpec is one tool call of a ToolCall or ToolCalls step.
type callSpec struct {
	name   string
	args   string
	id     string
	idSet  bool
	pieces int
}

// Text streams content split into word-sized chunks, each with the
// whitespace before it: "It is 51." -> "It", " is", " 51.".
func Text(s string) Step { return Step{kind: stepText, chunks: fakewire.SplitTokens(s)} }

// TextChunks streams content exactly in the chunks given.
func TextChunks(chunks ...string) Step { return Step{kind: stepText, chunks: chunks} }

// Think streams reasoning text in word-sized chunks, under the field the
// server's flavor uses (see Rule.ReasoningField).
func Think(s string) Step { return Step{kind: stepThink, chunks: fakewire.SplitTokens(s)} }

// ToolCall streams one tool call: a first delta with its id and name, then
// its arguments (JSON text, sent as written; "" sends none) in pieces of
// about four characters, as servers stream what the model writes. The call
// gets an id of the server's form unless WithID sets one. It panics when
// args is neither empty nor JSON, which a script must not need (see
// BrokenToolCall).
func ToolCall(name, args string) Step {
	if a := strings.TrimSpace(args); a != "" && !json.Valid([]byte(a)) {
		panic(fmt.Sprintf("openaitest.ToolCall(%q): arguments must be JSON: %q", name, args))
	}
	return BrokenToolCall(name, args)
}

// BrokenToolCall is ToolCall with arguments sent as they are, valid JSON
// or not: a model that wrote a broken call.
func BrokenToolCall(name, args string) Step {
	return Step{kind: stepToolCalls, calls: []callSpec{{name: name, args: args}}}
}

// WithID sets the id of a ToolCall step's call; "" sends the call without
// one, as some servers do. It panics on other steps.
func (s Step) WithID(id string) Step {
	return s.withCall("WithID", func(c *callSpec) { c.id, c.idSet = id, true })
}

// InPieces splits a ToolCall step's arguments into n deltas of about equal
// size. It panics on other steps.
func (s Step) InPieces(n int) Step {
	return s.withCall("InPieces", func(c *callSpec) { c.pieces = n })
}

func (s Step) withCall(what string, set func(*callSpec)) Step {
	if s.kind != stepToolCalls || len(s.calls) != 1 {
		panic("openaitest: " + what + " applies to a ToolCall step")
	}
	c := s.calls[0]
	set(&c)
	s.calls = []callSpec{c}
	return s
}

// ToolCalls streams calls made in parallel: their first deltas one after
// the other (index 0, 1, ...), then their argument pieces interleaved by
// index, as servers that stream parallel calls do. It panics when given
// other steps.
func ToolCalls(calls ...Step) Step {
	out := Step{kind: stepToolCalls}
	for _, c := range calls {
		if c.kind != stepToolCalls {
			panic("openaitest: ToolCalls takes ToolCall steps")
		}
		out.calls = append(out.calls, c.calls...)
	}
	return out
}

// Error answers with an HTTP error in the flavor's error shape. Before any
// chunk it is the response's status; after chunks were streamed the status
// is already 200, so like the real servers it becomes a
// data: {"error": {...}} event that ends the stream.
func Error(status int, message string) Step {
	return Step{kind: stepError, status: status, msg: message}
}

// ErrorBody answers with status and body exactly as given: another shape
// of error, or what a proxy in front of the server would answer. After
// chunks were streamed the body is sent as one data event.
func ErrorBody(status int, body string) Step {
	return Step{kind: stepError, status: status, msg: body, raw: true}
}

// RateLimited answers 429 in OpenAI's words with the wait in a header:
// retry-after in seconds when after is a whole number of them, otherwise
// retry-after-ms. after 0 sends no header.
func RateLimited(after time.Duration) Step { return Step{kind: stepRateLimit, delay: after} }

// OutOfQuota answers 429 as OpenAI does for an account without credit.
func OutOfQuota() Step {
	return Step{kind: stepError, status: 429, raw: true,
		msg: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}
}

// Delay pauses before the next step.
func Delay(d time.Duration) Step { return Step{kind: stepDelay, delay: d} }

// Disconnect drops the connection at this point, without [DONE] and
// without ending the HTTP response properly: a crashed server as the
// client sees it.
func Disconnect() Step { return Step{kind: stepDisconnect} }

// Hang stops answering until the client gives up or the server closes.
func Hang() Step { return Step{kind: stepHang} }

// Flood streams n content tokens as fast as the connection takes them,
// flushing in bulk: a load generator for benchmarks.
func Flood(n int) Step { return Step{kind: stepFlood, n: n} }

// Rule is a scripted answer: when all its matchers match a chat request,
// its reply is played. Rules are tried in the order they were added; the
// first that matches (and is not used up) answers.
type Rule struct {
	mu              sync.Mutex
	label           string
	when            []Matcher
	steps           []Step
	replyFn         func(*Request) []Step
	times, used     int
	chunkDelay      time.Duration
	disconnectAfter int
	finishReason    string
	usage           *Usage
	noUsage         bool
	reasoningField  string
}

// Usage is the token counts a rule reports exactly.
type Usage struct {
	PromptTokens, CompletionTokens, ReasoningTokens int
}

// Reply sets the steps of the reply.
func (r *Rule) Reply(steps ...Step) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps, r.replyFn = append([]Step(nil), steps...), nil
	return r
}

// ReplyWith computes the steps from each matching request.
func (r *Rule) ReplyWith(fn func(*Request) []Step) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps, r.replyFn = nil, fn
	return r
}

// Times limits the rule to n answers; 0 means no limit.
func (r *Rule) Times(n int) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = n
	return r
}

// ChunkDelay waits d before every streamed chunk: a slow model.
func (r *Rule) ChunkDelay(d time.Duration) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunkDelay = d
	return r
}

// DisconnectAfter drops the connection right after the n-th chunk.
func (r *Rule) DisconnectAfter(n int) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disconnectAfter = n
	return r
}

// FinishReason sets the finish_reason ("stop" by default, "tool_calls"
// when the reply calls tools; "length" means it hit max_tokens).
func (r *Rule) FinishReason(reason string) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finishReason = reason
	return r
}

// Usage reports these counts exactly instead of estimating them.
func (r *Rule) Usage(u Usage) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage = &u
	return r
}

// NoUsage sends no usage (nor llama.cpp's timings), even when the request
// asks for it: a server that never reports any.
func (r *Rule) NoUsage() *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noUsage = true
	return r
}

// ReasoningField sends thinking under this field instead of the flavor's
// ("reasoning_content" or "reasoning").
func (r *Rule) ReasoningField(name string) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reasoningField = name
	return r
}

func (r *Rule) describe() string {
	if len(r.when) == 0 {
		if r.label == "default" {
			return r.label
		}
		return r.label + " (any request)"
	}
	descs := make([]string, len(r.when))
	for i, m := range r.when {
		descs[i] = m.desc
	}
	return r.label + " (" + strings.Join(descs, " and ") + ")"
}

// plan is a rule's reply, copied so it plays without holding locks.
type plan struct {
	label           string
	steps           []Step
	chunkDelay      time.Duration
	disconnectAfter int
	finishReason    string
	usage           *Usage
	noUsage         bool
	reasoningField  string
}

// take returns the rule's plan and counts the use when the rule matches
// req and is not used up.
func (r *Rule) take(req *Request) (plan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.times > 0 && r.used >= r.times {
		return plan{}, false
	}
	for _, m := range r.when {
		if !m.match(req) {
			return plan{}, false
		}
	}
	r.used++
	p := plan{
		label: r.describe(), steps: r.steps, chunkDelay: r.chunkDelay,
		disconnectAfter: r.disconnectAfter, finishReason: r.finishReason,
		usage: r.usage, noUsage: r.noUsage, reasoningField: r.reasoningField,
	}
	if r.replyFn != nil {
		p.steps = r.replyFn(req)
	}
	return p, true
}

// pieces splits s into n parts of about equal size (n <= 0: parts of
// about four characters, like tokens), never splitting a UTF-8 sequence;
// a string shorter than n gives fewer parts.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		n = (len(s) + 3) / 4
	}
	var out []string
	start := 0
	for i := 1; i <= n && start < len(s); i++ {
		end := i * len(s) / n
		for end < len(s) && s[end]&0xc0 == 0x80 {
			end++
		}
		if end > start {
			out = append(out, s[start:end])
			start = end
		}
	}
	return out
}
