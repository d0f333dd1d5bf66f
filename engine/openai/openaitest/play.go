package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, rec *Request) {
	start := time.Now()
	var req ChatRequest
	if err := decode(rec.Body, &req); err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid JSON in the request body: "+err.Error())
		return
	}
	s.record(func() { rec.Chat = &req })
	if strings.TrimSpace(req.Model) == "" && s.flavor != LlamaCpp {
		s.writeError(w, http.StatusBadRequest, "you must provide a model parameter")
		return
	}
	m, ok := s.lookup(req.Model)
	if !ok {
		s.refuseModel(w, req.Model)
		return
	}
	if len(req.Tools) > 0 && m.NoTools && s.refuseTools(w, req.Model) {
		return
	}
	prompt := promptTokens(&req)
	maxTokens := 0
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if s.refuseLength(w, m, prompt, maxTokens) {
		return
	}

	pl, found := s.pick(rec)
	if !found {
		s.writeError(w, http.StatusInternalServerError, "openaitest: no scripted reply matches this request ("+describeLast(rec)+"); add a rule with On or a reply with Default")
		return
	}
	s.record(func() { rec.Reply = pl.label })
	p := &player{
		srv: s, w: w, rc: http.NewResponseController(w), r: r, plan: pl,
		model: req.Model, stream: req.Stream, start: start, promptTokens: prompt,
		includeUsage:   !req.Stream || (req.StreamOptions != nil && req.StreamOptions.IncludeUsage),
		reasoningField: s.reasoningField(),
		id:             fmt.Sprintf("chatcmpl-openaitest%d", rec.Seq),
	}
	if pl.reasoningField != "" {
		p.reasoningField = pl.reasoningField
	}
	p.run()
}

// pick finds the rule that answers rec: the first that matches and is not
// used up, else the default.
func (s *Server) pick(rec *Request) (plan, bool) {
	s.mu.Lock()
	rules := slices.Clone(s.rules)
	fallback := s.fallback
	s.mu.Unlock()
	for _, rule := range rules {
		if pl, ok := rule.take(rec); ok {
			return pl, true
		}
	}
	if fallback != nil {
		return fallback.take(rec)
	}
	return plan{}, false
}

func describeLast(rec *Request) string {
	m := rec.last()
	if m == nil {
		return "no messages"
	}
	text := m.Text()
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	if m.Role == "tool" {
		return fmt.Sprintf("last message: tool result for %s: %q", m.ToolCallID, text)
	}
	return fmt.Sprintf("last message: %s: %q", m.Role, text)
}

// promptTokens estimates the prompt: about a quarter of the characters,
// and four tokens of markers per message.
func promptTokens(req *ChatRequest) int {
	n := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		chars := len(m.Text())
		for _, tc := range m.ToolCalls {
			chars += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		n += 4 + (chars+3)/4
	}
	for _, t := range req.Tools {
		n += (len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters) + 3) / 4
	}
	return n
}

// player writes one reply, streamed as server-sent events or whole.
type player struct {
	srv            *Server
	w              http.ResponseWriter
	rc             *http.ResponseController
	r              *http.Request
	plan           plan
	model, id      string
	stream         bool
	includeUsage   bool
	reasoningField string
	start          time.Time
	promptTokens   int

	firstStep time.Time
	sent      int  // deltas written (or gathered)
	thoughts  int  // reasoning deltas among them
	started   bool // the 200 header is out
	ended     bool // the reply stopped early

	// The whole reply, for stream: false.
	content, thought strings.Builder
	calls            []wholeCall
}

type wholeCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chunk is a chat.completion.chunk event, in OpenAI's field order.
type chunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []chunkChoice  `json:"choices"`
	Usage   *usageJSON     `json:"usage,omitempty"`
	Timings map[string]any `json:"timings,omitempty"`
}

// usageJSON is a reply's usage in OpenAI's field order.
type usageJSON struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

func (p *player) run() {
	p.firstStep = time.Now()
	for _, st := range p.plan.steps {
		if p.step(st); p.ended {
			return
		}
	}
	p.finish()
}

func (p *player) step(st Step) {
	switch st.kind {
	case stepText:
		for _, c := range st.chunks {
			if p.emit(map[string]any{"content": c}, func() { p.content.WriteString(c) }); p.ended {
				return
			}
		}
	case stepThink:
		for _, c := range st.chunks {
			p.thoughts++
			if p.emit(map[string]any{p.reasoningField: c}, func() { p.thought.WriteString(c) }); p.ended {
				return
			}
		}
	case stepToolCalls:
		p.toolCalls(st.calls)
	case stepError:
		p.fail(st.status, st.msg, st.raw, nil)
	case stepRateLimit:
		h := http.Header{}
		wait := ""
		if st.delay > 0 {
			wait = st.delay.String()
			if st.delay%time.Second == 0 {
				h.Set("Retry-After", strconv.Itoa(int(st.delay/time.Second)))
			} else {
				h.Set("Retry-After-Ms", strconv.FormatInt(st.delay.Milliseconds(), 10))
			}
		}
		p.fail(http.StatusTooManyRequests, rateLimitBody(p.model, wait), true, h)
	case stepDelay:
		p.wait(st.delay)
	case stepDisconnect:
		p.disconnect()
	case stepHang:
		p.wait(-1)
		p.ended = true
	case stepFlood:
		p.flood(st.n)
	}
}

// toolCalls streams calls made together: first deltas in index order,
// then the argument pieces interleaved.
func (p *player) toolCalls(calls []callSpec) {
	base := len(p.calls)
	parts := make([][]string, len(calls))
	for i, c := range calls {
		id := c.id
		if !c.idSet {
			id = p.srv.nextCallID()
		}
		wc := wholeCall{ID: id, Type: "function"}
		wc.Function.Name, wc.Function.Arguments = c.name, c.args
		p.calls = append(p.calls, wc)
		first := map[string]any{"index": base + i, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}
		if id != "" {
			first["id"] = id
		}
		if p.emit(map[string]any{"tool_calls": []any{first}}, nil); p.ended {
			return
		}
		parts[i] = pieces(c.args, c.pieces)
	}
	for k := 0; ; k++ {
		more := false
		for i := range calls {
			if k >= len(parts[i]) {
				continue
			}
			more = true
			d := map[string]any{"index": base + i, "function": map[string]any{"arguments": parts[i][k]}}
			if p.emit(map[string]any{"tool_calls": []any{d}}, nil); p.ended {
				return
			}
		}
		if !more {
			return
		}
	}
}

func (s *Server) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	switch s.flavor {
	case LlamaCpp:
		return fmt.Sprintf("Xq7wZ%027d", s.calls) // llama.cpp: 32 random letters and digits
	case VLLM:
		return fmt.Sprintf("chatcmpl-tool-%032x", s.calls)
	case Ollama:
		return fmt.Sprintf("call_%08d", s.calls)
	}
	return fmt.Sprintf("call_%024d", s.calls)
}

func (p *player) chunk(delta map[string]any, finish *string) chunk {
	return chunk{ID: p.id, Object: "chat.completion.chunk", Created: p.start.Unix(), Model: p.model,
		Choices: []chunkChoice{{Delta: delta, FinishReason: finish}}}
}

// emit streams one delta (or, not streaming, gathers it with gather).
func (p *player) emit(delta map[string]any, gather func()) {
	if p.plan.chunkDelay > 0 {
		if p.wait(p.plan.chunkDelay); p.ended {
			return
		}
	}
	if !p.stream {
		if gather != nil {
			gather()
		}
	} else if !p.event(p.chunk(delta, nil)) {
		p.ended = true
		return
	}
	p.sent++
	if p.plan.disconnectAfter > 0 && p.sent >= p.plan.disconnectAfter {
		p.disconnect()
	}
}

// event writes one data event; false when the client has gone.
func (p *player) event(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return p.write(append(append([]byte("data: "), b...), '\n', '\n'))
}

// write sends bytes of the 200 event stream. The stream opens with the
// headers and the role delta only when the first event is ready, as the
// servers do: an error before it still gets its own HTTP status.
func (p *player) write(b []byte) bool {
	if !p.started {
		p.w.Header().Set("Content-Type", "text/event-stream")
		p.w.Header().Set("Cache-Control", "no-cache")
		p.w.WriteHeader(http.StatusOK)
		p.started = true
		role, _ := json.Marshal(p.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if _, err := p.w.Write(append(append([]byte("data: "), role...), '\n', '\n')); err != nil {
			return false
		}
	}
	if _, err := p.w.Write(b); err != nil {
		return false
	}
	return p.rc.Flush() == nil
}

// fail ends the reply with an error: the status and body before anything
// was streamed, a data event after.
func (p *player) fail(status int, msg string, raw bool, h http.Header) {
	p.ended = true
	body := []byte(msg)
	if !raw {
		body, _ = json.Marshal(p.srv.errorBody(status, msg))
	}
	if p.started {
		p.write(append(append([]byte("data: "), body...), '\n', '\n'))
		return
	}
	for k, vs := range h {
		p.w.Header()[k] = vs
	}
	ct := "application/json"
	if !json.Valid(body) {
		ct = "text/html; charset=utf-8"
	}
	writeRaw(p.w, status, ct, body)
}

// wait sleeps d (d < 0: until the end), cut short when the client cancels
// or the server closes; either ends the reply.
func (p *player) wait(d time.Duration) {
	if fakewire.Wait(d, p.r.Context().Done(), p.srv.closing) {
		p.ended = true
	}
}

// disconnect drops the connection as a crash would: what was flushed stays
// delivered, the chunked body is never terminated.
func (p *player) disconnect() {
	p.ended = true
	if p.started {
		_ = p.rc.Flush()
	}
	conn, _, err := p.rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// finish ends the reply: the finishing chunk, the usage chunk when asked
// for, and [DONE]; or the whole completion when not streaming.
func (p *player) finish() {
	reason := p.plan.finishReason
	if reason == "" {
		reason = "stop"
		if len(p.calls) > 0 {
			reason = "tool_calls"
		}
	}
	usage, timings := p.usage()
	if !p.stream {
		msg := map[string]any{"role": "assistant", "content": p.content.String()}
		if p.thought.Len() > 0 {
			msg[p.reasoningField] = p.thought.String()
		}
		if len(p.calls) > 0 {
			msg["tool_calls"] = p.calls
			if p.content.Len() == 0 {
				msg["content"] = nil
			}
		}
		resp := map[string]any{"id": p.id, "object": "chat.completion", "created": p.start.Unix(), "model": p.model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": reason}}}
		if usage != nil {
			resp["usage"] = usage
		}
		if timings != nil {
			resp["timings"] = timings
		}
		writeJSON(p.w, http.StatusOK, resp)
		return
	}
	last := p.chunk(map[string]any{}, &reason)
	if p.srv.flavor == LlamaCpp {
		last.Timings = timings // llama.cpp times every final chunk
	}
	if !p.event(last) {
		return
	}
	if usage != nil && p.includeUsage {
		c := chunk{ID: p.id, Object: "chat.completion.chunk", Created: p.start.Unix(), Model: p.model,
			Choices: []chunkChoice{}, Usage: usage, Timings: timings}
		if !p.event(c) {
			return
		}
	}
	p.write([]byte("data: [DONE]\n\n"))
}

// usage is the reply's usage (nil when the rule sends none) and, for
// llama.cpp, its timings.
func (p *player) usage() (*usageJSON, map[string]any) {
	if p.plan.noUsage {
		return nil, nil
	}
	u := Usage{PromptTokens: p.promptTokens, CompletionTokens: max(p.sent, 1), ReasoningTokens: p.thoughts}
	if p.plan.usage != nil {
		u = *p.plan.usage
	}
	usage := &usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.PromptTokens + u.CompletionTokens}
	if u.ReasoningTokens > 0 {
		usage.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{u.ReasoningTokens}
	}
	if p.srv.flavor != LlamaCpp {
		return usage, nil
	}
	now := time.Now()
	promptMS := max(float64(p.firstStep.Sub(p.start).Microseconds())/1e3, 0.001)
	predictedMS := max(float64(now.Sub(p.firstStep).Microseconds())/1e3, 0.001)
	return usage, map[string]any{
		"cache_n": 0, "prompt_n": u.PromptTokens, "prompt_ms": promptMS,
		"prompt_per_token_ms": promptMS / float64(max(u.PromptTokens, 1)),
		"prompt_per_second":   float64(u.PromptTokens) / promptMS * 1e3,
		"predicted_n":         u.CompletionTokens, "predicted_ms": predictedMS,
		"predicted_per_token_ms": predictedMS / float64(max(u.CompletionTokens, 1)),
		"predicted_per_second":   float64(u.CompletionTokens) / predictedMS * 1e3,
	}
}
