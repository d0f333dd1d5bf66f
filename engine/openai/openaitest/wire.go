package openaitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
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

	call := rec.call()
	pl, found := s.Pick(call)
	if !found {
		s.writeError(w, http.StatusInternalServerError, enginetest.NoMatch("openaitest", call))
		return
	}
	s.record(func() { rec.Reply = pl.Label })
	sw := &sseWire{
		srv: s, w: w, model: req.Model, stream: req.Stream, start: start, promptTokens: prompt,
		includeUsage:   !req.Stream || (req.StreamOptions != nil && req.StreamOptions.IncludeUsage),
		reasoningField: s.reasoningField(),
		id:             fmt.Sprintf("chatcmpl-openaitest%d", rec.Seq),
	}
	if pl.ReasoningField != "" {
		sw.reasoningField = pl.ReasoningField
	}
	sw.firstStep = time.Now()
	enginetest.NewPlayer(pl, w, r, s.closing).Play(sw)
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

// sseWire writes one reply as the OpenAI API does: server-sent events of
// chat.completion.chunk, or one chat.completion when not streaming.
type sseWire struct {
	srv            *Server
	w              http.ResponseWriter
	model, id      string
	stream         bool
	includeUsage   bool
	reasoningField string
	start          time.Time
	firstStep      time.Time
	promptTokens   int
	thoughts       int // reasoning deltas sent

	// The whole reply, for stream: false.
	content, thought strings.Builder
	calls            []SentToolCall // the shape of a call in a message
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

func (sw *sseWire) Text(p *enginetest.Player, c string) {
	sw.delta(p, map[string]any{"content": c}, func() { sw.content.WriteString(c) })
}

// Raw is sent as content: these servers' tool-call parsers are not code
// the stand-in can run, and a server started without one (vLLM without
// --tool-call-parser, llama.cpp without --jinja) sends the model's text
// as it is.
func (sw *sseWire) Raw(p *enginetest.Player, piece string) { sw.Text(p, piece) }

func (sw *sseWire) Think(p *enginetest.Player, c string) {
	sw.thoughts++
	sw.delta(p, map[string]any{sw.reasoningField: c}, func() { sw.thought.WriteString(c) })
}

// ToolCalls streams calls made together: first deltas in index order,
// then the argument pieces interleaved.
func (sw *sseWire) ToolCalls(p *enginetest.Player, calls []enginetest.ScriptedCall) {
	base := len(sw.calls)
	parts := make([][]string, len(calls))
	for i, c := range calls {
		id := c.ID
		if !c.HasID {
			id = sw.srv.nextCallID()
		}
		wc := SentToolCall{ID: id, Type: "function"}
		wc.Function.Name, wc.Function.Arguments = c.Name, c.Arguments
		sw.calls = append(sw.calls, wc)
		first := map[string]any{"index": base + i, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}
		if id != "" {
			first["id"] = id
		}
		if !sw.delta(p, map[string]any{"tool_calls": []any{first}}, nil) {
			return
		}
		parts[i] = pieces(c.Arguments, c.Pieces)
	}
	for k := 0; ; k++ {
		more := false
		for i := range calls {
			if k >= len(parts[i]) {
				continue
			}
			more = true
			d := map[string]any{"index": base + i, "function": map[string]any{"arguments": parts[i][k]}}
			if !sw.delta(p, map[string]any{"tool_calls": []any{d}}, nil) {
				return
			}
		}
		if !more {
			return
		}
	}
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

func (s *Server) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	switch s.flavor {
	case LlamaCpp:
		return fmt.Sprintf("Xq7wZ%027d", s.calls) // llama.cpp: 32 random letters and digits
	case VLLM:
		return fmt.Sprintf("chatcmpl-tool-%032x", s.calls)
	}
	return fmt.Sprintf("call_%024d", s.calls)
}

func (sw *sseWire) chunk(delta map[string]any, finish *string) chunk {
	return chunk{ID: sw.id, Object: "chat.completion.chunk", Created: sw.start.Unix(), Model: sw.model,
		Choices: []chunkChoice{{Delta: delta, FinishReason: finish}}}
}

// delta streams one delta (or, not streaming, gathers it with gather);
// false when the reply has ended.
func (sw *sseWire) delta(p *enginetest.Player, delta map[string]any, gather func()) bool {
	return p.Frame(func() bool {
		if !sw.stream {
			if gather != nil {
				gather()
			}
			return true
		}
		return sw.event(p, sw.chunk(delta, nil))
	})
}

// event writes one data event; false when the client has gone.
func (sw *sseWire) event(p *enginetest.Player, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return sw.write(p, append(append([]byte("data: "), b...), '\n', '\n'))
}

// write sends bytes of the 200 event stream. The stream opens with the
// headers and the role delta only when the first event is ready, as the
// servers do: an error before it still gets its own HTTP status.
func (sw *sseWire) write(p *enginetest.Player, b []byte) bool {
	if !p.Started {
		sw.w.Header().Set("Content-Type", "text/event-stream")
		sw.w.Header().Set("Cache-Control", "no-cache")
		sw.w.WriteHeader(http.StatusOK)
		p.Started = true
		role, _ := json.Marshal(sw.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if _, err := sw.w.Write(append(append([]byte("data: "), role...), '\n', '\n')); err != nil {
			return false
		}
	}
	if _, err := sw.w.Write(b); err != nil {
		return false
	}
	return http.NewResponseController(sw.w).Flush() == nil
}

// Fail ends the reply with an error: the status and body before anything
// was streamed, a data event after.
func (sw *sseWire) Fail(p *enginetest.Player, f enginetest.Failure) {
	body := []byte(f.Message)
	if !f.AsIs {
		body, _ = json.Marshal(sw.srv.errorBody(f.Status, f.Message))
	}
	if p.Started {
		sw.write(p, append(append([]byte("data: "), body...), '\n', '\n'))
		return
	}
	for k, vs := range f.Header {
		sw.w.Header()[k] = vs
	}
	ct := "application/json"
	if !json.Valid(body) {
		ct = "text/html; charset=utf-8"
	}
	writeRaw(sw.w, f.Status, ct, body)
}

// floodWords are the flood's tokens; floodQuoted the same already
// JSON-quoted, so writing an event costs a few appends.
var (
	floodWords  = fakewire.SplitTokens(fakewire.FloodProse)
	floodQuoted = sync.OnceValue(func() [][]byte { return fakewire.Quoted(floodWords) })
)

// Flood streams n content events built by hand in the bytes json.Marshal
// gives chunk.
func (sw *sseWire) Flood(p *enginetest.Player, n int) {
	if !sw.stream {
		sw.content.WriteString(FloodText(n))
		p.Count(n)
		return
	}
	tokens := floodQuoted()
	id, _ := json.Marshal(sw.id)
	model, _ := json.Marshal(sw.model)
	head := `data: {"id":` + string(id) + `,"object":"chat.completion.chunk","created":` +
		strconv.FormatInt(sw.start.Unix(), 10) + `,"model":` + string(model) +
		`,"choices":[{"index":0,"delta":{"content":`
	const tail = `},"finish_reason":null}]}` + "\n\n"
	p.FloodFrames(n, func(buf []byte, i int) []byte {
		buf = append(buf, head...)
		buf = append(buf, tokens[i%len(tokens)]...)
		return append(buf, tail...)
	}, func(b []byte, _ bool) bool { return sw.write(p, b) })
}

// FloodText returns the content n flood events add up to, for tests that
// check a flooded reply arrived whole.
func FloodText(n int) string { return fakewire.Cycle(floodWords, n) }

// Finish ends the reply: the finishing chunk, the usage chunk when asked
// for, and [DONE]; or the whole completion when not streaming.
func (sw *sseWire) Finish(p *enginetest.Player) {
	reason := p.Plan.FinishReason
	if reason == "" {
		reason = "stop"
		if len(sw.calls) > 0 {
			reason = "tool_calls"
		}
	}
	usage, timings := sw.usage(p)
	if !sw.stream {
		msg := map[string]any{"role": "assistant", "content": sw.content.String()}
		if sw.thought.Len() > 0 {
			msg[sw.reasoningField] = sw.thought.String()
		}
		if len(sw.calls) > 0 {
			msg["tool_calls"] = sw.calls
			if sw.content.Len() == 0 {
				msg["content"] = nil
			}
		}
		resp := map[string]any{"id": sw.id, "object": "chat.completion", "created": sw.start.Unix(), "model": sw.model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": reason}}}
		if usage != nil {
			resp["usage"] = usage
		}
		if timings != nil {
			resp["timings"] = timings
		}
		writeJSON(sw.w, http.StatusOK, resp)
		return
	}
	last := sw.chunk(map[string]any{}, &reason)
	if sw.srv.flavor == LlamaCpp {
		last.Timings = timings // llama.cpp times every final chunk
	}
	if !sw.event(p, last) {
		return
	}
	if usage != nil && sw.includeUsage {
		c := chunk{ID: sw.id, Object: "chat.completion.chunk", Created: sw.start.Unix(), Model: sw.model,
			Choices: []chunkChoice{}, Usage: usage, Timings: timings}
		if !sw.event(p, c) {
			return
		}
	}
	sw.write(p, []byte("data: [DONE]\n\n"))
}

// usage is the reply's usage (nil when the rule sends none) and, for
// llama.cpp, its timings: the rule's durations when it gives them,
// otherwise measured.
func (sw *sseWire) usage(p *enginetest.Player) (*usageJSON, map[string]any) {
	if p.Plan.NoUsage {
		return nil, nil
	}
	u := enginetest.Usage{PromptTokens: sw.promptTokens, CompletionTokens: max(p.Sent(), 1), ReasoningTokens: sw.thoughts,
		PromptDuration: sw.firstStep.Sub(sw.start), EvalDuration: time.Since(sw.firstStep)}
	if exact := p.Plan.Usage; exact != nil {
		measured := u
		u = *exact
		u.PromptDuration = cmp.Or(u.PromptDuration, measured.PromptDuration)
		u.EvalDuration = cmp.Or(u.EvalDuration, measured.EvalDuration)
	}
	usage := &usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.PromptTokens + u.CompletionTokens}
	if u.ReasoningTokens > 0 {
		usage.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{u.ReasoningTokens}
	}
	if sw.srv.flavor != LlamaCpp {
		return usage, nil
	}
	promptMS := max(float64(u.PromptDuration.Microseconds())/1e3, 0.001)
	predictedMS := max(float64(u.EvalDuration.Microseconds())/1e3, 0.001)
	return usage, map[string]any{
		"cache_n": 0, "prompt_n": u.PromptTokens, "prompt_ms": promptMS,
		"prompt_per_token_ms": promptMS / float64(max(u.PromptTokens, 1)),
		"prompt_per_second":   float64(u.PromptTokens) / promptMS * 1e3,
		"predicted_n":         u.CompletionTokens, "predicted_ms": predictedMS,
		"predicted_per_token_ms": predictedMS / float64(max(u.CompletionTokens, 1)),
		"predicted_per_second":   float64(u.CompletionTokens) / predictedMS * 1e3,
	}
}

// RateLimited answers 429 in OpenAI's words with the wait in a header:
// retry-after in seconds when after is a whole number of them, otherwise
// retry-after-ms. after 0 sends no header.
func RateLimited(after time.Duration) enginetest.Step {
	msg := "Rate limit reached for requests in organization org-openaitest on requests per min (RPM): Limit 3, Used 3, Requested 1."
	if after > 0 {
		msg += " Please try again in " + after.String() + "."
	}
	msg += " Visit https://platform.openai.com/account/rate-limits to learn more."
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "requests", "param": nil, "code": "rate_limit_exceeded"}})
	st := enginetest.ErrorBody(http.StatusTooManyRequests, string(b))
	switch {
	case after <= 0:
	case after%time.Second == 0:
		st = st.WithHeader("Retry-After", strconv.Itoa(int(after/time.Second)))
	default:
		st = st.WithHeader("Retry-After-Ms", strconv.FormatInt(after.Milliseconds(), 10))
	}
	return st
}

// OutOfQuota answers 429 as OpenAI does for an account without credit.
func OutOfQuota() enginetest.Step {
	return enginetest.ErrorBody(http.StatusTooManyRequests,
		`{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
}
