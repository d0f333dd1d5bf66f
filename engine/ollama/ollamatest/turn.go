package ollamatest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/ollama/ollama/thinking"
)

// errInputTooLong is the runner's answer to a prompt bigger than the
// window when the request turned truncation off.
const errInputTooLong = "the input length exceeds the context length"

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, rec *Request) {
	start := time.Now()
	var req api.ChatRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() {
		rec.Chat = &req
		rec.noteWindowFields(req.Options, req.Truncate, req.Shift, req.DebugRenderOnly, req.KeepAlive)
	})
	m, ok := s.model(w, req.Model)
	if !ok {
		return
	}
	if len(req.Messages) == 0 && req.KeepAlive != nil && req.KeepAlive.Duration == 0 {
		s.unload(m.Name, rec.Seq)
		s.record(func() { rec.Unloaded = true })
		writeJSON(w, http.StatusOK, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "unload"})
		return
	}
	if !admit(w, m, req.Model, req.Think, "chat") {
		return
	}
	// The order of the checks is the real handler's: thinking is checked
	// before the runner is scheduled, which is where tools are refused.
	if len(req.Tools) > 0 && !slices.Contains(m.Capabilities, "tools") {
		writeError(w, http.StatusBadRequest, fullName(m.Name)+" does not support tools")
		return
	}
	t, ok := s.begin(w, r, rec, m, req.Options, req.KeepAlive, start)
	if !ok {
		return
	}
	defer t.end()
	if len(req.Messages) == 0 {
		writeJSON(w, http.StatusOK, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "load"})
		return
	}
	// As the real handler prepares the conversation: the model's own
	// thinking taken out of earlier answers (qwen3, deepseek-r1), its
	// PARSER set up (which may rename the tools the template renders).
	think := templateThink(m, req.Think)
	msgs := filterThinkTags(slices.Clone(req.Messages), m)
	builtin, rendered := builtinParser(m, req.Tools, &msgs[len(msgs)-1], think)
	f, err := m.tmpl.fit(msgs, rendered, think, t.lm.window, req.Truncate == nil || *req.Truncate)
	if !t.prepared(f, err) {
		return
	}
	if req.DebugRenderOnly && s.renders(m) {
		writeJSON(w, http.StatusOK, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), DebugInfo: &api.DebugInfo{RenderedTemplate: f.prompt}})
		return
	}
	if think != nil && think.IsString() && m.Parser != "harmony" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("think value %q is not supported for this model", think.String()))
		return
	}
	t.generate(&ndjsonWire{
		model: req.Model, stream: req.Stream == nil || *req.Stream, tools: len(req.Tools) > 0,
		thinking: thinks(m, req.Think), shift: req.Shift == nil || *req.Shift, dropOnShift: m.DropOnShift,
		parser: newOutputParser(builtin, m.tmpl, req.Tools, think, f.prompt, false),
	})
}

// filterThinkTags is the real handler's: for qwen3 and deepseek-r1
// models, the <think> part of assistant messages before the last user
// message is taken out.
func filterThinkTags(msgs []api.Message, m ModelSpec) []api.Message {
	if m.Family != "qwen3" && baseName(m.Name) != "deepseek-r1" {
		return msgs
	}
	last := -1
	for i, msg := range msgs {
		if msg.Role == "user" {
			last = i
		}
	}
	for i, msg := range msgs {
		if msg.Role == "assistant" && i < last {
			p := &thinking.Parser{OpeningTag: "<think>", ClosingTag: "</think>"}
			_, msgs[i].Content = p.AddContent(msg.Content)
		}
	}
	return msgs
}

func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, rec *Request) {
	start := time.Now()
	var req api.GenerateRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() {
		rec.Generate = &req
		rec.noteWindowFields(req.Options, req.Truncate, req.Shift, req.DebugRenderOnly, req.KeepAlive)
	})
	m, ok := s.model(w, req.Model)
	if !ok {
		return
	}
	if req.Prompt == "" && req.KeepAlive != nil && req.KeepAlive.Duration == 0 {
		s.unload(m.Name, rec.Seq)
		s.record(func() { rec.Unloaded = true })
		writeJSON(w, http.StatusOK, api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Done: true, DoneReason: "unload"})
		return
	}
	if !admit(w, m, req.Model, req.Think, "generate") {
		return
	}
	t, ok := s.begin(w, r, rec, m, req.Options, req.KeepAlive, start)
	if !ok {
		return
	}
	defer t.end()
	if req.Prompt == "" {
		writeJSON(w, http.StatusOK, api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Done: true, DoneReason: "load"})
		return
	}
	truncate := req.Truncate == nil || *req.Truncate
	think := templateThink(m, req.Think)
	var f fitted
	var err error
	var builtin parsers.Parser
	if req.Raw {
		f = fitRaw(req.Prompt, t.lm.window, truncate)
	} else {
		builtin, _ = builtinParser(m, nil, nil, think)
		f, err = m.tmpl.fit(rec.Messages(), nil, think, t.lm.window, truncate)
	}
	if !t.prepared(f, err) {
		return
	}
	if req.DebugRenderOnly && s.renders(m) {
		writeJSON(w, http.StatusOK, api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), DebugInfo: &api.DebugInfo{RenderedTemplate: f.prompt}})
		return
	}
	t.generate(&ndjsonWire{
		model: req.Model, stream: req.Stream == nil || *req.Stream,
		thinking: thinks(m, req.Think), shift: req.Shift == nil || *req.Shift, dropOnShift: m.DropOnShift, generate: true,
		parser: newOutputParser(builtin, m.tmpl, nil, think, f.prompt, true),
	})
}

// noteWindowFields records what a request asked of the window.
func (r *Request) noteWindowFields(opts map[string]any, truncate, shift *bool, renderOnly bool, keepAlive *api.Duration) {
	_ = intOption(opts, "num_ctx", &r.NumCtx)
	_ = intOption(opts, "num_predict", &r.NumPredict)
	r.Truncate, r.Shift, r.RenderOnly, r.KeepAlive = truncate, shift, renderOnly, keepAlive
}

// model finds the model a request names, answering the real server's
// errors when there is no name or no such model.
func (s *Server) model(w http.ResponseWriter, name string) (ModelSpec, bool) {
	if strings.TrimSpace(name) == "" {
		writeError(w, http.StatusBadRequest, "model is required")
		return ModelSpec{}, false
	}
	m, ok := s.lookup(name)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return ModelSpec{}, false
	}
	return m, true
}

// admit runs the checks the real server makes before loading: thinking
// only where the model has it, and the completion capability. It answers
// the error itself.
func admit(w http.ResponseWriter, m ModelSpec, name string, think *api.ThinkValue, what string) bool {
	if think != nil && think.Bool() && !slices.Contains(m.Capabilities, "thinking") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support thinking", name))
		return false
	}
	if !slices.Contains(m.Capabilities, "completion") {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support %s", name, what))
		return false
	}
	return true
}

// thinks reports whether the reply carries thinking: the model must have
// it, and a thinking model thinks unless asked not to.
func thinks(m ModelSpec, think *api.ThinkValue) bool {
	return slices.Contains(m.Capabilities, "thinking") && (think == nil || think.Bool())
}

// templateThink is the think value a template sees: the request's, or on
// for a thinking model whose request left it unset, as the real server
// sets it before rendering.
func templateThink(m ModelSpec, think *api.ThinkValue) *api.ThinkValue {
	if think == nil && slices.Contains(m.Capabilities, "thinking") {
		return &api.ThinkValue{Value: true}
	}
	return think
}

// renders reports whether _debug_render_only is honoured for m.
func (s *Server) renders(m ModelSpec) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.noRender && !m.NoRender
}

// fitRaw is fit for a raw generate prompt, which has no messages to drop.
func fitRaw(prompt string, window int, truncate bool) fitted {
	f := fitted{prompt: prompt, tokens: CountTokens(prompt)}
	f.fullTokens = f.tokens
	if truncate && f.tokens > window {
		f.cutTokens, f.tokens = f.tokens-window, window
	}
	return f
}

// turn is one chat or generate request on a loaded model.
type turn struct {
	srv    *Server
	w      http.ResponseWriter
	r      *http.Request
	rec    *Request
	spec   ModelSpec
	lm     *loadedModel
	opts   runOptions
	start  time.Time
	ready  time.Time // the model was loaded
	fit    fitted
	cached int
	// evaluated is what the model holds once the turn is over: the
	// prompt and the reply. The next request's cache hit is measured
	// against it.
	evaluated string
}

// begin resolves the request's options and loads the model with the
// window they ask for (see acquire), taking the model's LoadTime when it
// had to load. false: the answer (an error) is written.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, rec *Request, m ModelSpec, options map[string]any, keepAlive *api.Duration, start time.Time) (*turn, bool) {
	opts, err := s.parseRunOptions(m, options)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	lm, kind := s.acquire(m, opts, keepAlive, rec.Seq)
	t := &turn{srv: s, w: w, r: r, rec: rec, spec: m, lm: lm, opts: opts, start: start}
	s.record(func() { rec.Load, rec.Window = kind, lm.window })
	if kind != "" && !t.sleep(m.LoadTime) {
		t.end()
		return nil, false
	}
	t.ready = time.Now()
	return t, true
}

// end releases the model, leaving what was evaluated in its cache.
func (t *turn) end() { t.srv.release(t.lm, t.rec.Seq, t.evaluated) }

// prepared records the rendered (and, truncating, cut) prompt; false
// when the template failed, which is answered as the real server does.
func (t *turn) prepared(f fitted, err error) bool {
	if err != nil {
		writeError(t.w, http.StatusInternalServerError, err.Error())
		return false
	}
	t.fit = f
	t.srv.mu.Lock()
	t.cached = max(min(cachedTokens(t.lm.cache, f.prompt), f.tokens-1), 0)
	t.srv.mu.Unlock()
	t.srv.record(func() {
		t.rec.Prompt, t.rec.PromptTokens, t.rec.FullPromptTokens = f.prompt, f.tokens, f.fullTokens
		t.rec.CutMessages, t.rec.CutTokens = f.cutMessages, f.cutTokens
	})
	return true
}

// generate evaluates the prompt (the part not in the model's cache costs
// time, at the model's PromptRate) and plays the scripted reply within
// what the window has left. A prompt bigger than the window (truncation
// off) is refused with the runner's 400 instead.
func (t *turn) generate(nw *ndjsonWire) {
	if t.fit.tokens > t.lm.window {
		writeError(t.w, http.StatusBadRequest, errInputTooLong)
		return
	}
	uncached := t.fit.tokens - t.cached
	evalTime := max(time.Duration(float64(uncached)/t.spec.PromptRate*float64(time.Second)), time.Microsecond)
	if !t.sleep(evalTime) {
		return
	}
	t.srv.record(func() { t.rec.CachedTokens = t.cached })
	nw.srv, nw.w = t.srv, t.w
	nw.start, nw.ready, nw.evalTime = t.start, t.ready, evalTime
	nw.promptTokens = t.fit.tokens
	nw.room = t.lm.window - t.fit.tokens
	nw.predict = t.opts.numPredict
	t.srv.play(nw, t.r, t.rec)
	t.evaluated = t.fit.prompt + nw.reply.String()
}

// sleep waits d, cut short when the client goes or the server closes;
// false then.
func (t *turn) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.r.Context().Done():
	case <-t.srv.core.Closing():
	}
	return false
}
