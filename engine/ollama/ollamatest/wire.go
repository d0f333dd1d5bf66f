package ollamatest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// play picks the scripted reply for the request and plays it through an
// NDJSON wire.
func (s *Server) play(nw *ndjsonWire, r *http.Request, rec *Request) {
	call := rec.call()
	pl, found := s.Pick(call)
	if !found {
		writeError(nw.w, http.StatusInternalServerError, enginetest.NoMatch("ollamatest", call))
		return
	}
	s.record(func() { rec.Reply = pl.Label })
	nw.rec = rec
	p := enginetest.NewPlayer(pl, nw.w, r, s.core.Closing())
	p.BeforeDrop = nw.settle
	nw.firstStep = time.Now()
	p.Play(nw)
	nw.settle()
}

// settle records how the reply ended. It runs before the last byte goes
// out (the final chunk, or the dropped connection), so a client that has
// seen the end also sees the record.
func (nw *ndjsonWire) settle() {
	nw.srv.record(func() {
		nw.rec.EvalTokens, nw.rec.DoneReason, nw.rec.WindowFull = nw.generated, nw.doneReason, nw.full == fullWindow
		nw.rec.Shifted = nw.shifted && nw.shift && !nw.dropOnShift
	})
}

// What stopped generation before the script's end.
const (
	fullWindow  = "window"      // prompt and reply filled the window
	fullPredict = "num_predict" // the reply reached num_predict
)

// ndjsonWire writes one reply as Ollama does: NDJSON chunks of
// /api/chat's or /api/generate's answer, or the whole answer at once.
// It holds the reply to the window and num_predict, and runs Raw steps
// through the model's parsers (see outputParser).
type ndjsonWire struct {
	srv      *Server
	w        http.ResponseWriter
	rec      *Request
	model    string
	stream   bool
	thinking bool
	generate bool
	// tools: the request offered tools (the real handler returns tool
	// calls of a whole reply only then).
	tools bool
	// shift is the request's shift (true unless sent false): what a full
	// window does to the reply. With it the server shifts the context
	// (the model loses the oldest part of what it read) and the reply
	// goes on, unless the model drops the stream instead (dropOnShift);
	// shifted is set once that happened.
	shift, dropOnShift, shifted bool
	// parser reads Raw steps; raw is set once one played.
	parser *outputParser
	raw    bool

	start     time.Time // the request arrived
	ready     time.Time // the model was loaded
	firstStep time.Time
	evalTime  time.Duration

	promptTokens int
	// room is the tokens the window has left for the reply; predict
	// those num_predict allows (negative: no limit).
	room, predict int
	generated     int    // tokens generated so far
	full          string // fullWindow or fullPredict once generation hit it
	doneReason    string // of the final chunk, once sent

	// reply is the text generated (thinking and content, or the raw
	// text), what the model holds in its cache afterwards.
	reply strings.Builder
	// The whole reply, for stream=false.
	content, thought strings.Builder
	calls            []api.ToolCall
}

func (nw *ndjsonWire) Text(p *enginetest.Player, c string) { nw.emit(p, c, "", nil) }

func (nw *ndjsonWire) Think(p *enginetest.Player, c string) {
	if nw.thinking {
		nw.emit(p, "", c, nil)
	}
}

// ToolCalls sends calls whole in one chunk, as Ollama's parsers deliver
// them; /api/generate has no tool calls.
func (nw *ndjsonWire) ToolCalls(p *enginetest.Player, scripted []enginetest.ScriptedCall) {
	if nw.generate {
		return
	}
	calls := make([]api.ToolCall, len(scripted))
	for i, c := range scripted {
		args := api.NewToolCallFunctionArguments()
		if strings.TrimSpace(c.Arguments) != "" {
			if err := args.UnmarshalJSON([]byte(c.Arguments)); err != nil {
				p.End()
				nw.Fail(p, enginetest.Failure{Status: http.StatusInternalServerError, Message: fmt.Sprintf(
					"ollamatest: the call to %s has arguments that are not a JSON object (%v); Ollama's parsers never send one: script the model's raw text (enginetest.Raw) to see what Ollama makes of it", c.Name, err)})
				return
			}
		}
		calls[i] = api.ToolCall{ID: c.ID, Function: api.ToolCallFunction{Index: len(nw.calls) + i, Name: c.Name, Arguments: args}}
		if !c.HasID {
			calls[i].ID = nw.srv.nextCallID()
		}
	}
	nw.emit(p, "", "", calls)
}

// Raw is one piece the model generates: it costs its tokens (cut to what
// the window and num_predict leave, like any generation) and goes through
// the parsers; what they let out is sent.
func (nw *ndjsonWire) Raw(p *enginetest.Player, piece string) {
	if !p.Pace() {
		return
	}
	tokens := CountTokens(piece)
	if left, what := nw.limit(); tokens > left {
		piece, tokens = cutTokens(piece, max(left, 0)), max(left, 0)
		nw.full = what
		p.Stop()
	}
	if piece == "" {
		return
	}
	nw.raw = true
	nw.addGenerated(tokens)
	nw.reply.WriteString(piece)
	nw.parsed(p, piece, false)
}

// parsed sends what the parsers make of a raw piece (done: the end of
// the reply, which drains them), keeping the end's share for finish.
func (nw *ndjsonWire) parsed(p *enginetest.Player, piece string, done bool) (content, thought string, calls []api.ToolCall) {
	content, thought, calls, send, err := nw.parser.add(piece, done)
	if err != nil {
		p.End()
		nw.Fail(p, enginetest.Failure{Status: http.StatusInternalServerError, Message: err.Error()})
		return "", "", nil
	}
	for i := range calls {
		calls[i].ID = nw.srv.nextCallID()
	}
	if !nw.stream && !nw.tools {
		calls = nil // a whole reply keeps the parsers' calls only when tools were offered
	}
	if !send || done {
		return content, thought, calls
	}
	nw.send(p, content, thought, calls)
	return "", "", nil
}

func (s *Server) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return fmt.Sprintf("call_%08d", s.calls)
}

// limit is how many more tokens the reply may have, and what limits it.
// A window the server may shift limits nothing.
func (nw *ndjsonWire) limit() (int, string) {
	windowed := !nw.shift || nw.dropOnShift
	switch {
	case nw.predict >= 0 && (!windowed || nw.predict <= nw.room):
		return nw.predict - nw.generated, fullPredict
	case windowed:
		return nw.room - nw.generated, fullWindow
	}
	return math.MaxInt, ""
}

// addGenerated counts tokens the model generated; past the window, the server
// has shifted the context.
func (nw *ndjsonWire) addGenerated(tokens int) {
	nw.generated += tokens
	if nw.generated > nw.room {
		nw.shifted = true
	}
}

// callTokens is what tool calls cost, rendered as a model writes them.
func callTokens(calls []api.ToolCall) int {
	n := 0
	for _, c := range calls {
		b, _ := json.Marshal(struct {
			Name      string                        `json:"name"`
			Arguments api.ToolCallFunctionArguments `json:"arguments"`
		}{c.Function.Name, c.Function.Arguments})
		n += CountTokens(string(b))
	}
	return n
}

// emit generates and sends one scripted chunk, cut to what the window
// and num_predict leave: the text up to the limit, a tool call not at all
// unless it fits whole.
func (nw *ndjsonWire) emit(p *enginetest.Player, content, thinking string, calls []api.ToolCall) {
	if !p.Pace() {
		return
	}
	tokens := CountTokens(content) + CountTokens(thinking) + callTokens(calls)
	if left, what := nw.limit(); tokens > left {
		left = max(left, 0)
		calls = nil
		if t := CountTokens(thinking); t >= left {
			thinking, content = cutTokens(thinking, left), ""
		} else {
			content = cutTokens(content, left-t)
		}
		tokens = CountTokens(content) + CountTokens(thinking)
		nw.full = what
		p.Stop()
		if content == "" && thinking == "" {
			return
		}
	}
	nw.addGenerated(tokens)
	nw.reply.WriteString(thinking)
	nw.reply.WriteString(content)
	nw.send(p, content, thinking, calls)
}

// send writes one chunk (or gathers it, when not streaming) and counts it.
func (nw *ndjsonWire) send(p *enginetest.Player, content, thinking string, calls []api.ToolCall) {
	nw.calls = append(nw.calls, calls...)
	if !nw.stream {
		nw.content.WriteString(content)
		nw.thought.WriteString(thinking)
	} else {
		var b []byte
		var err error
		if nw.generate {
			b, err = json.Marshal(api.GenerateResponse{Model: nw.model, CreatedAt: time.Now().UTC(), Response: content, Thinking: thinking})
		} else {
			b, err = json.Marshal(api.ChatResponse{Model: nw.model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", Content: content, Thinking: thinking, ToolCalls: calls}})
		}
		if err != nil || !nw.write(p, append(b, '\n'), true) {
			p.End()
			return
		}
	}
	p.Count(1)
}

// write sends bytes as part of the 200 NDJSON stream; false when the
// client has gone.
func (nw *ndjsonWire) write(p *enginetest.Player, b []byte, flush bool) bool {
	if !p.Started {
		nw.w.Header().Set("Content-Type", "application/x-ndjson")
		nw.w.WriteHeader(http.StatusOK)
		p.Started = true
	}
	if _, err := nw.w.Write(b); err != nil {
		return false
	}
	return !flush || http.NewResponseController(nw.w).Flush() == nil
}

// Fail ends the reply with an error step, the way the real server does
// at that point of a reply.
func (nw *ndjsonWire) Fail(p *enginetest.Player, f enginetest.Failure) {
	switch {
	case p.Started && f.AsIs:
		nw.write(p, []byte(f.Message+"\n"), true)
	case p.Started:
		b, _ := json.Marshal(map[string]string{"error": f.Message})
		nw.write(p, append(b, '\n'), true)
	default:
		for k, vs := range f.Header {
			nw.w.Header()[k] = vs
		}
		if f.AsIs {
			nw.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			nw.w.WriteHeader(f.Status)
			_, _ = nw.w.Write([]byte(f.Message))
			return
		}
		writeError(nw.w, f.Status, f.Message)
	}
}

// floodWords are the flood's tokens, one per chunk as a real server
// streams them (by CountTokens: " quick" is " qui", "ck"); floodQuoted the
// same already JSON-quoted, so writing a chunk costs a few appends.
var (
	floodWords  = tokenPieces(fakewire.FloodProse)
	floodQuoted = sync.OnceValue(func() [][]byte { return fakewire.Quoted(floodWords) })
)

// Flood streams n content chunks of one token each, built by hand in the
// exact bytes json.Marshal would produce. A flood is a load generator: it
// counts in eval_count but is not held to the window or num_predict, so a
// benchmark of any length needs no window set up for it.
func (nw *ndjsonWire) Flood(p *enginetest.Player, n int) {
	if !nw.stream {
		nw.content.WriteString(FloodText(n))
		p.Count(n)
		nw.generated += n
		return
	}
	tokens := floodQuoted()
	model, _ := json.Marshal(nw.model)
	head, mid, tail := `{"model":`+string(model)+`,"created_at":"`, `","message":{"role":"assistant","content":`, `},"done":false}`+"\n"
	if nw.generate {
		mid, tail = `","response":`, `,"done":false}`+"\n"
	}
	p.FloodFrames(n, func(buf []byte, i int) []byte {
		nw.generated++
		buf = append(buf, head...)
		buf = time.Now().UTC().AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, mid...)
		buf = append(buf, tokens[i%len(tokens)]...)
		return append(buf, tail...)
	}, func(b []byte, flush bool) bool { return nw.write(p, b, flush) })
}

// FloodText returns the content n flood chunks add up to, for tests that
// check a flooded reply arrived whole.
func FloodText(n int) string { return fakewire.Cycle(floodWords, n) }

// Finish ends the reply: with the final chunk (or the whole reply when
// not streaming), or, when the window filled on a model that drops the
// stream rather than shift (ModelSpec.DropOnShift), by dropping the
// connection mid-reply, as the real server did on the small model of the
// project's notes. A reply cut by the window or num_predict
// ends with done_reason "length"; otherwise the rule's reason, or "stop".
// The parsers are drained into the final chunk, as the real handler's
// last callback does.
func (nw *ndjsonWire) Finish(p *enginetest.Player) {
	if nw.full == fullWindow && nw.shift {
		p.Disconnect()
		return
	}
	var content, thought string
	var calls []api.ToolCall
	if nw.raw {
		if content, thought, calls = nw.parsed(p, "", true); p.Ended() {
			return
		}
	}
	metrics := nw.metrics(p)
	reason := cmp.Or(p.Plan.FinishReason, "stop")
	if nw.full != "" {
		reason = "length"
	}
	nw.doneReason = reason
	nw.settle()
	now := time.Now().UTC()
	if nw.generate {
		resp := api.GenerateResponse{Model: nw.model, CreatedAt: now, Response: content, Thinking: thought, Done: true, DoneReason: reason, Metrics: metrics}
		if len(calls) > 0 {
			resp.ToolCalls = calls
		}
		if !nw.stream {
			resp.Response, resp.Thinking = nw.content.String()+content, nw.thought.String()+thought
			writeJSON(nw.w, http.StatusOK, resp)
			return
		}
		b, _ := json.Marshal(resp)
		nw.write(p, append(b, '\n'), true)
		return
	}
	resp := api.ChatResponse{Model: nw.model, CreatedAt: now, Message: api.Message{Role: "assistant", Content: content, Thinking: thought, ToolCalls: calls},
		Done: true, DoneReason: reason, Metrics: metrics}
	if !nw.stream {
		resp.Message.Content, resp.Message.Thinking = nw.content.String()+content, nw.thought.String()+thought
		resp.Message.ToolCalls = append(nw.calls, calls...)
		writeJSON(nw.w, http.StatusOK, resp)
		return
	}
	b, _ := json.Marshal(resp)
	nw.write(p, append(b, '\n'), true)
}

// metrics are the rule's exact figures, or the server's: load_duration is
// the time until the model was ready (longer when this request loaded
// it), prompt_eval_count the whole prompt the model read,
// prompt_eval_duration the time its uncached part took, eval_count the
// tokens generated, and the other durations measured. Durations are at
// least 1µs so every key the real server sends is present.
func (nw *ndjsonWire) metrics(p *enginetest.Player) api.Metrics {
	if p.Plan.NoUsage {
		return api.Metrics{}
	}
	if u := p.Plan.Usage; u != nil {
		return api.Metrics{TotalDuration: u.TotalDuration, LoadDuration: u.LoadDuration, PromptEvalCount: u.PromptTokens,
			PromptEvalDuration: u.PromptDuration, EvalCount: u.CompletionTokens, EvalDuration: u.EvalDuration}
	}
	now := time.Now()
	return api.Metrics{
		TotalDuration:      max(now.Sub(nw.start), 3*time.Microsecond),
		LoadDuration:       max(nw.ready.Sub(nw.start), time.Microsecond),
		PromptEvalCount:    nw.promptTokens,
		PromptEvalDuration: max(nw.evalTime, time.Microsecond),
		EvalCount:          max(nw.generated, 1),
		EvalDuration:       max(now.Sub(nw.firstStep), time.Microsecond),
	}
}
