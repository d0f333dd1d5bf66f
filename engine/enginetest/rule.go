package enginetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Rule is a scripted answer: when all its matchers match a call, its
// reply is played. Its methods are safe to call while the server serves.
type Rule struct {
	mu              sync.Mutex
	label           string
	when            []Matcher
	steps           []Step
	replyFn         func(*Call) []Step
	times, used     int
	chunkDelay      time.Duration
	disconnectAfter int
	finishReason    string
	usage           *Usage
	noUsage         bool
	reasoningField  string
}

// Usage is what a reply reports about itself exactly, instead of the
// stand-in's own count: tokens (Ollama's prompt_eval_count and
// eval_count, OpenAI's usage) and, on Ollama's wire and in llama.cpp's
// timings, the durations. A zero duration is sent as zero.
type Usage struct {
	PromptTokens, CompletionTokens, ReasoningTokens int

	TotalDuration, LoadDuration, PromptDuration, EvalDuration time.Duration
}

// set changes the rule under its lock.
func (r *Rule) set(change func()) *Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	change()
	return r
}

// Reply sets the steps of the reply.
func (r *Rule) Reply(steps ...Step) *Rule {
	return r.set(func() { r.steps, r.replyFn = slices.Clone(steps), nil })
}

// ReplyWith computes the steps from each matching call, for replies that
// depend on it (a tool call whose arguments change every turn, an answer
// quoting the tool result). fn runs on the server's goroutine.
func (r *Rule) ReplyWith(fn func(*Call) []Step) *Rule {
	return r.set(func() { r.steps, r.replyFn = nil, fn })
}

// Times limits the rule to n answers; after that it stops matching and
// later rules get their turn. 0 means no limit.
func (r *Rule) Times(n int) *Rule { return r.set(func() { r.times = n }) }

// ChunkDelay waits d before every streamed chunk: a slow model.
func (r *Rule) ChunkDelay(d time.Duration) *Rule { return r.set(func() { r.chunkDelay = d }) }

// DisconnectAfter drops the connection right after the n-th chunk, as
// Disconnect does, wherever in the steps that falls.
func (r *Rule) DisconnectAfter(n int) *Rule { return r.set(func() { r.disconnectAfter = n }) }

// FinishReason sets why the reply ended: Ollama's done_reason, OpenAI's
// finish_reason. By default "stop" (OpenAI: "tool_calls" when the reply
// calls tools); "length" means it hit the output limit.
func (r *Rule) FinishReason(reason string) *Rule { return r.set(func() { r.finishReason = reason }) }

// Usage reports these figures exactly instead of the stand-in's count.
func (r *Rule) Usage(u Usage) *Rule { return r.set(func() { r.usage = &u }) }

// NoUsage sends no usage figures (on OpenAI's wire, no usage chunk nor
// llama.cpp's timings, even when asked; on Ollama's, a final chunk
// without metrics): a server that never reports any.
func (r *Rule) NoUsage() *Rule { return r.set(func() { r.noUsage = true }) }

// ReasoningField sends thinking under this field on OpenAI's wire instead
// of the flavour's ("reasoning_content" or "reasoning"). Ollama's wire has
// one field for it.
func (r *Rule) ReasoningField(name string) *Rule { return r.set(func() { r.reasoningField = name }) }

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

// Plan is the reply a rule chose for one call, copied so it plays without
// holding locks. The stand-ins' wire encoders read it.
type Plan struct {
	// Label names the rule, for the record ("rule 2 (user says ...)").
	Label           string
	Steps           []Step
	ChunkDelay      time.Duration
	DisconnectAfter int
	FinishReason    string
	Usage           *Usage
	NoUsage         bool
	ReasoningField  string
}

// take returns the rule's plan and counts the use when the rule matches c
// and is not used up.
func (r *Rule) take(c *Call) (Plan, bool) {
	r.mu.Lock()
	if r.times > 0 && r.used >= r.times {
		r.mu.Unlock()
		return Plan{}, false
	}
	for _, m := range r.when {
		if !m.match(c) {
			r.mu.Unlock()
			return Plan{}, false
		}
	}
	r.used++
	p := Plan{
		Label: r.describe(), Steps: r.steps, ChunkDelay: r.chunkDelay,
		DisconnectAfter: r.disconnectAfter, FinishReason: r.finishReason,
		Usage: r.usage, NoUsage: r.noUsage, ReasoningField: r.reasoningField,
	}
	fn := r.replyFn
	r.mu.Unlock()
	if fn != nil {
		p.Steps = fn(c)
	}
	return p, true
}

// Scenario is a stand-in's rules: the stand-ins embed it, so a test calls
// srv.On and srv.Default. The zero value has no rules. Safe for
// concurrent use.
type Scenario struct {
	mu       sync.Mutex
	rules    []*Rule
	fallback *Rule
}

// On adds a rule answering the calls that match every matcher (no
// matchers: every call). Set its reply with Reply.
func (s *Scenario) On(matchers ...Matcher) *Rule {
	r := &Rule{when: slices.Clone(matchers)}
	s.Use([]*Rule{r}, nil)
	return r
}

// Default sets the reply for calls no rule matches. Without one, such a
// call gets a 500 whose message says what was asked (see NoMatch).
func (s *Scenario) Default(steps ...Step) *Rule {
	r := &Rule{}
	r.Reply(steps...)
	s.Use(nil, r)
	return r
}

// Use adds rules after those the scenario has (labelled "rule N" by their
// place) and, when fallback is not nil, makes it the default.
func (s *Scenario) Use(rules []*Rule, fallback *Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		s.rules = append(s.rules, r)
		r.mu.Lock()
		r.label = fmt.Sprintf("rule %d", len(s.rules))
		r.mu.Unlock()
	}
	if fallback != nil {
		fallback.mu.Lock()
		fallback.label = "default"
		fallback.mu.Unlock()
		s.fallback = fallback
	}
}

// Pick finds the plan that answers c: the first rule that matches and is
// not used up, else the default; false when there is neither.
func (s *Scenario) Pick(c *Call) (Plan, bool) {
	s.mu.Lock()
	rules, fallback := slices.Clone(s.rules), s.fallback
	s.mu.Unlock()
	for _, r := range rules {
		if p, ok := r.take(c); ok {
			return p, true
		}
	}
	if fallback != nil {
		return fallback.take(c)
	}
	return Plan{}, false
}
