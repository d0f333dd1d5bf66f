package ollamatest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// play picks the scripted reply for the request and plays it.
func (s *Server) play(p *player, rec *Request) {
	s.mu.Lock()
	rules := slices.Clone(s.rules)
	fallback := s.fallback
	s.mu.Unlock()
	var pl plan
	found := false
	for _, rule := range rules {
		if pl, found = rule.take(rec); found {
			break
		}
	}
	if !found && fallback != nil {
		pl, found = fallback.take(rec)
	}
	if !found {
		writeError(p.w, http.StatusInternalServerError, "ollamatest: no scripted reply matches this request ("+describeLast(rec)+"); add a rule with On or a reply with Default")
		return
	}
	s.record(func() { rec.Reply = pl.label })
	if pl.replyFn != nil {
		pl.steps = pl.replyFn(rec)
	}
	p.plan, p.rec = pl, rec
	p.run()
	p.settle()
}

// settle records how the reply ended. It runs before the last byte goes
// out (the final chunk, or the dropped connection), so a client that has
// seen the end also sees the record.
func (p *player) settle() {
	p.srv.record(func() {
		p.rec.EvalTokens, p.rec.DoneReason, p.rec.WindowFull = p.generated, p.doneReason, p.full == fullWindow
	})
}

func describeLast(rec *Request) string {
	m := rec.last()
	if m == nil {
		return "no messages"
	}
	text := m.Content
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	if m.Role == "tool" {
		return fmt.Sprintf("last message: tool result from %s: %q", m.ToolName, text)
	}
	return fmt.Sprintf("last message: %s: %q", m.Role, text)
}

// What stopped generation before the script's end.
const (
	fullWindow  = "window"      // prompt and reply filled the window
	fullPredict = "num_predict" // the reply reached num_predict
)

// player writes one reply, streamed as NDJSON or whole.
type player struct {
	srv      *Server
	w        http.ResponseWriter
	rc       *http.ResponseController
	r        *http.Request
	rec      *Request
	plan     plan
	model    string
	stream   bool
	thinking bool
	generate bool
	// shift is the request's shift (true unless sent false): what a full
	// window does to the reply.
	shift bool

	start    time.Time // the request arrived
	ready    time.Time // the model was loaded
	evalTime time.Duration

	promptTokens int
	// room is the tokens the window has left for the reply; predict
	// those num_predict allows (negative: no limit).
	room, predict int
	generated     int    // tokens generated so far
	full          string // fullWindow or fullPredict once generation hit it
	doneReason    string // of the final chunk, once sent

	firstStep time.Time
	sent      int  // chunks written (or gathered, when not streaming)
	started   bool // the 200 header is out
	ended     bool // the reply stopped early (error, drop, cancel)

	// reply is the text generated (thinking and content), what the
	// model holds in its cache afterwards.
	reply strings.Builder
	// The whole reply, for stream=false.
	content, thought strings.Builder
	calls            []api.ToolCall
}

// run plays the steps, then ends the reply: with the final chunk, or,
// when the window filled and the request let the server shift it, by
// dropping the connection mid-reply, as the real server did on a small
// model.
func (p *player) run() {
	p.firstStep = time.Now()
	for _, st := range p.plan.steps {
		p.step(st)
		if p.ended {
			return
		}
		if p.full != "" {
			break
		}
	}
	if p.full == fullWindow && p.shift {
		p.disconnect()
		return
	}
	p.finish()
}

func (p *player) step(st Step) {
	switch st.kind {
	case stepText:
		for _, c := range st.chunks {
			if p.emit(c, "", nil); p.ended || p.full != "" {
				return
			}
		}
	case stepThink:
		if !p.thinking {
			return
		}
		for _, c := range st.chunks {
			if p.emit("", c, nil); p.ended || p.full != "" {
				return
			}
		}
	case stepToolCalls:
		if p.generate {
			return
		}
		calls := make([]api.ToolCall, len(st.calls))
		for i, c := range st.calls {
			calls[i] = api.ToolCall{ID: c.id, Function: api.ToolCallFunction{Index: len(p.calls) + i, Name: c.name, Arguments: c.args}}
			if !c.idSet {
				calls[i].ID = p.srv.nextCallID()
			}
		}
		p.emit("", "", calls)
	case stepError:
		p.fail(st)
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

func (s *Server) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return fmt.Sprintf("call_%08d", s.calls)
}

// limit is how many more tokens the reply may have, and what limits it
// (-1, "" when nothing does).
func (p *player) limit() (int, string) {
	switch {
	case p.predict >= 0 && p.predict-p.generated <= p.room-p.generated:
		return p.predict - p.generated, fullPredict
	default:
		return p.room - p.generated, fullWindow
	}
}

// callTokens is what tool calls cost, rendered as the template renders
// them.
func callTokens(calls []api.ToolCall) int {
	n := 0
	for _, c := range calls {
		s, _ := toolCallJSON(c.Function)
		n += CountTokens(s)
	}
	return n
}

// emit sends (or, not streaming, gathers) one chunk, cut to what the
// window and num_predict leave: the text up to the limit, a tool call not
// at all unless it fits whole.
func (p *player) emit(content, thinking string, calls []api.ToolCall) {
	if p.plan.chunkDelay > 0 {
		if p.wait(p.plan.chunkDelay); p.ended {
			return
		}
	}
	tokens := CountTokens(content) + CountTokens(thinking) + callTokens(calls)
	if left, what := p.limit(); tokens > left {
		left = max(left, 0)
		calls = nil
		if t := CountTokens(thinking); t >= left {
			thinking, content = cutTokens(thinking, left), ""
		} else {
			content = cutTokens(content, left-t)
		}
		tokens = CountTokens(content) + CountTokens(thinking)
		p.full = what
		if content == "" && thinking == "" {
			return
		}
	}
	p.generated += tokens
	p.reply.WriteString(thinking)
	p.reply.WriteString(content)
	p.calls = append(p.calls, calls...)
	if !p.stream {
		p.content.WriteString(content)
		p.thought.WriteString(thinking)
	} else {
		var b []byte
		var err error
		if p.generate {
			b, err = json.Marshal(api.GenerateResponse{Model: p.model, CreatedAt: time.Now().UTC(), Response: content, Thinking: thinking})
		} else {
			b, err = json.Marshal(api.ChatResponse{Model: p.model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", Content: content, Thinking: thinking, ToolCalls: calls}})
		}
		if err != nil || !p.write(append(b, '\n'), true) {
			p.ended = true
			return
		}
	}
	p.sent++
	if p.plan.disconnectAfter > 0 && p.sent >= p.plan.disconnectAfter {
		p.disconnect()
	}
}

// write sends bytes as part of the 200 NDJSON stream; false when the
// client has gone.
func (p *player) write(b []byte, flush bool) bool {
	if !p.started {
		p.w.Header().Set("Content-Type", "application/x-ndjson")
		p.w.WriteHeader(http.StatusOK)
		p.started = true
	}
	if _, err := p.w.Write(b); err != nil {
		return false
	}
	return !flush || p.rc.Flush() == nil
}

// fail ends the reply with an error step, the way the real server does
// at that point of a reply.
func (p *player) fail(st Step) {
	p.ended = true
	switch {
	case p.started && st.raw:
		p.write([]byte(st.msg+"\n"), true)
	case p.started:
		b, _ := json.Marshal(map[string]string{"error": st.msg})
		p.write(append(b, '\n'), true)
	case st.raw:
		p.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		p.w.WriteHeader(st.status)
		_, _ = p.w.Write([]byte(st.msg))
	default:
		writeError(p.w, st.status, st.msg)
	}
}

// wait sleeps d (d < 0: until the end), cut short when the client cancels
// or the server closes; either ends the reply.
func (p *player) wait(d time.Duration) {
	if fakewire.Wait(d, p.r.Context().Done(), p.srv.closing) {
		p.ended = true
	}
}

// disconnect drops the connection as a crash would: what was flushed
// stays delivered, the chunked body is never terminated.
func (p *player) disconnect() {
	p.ended = true
	p.settle()
	if p.started {
		_ = p.rc.Flush()
	}
	conn, _, err := p.rc.Hijack()
	if err != nil {
		// Not an HTTP/1 connection: abort the response instead, which
		// the server also turns into a reset stream.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// finish sends the final chunk, or the whole reply when not streaming.
// A reply cut by the window or num_predict ends with done_reason
// "length"; otherwise the rule's reason, or "stop".
func (p *player) finish() {
	metrics := p.metrics()
	reason := cmp.Or(p.plan.doneReason, "stop")
	if p.full != "" {
		reason = "length"
	}
	p.doneReason = reason
	p.settle()
	now := time.Now().UTC()
	if p.generate {
		resp := api.GenerateResponse{Model: p.model, CreatedAt: now, Done: true, DoneReason: reason, Metrics: metrics}
		if !p.stream {
			resp.Response, resp.Thinking = p.content.String(), p.thought.String()
			writeJSON(p.w, http.StatusOK, resp)
			return
		}
		b, _ := json.Marshal(resp)
		p.write(append(b, '\n'), true)
		return
	}
	resp := api.ChatResponse{Model: p.model, CreatedAt: now, Message: api.Message{Role: "assistant"}, Done: true, DoneReason: reason, Metrics: metrics}
	if !p.stream {
		resp.Message.Content, resp.Message.Thinking = p.content.String(), p.thought.String()
		resp.Message.ToolCalls = p.calls
		writeJSON(p.w, http.StatusOK, resp)
		return
	}
	b, _ := json.Marshal(resp)
	p.write(append(b, '\n'), true)
}

// metrics are the rule's exact figures, or the server's: load_duration is
// the time until the model was ready (longer when this request loaded
// it), prompt_eval_count the whole prompt the model read,
// prompt_eval_duration the time its uncached part took, eval_count the
// tokens generated, and the other durations measured. Durations are at
// least 1µs so every key the real server sends is present.
func (p *player) metrics() api.Metrics {
	if p.plan.metrics != nil {
		return *p.plan.metrics
	}
	now := time.Now()
	return api.Metrics{
		TotalDuration:      max(now.Sub(p.start), 3*time.Microsecond),
		LoadDuration:       max(p.ready.Sub(p.start), time.Microsecond),
		PromptEvalCount:    p.promptTokens,
		PromptEvalDuration: max(p.evalTime, time.Microsecond),
		EvalCount:          max(p.generated, 1),
		EvalDuration:       max(now.Sub(p.firstStep), time.Microsecond),
	}
}

// Embedding is the fake's deterministic embedding of text: a unit vector of
// dims hashed word counts, so texts sharing words are close in cosine
// similarity and identical texts embed identically. Tests can compute the
// vector the server will return.
func Embedding(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(word))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
