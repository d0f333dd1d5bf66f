package ollamatest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// Matcher decides whether a rule answers a request. Matchers look at the
// conversation the request carries (for /api/generate: the system prompt
// and the prompt as a user message), so a script reacts to what was sent,
// not to the order requests happen to arrive in.
type Matcher struct {
	desc  string
	match func(*Request) bool
}

// String describes the matcher, for logs and for the "no rule matched" error.
func (m Matcher) String() string { return m.desc }

// Match builds a matcher from a function; desc appears in logs.
func Match(desc string, fn func(*Request) bool) Matcher {
	return Matcher{desc: desc, match: fn}
}

// UserSays matches when the request's last message is from the user and
// contains substr (case-insensitive): the user has just asked it. It does
// not match once tool results follow the question; see QuestionContains.
func UserSays(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("user says %q", substr), func(r *Request) bool {
		m := r.last()
		return m != nil && m.Role == "user" && strings.Contains(strings.ToLower(m.Content), low)
	})
}

// UserMatches is UserSays with a regular expression (RE2 syntax, matched
// against the message as is). It panics on an invalid pattern, like
// regexp.MustCompile: a broken script should fail where it is written.
func UserMatches(pattern string) Matcher {
	re := regexp.MustCompile(pattern)
	return userMatches(re)
}

func userMatches(re *regexp.Regexp) Matcher {
	return Match(fmt.Sprintf("user matches /%s/", re), func(r *Request) bool {
		m := r.last()
		return m != nil && m.Role == "user" && re.MatchString(m.Content)
	})
}

// QuestionContains matches when the latest user message anywhere in the
// conversation contains substr (case-insensitive), whatever followed it:
// combine it with ToolResult to answer one question's tool result and not
// another's.
func QuestionContains(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("question contains %q", substr), func(r *Request) bool {
		msgs := r.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == "user" {
				return strings.Contains(strings.ToLower(msgs[i].Content), low)
			}
		}
		return false
	})
}

// ToolResult matches when the request's last message is a tool result
// from the named tool ("" = any tool).
func ToolResult(name string) Matcher {
	desc := "tool result"
	if name != "" {
		desc = fmt.Sprintf("tool result from %s", name)
	}
	return Match(desc, func(r *Request) bool {
		m := r.last()
		return m != nil && m.Role == "tool" && (name == "" || m.ToolName == name)
	})
}

// ToolResultContains is ToolResult that also requires the result to contain
// substr (case-insensitive), e.g. to answer a failed call differently.
func ToolResultContains(name, substr string) Matcher {
	low := strings.ToLower(substr)
	inner := ToolResult(name)
	return Match(fmt.Sprintf("%s containing %q", inner.desc, substr), func(r *Request) bool {
		return inner.match(r) && strings.Contains(strings.ToLower(r.last().Content), low)
	})
}

// Turn matches the n-th model turn of a conversation (1 = no assistant
// message yet, 2 = after one assistant message, ...).
func Turn(n int) Matcher {
	return Match(fmt.Sprintf("turn %d", n), func(r *Request) bool { return r.Turn() == n })
}

// ModelIs matches requests for the named model ("qwen3" and
// "qwen3:latest" are the same model).
func ModelIs(name string) Matcher {
	want := normalizeName(name)
	return Match(fmt.Sprintf("model %s", want), func(r *Request) bool {
		return normalizeName(r.model()) == want
	})
}

// OffersTool matches chat requests that offer the named tool natively.
func OffersTool(name string) Matcher {
	return Match(fmt.Sprintf("offers tool %s", name), func(r *Request) bool {
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

// NoTools matches requests that offer no native tools (a text-protocol
// agent, a plain chat, or /api/generate).
func NoTools() Matcher {
	return Match("no tools offered", func(r *Request) bool { return r.Chat == nil || len(r.Chat.Tools) == 0 })
}

// SystemContains matches when a system message (or generate's system
// prompt) contains substr (case-insensitive).
func SystemContains(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("system prompt contains %q", substr), func(r *Request) bool {
		for _, m := range r.Messages() {
			if m.Role == "system" && strings.Contains(strings.ToLower(m.Content), low) {
				return true
			}
		}
		return false
	})
}

// Endpoint matches requests to one endpoint: "/api/chat" or "/api/generate".
func Endpoint(path string) Matcher {
	return Match("endpoint "+path, func(r *Request) bool { return r.Path == path })
}

// Not inverts a matcher.
func Not(m Matcher) Matcher {
	return Match("not ("+m.desc+")", func(r *Request) bool { return !m.match(r) })
}

// AnyOf matches when one of ms does (the matchers given to On must all
// match).
func AnyOf(ms ...Matcher) Matcher {
	descs := make([]string, len(ms))
	for i, m := range ms {
		descs[i] = m.desc
	}
	return Match("("+strings.Join(descs, " or ")+")", func(r *Request) bool {
		for _, m := range ms {
			if m.match(r) {
				return true
			}
		}
		return false
	})
}

type stepKind int

const (
	stepText stepKind = iota
	stepThink
	stepToolCalls
	stepError
	stepDelay
	stepDisconnect
	stepHang
	stepFlood
)

// Step is one part of a scripted reply. A reply is a list of steps played
// in order, then the final done chunk (unless a step ended the reply).
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

type callSpec struct {
	name  string
	args  api.ToolCallFunctionArguments
	id    string
	idSet bool
}

// Text streams content split into word-sized chunks, each with the
// whitespace before it: "It is 51." -> "It", " is", " 51.".
func Text(s string) Step { return Step{kind: stepText, chunks: fakewire.SplitTokens(s)} }

// TextChunks streams content exactly in the chunks given.
func TextChunks(chunks ...string) Step { return Step{kind: stepText, chunks: chunks} }

// Think streams thinking text in word-sized chunks. Like the real server,
// the fake sends no thinking when the request turned thinking off
// ("think": false) or the model has no thinking capability.
func Think(s string) Step { return Step{kind: stepThink, chunks: fakewire.SplitTokens(s)} }

// ToolCall sends one chunk carrying one tool call. args is the JSON object
// of arguments, sent with its keys in the order written ("" for none). The
// call gets an id of the real form ("call_" and 8 characters) unless
// WithID sets one. It panics when args is not a JSON object.
func ToolCall(name, args string) Step {
	a := api.NewToolCallFunctionArguments()
	if strings.TrimSpace(args) != "" {
		if err := a.UnmarshalJSON([]byte(args)); err != nil {
			panic(fmt.Sprintf("ollamatest.ToolCall(%q): arguments must be a JSON object: %v", name, err))
		}
	}
	return Step{kind: stepToolCalls, calls: []callSpec{{name: name, args: a}}}
}

// WithID sets the id of a ToolCall step's call; "" sends the call without
// an id, as some servers and older models do. It panics on other steps.
func (s Step) WithID(id string) Step {
	if s.kind != stepToolCalls || len(s.calls) != 1 {
		panic("ollamatest: WithID applies to a ToolCall step")
	}
	c := s.calls[0]
	c.id, c.idSet = id, true
	s.calls = []callSpec{c}
	return s
}

// ToolCalls sends several tool calls in one chunk (several ToolCall steps
// in a row send one chunk each). It panics when given other steps.
func ToolCalls(calls ...Step) Step {
	out := Step{kind: stepToolCalls}
	for _, c := range calls {
		if c.kind != stepToolCalls {
			panic("ollamatest: ToolCalls takes ToolCall steps")
		}
		out.calls = append(out.calls, c.calls...)
	}
	return out
}

// Error answers with an HTTP error whose body is {"error": message}. Before
// any chunk it is the response's status; after chunks were streamed the
// status is already 200, so like the real server it becomes an
// {"error": message} line that ends the stream.
func Error(status int, message string) Step {
	return Step{kind: stepError, status: status, msg: message}
}

// ErrorBody answers with status and body exactly as given, as text/plain:
// what a proxy in front of the server, or something that is not Ollama,
// would answer. After chunks were streamed the body becomes a line of the
// stream.
func ErrorBody(status int, body string) Step {
	return Step{kind: stepError, status: status, msg: body, raw: true}
}

// Delay pauses before the next step (or the final chunk).
func Delay(d time.Duration) Step { return Step{kind: stepDelay, delay: d} }

// Disconnect drops the connection at this point, without the final chunk
// and without ending the HTTP response properly: a crashed or unplugged
// server as the client sees it.
func Disconnect() Step { return Step{kind: stepDisconnect} }

// Hang stops answering until the client gives up (cancels its request) or
// the server is closed.
func Hang() Step { return Step{kind: stepHang} }

// Flood streams n content tokens, one per chunk, as fast as the
// connection takes them, flushing in bulk rather than per chunk: a load
// generator for benchmarks of everything downstream of the stream. Unlike
// the other steps it is not held to the window or num_predict.
func Flood(n int) Step { return Step{kind: stepFlood, n: n} }

// Rule is a scripted answer: when all its matchers match a chat or
// generate request, its reply is played. Rules are tried in the order they
// were added; the first that matches (and is not used up) answers.
type Rule struct {
	mu              sync.Mutex
	label           string
	when            []Matcher
	steps           []Step
	replyFn         func(*Request) []Step
	times           int
	used            int
	chunkDelay      time.Duration
	disconnectAfter int
	doneReason      string
	metrics         *api.Metrics
}

// Reply sets the steps of the reply.
func (r *Rule) Reply(steps ...Step) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append([]Step(nil), steps...)
	r.replyFn = nil
	return r
}

// ReplyWith computes the steps from each matching request, for replies
// that depend on it (a tool call whose arguments change every turn, an
// answer quoting the tool result). fn runs on the server's goroutine.
func (r *Rule) ReplyWith(fn func(*Request) []Step) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps, r.replyFn = nil, fn
	return r
}

// Times limits the rule to n answers; after that it stops matching and
// later rules get their turn. 0 means no limit.
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

// DisconnectAfter drops the connection right after the n-th chunk, as
// Disconnect does, wherever in the steps that falls.
func (r *Rule) DisconnectAfter(n int) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disconnectAfter = n
	return r
}

// DoneReason sets the final chunk's done_reason ("stop" by default;
// "length" means the reply hit num_predict).
func (r *Rule) DoneReason(reason string) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.doneReason = reason
	return r
}

// Metrics sets the final chunk's metrics exactly, for tests that check
// usage figures. Without it they are measured (see the package doc).
func (r *Rule) Metrics(m api.Metrics) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = &m
	return r
}

// String describes the rule: its label and matchers.
func (r *Rule) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.describe()
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
	replyFn         func(*Request) []Step
	chunkDelay      time.Duration
	disconnectAfter int
	doneReason      string
	metrics         *api.Metrics
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
	return r.plan(), true
}

func (r *Rule) plan() plan {
	return plan{
		label:           r.describe(),
		steps:           r.steps,
		replyFn:         r.replyFn,
		chunkDelay:      r.chunkDelay,
		disconnectAfter: r.disconnectAfter,
		doneReason:      r.doneReason,
		metrics:         r.metrics,
	}
}
