package ollamatest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultContextLength is the window a model is loaded with when neither
// the request nor the model's parameters set num_ctx: the real server's
// default on a machine with less than 24 GiB of VRAM (OLLAMA_CONTEXT_LENGTH
// overrides it there, SetDefaultContextLength here). A model never gets
// more than its own maximum, ModelSpec.ContextLength.
const DefaultContextLength = 4096

// DefaultKeepAlive is how long a model stays loaded after its last request
// unless the request's keep_alive or SetKeepAlive says otherwise.
const DefaultKeepAlive = 5 * time.Minute

// kvBytesPerToken is what each token of window adds to a loaded model's
// size in /api/ps, so a bigger window visibly costs memory.
const kvBytesPerToken = 64 << 10

// minContext is the smallest window the real scheduler loads.
const minContext = 4

// LoadKind says what happened to a loaded model.
type LoadKind string

// What can happen to a model in memory.
const (
	// Load: a request found the model not loaded and loaded it.
	Load LoadKind = "load"
	// Reload: a request asked for a different num_ctx than the model
	// was loaded with, so it was loaded again (the cache is lost).
	Reload LoadKind = "reload"
	// Unload: a request asked for it (keep_alive 0, as `ollama stop`
	// does), or a request with keep_alive 0 finished.
	Unload LoadKind = "unload"
	// Expire: its keep_alive ran out.
	Expire LoadKind = "expire"
)

// LoadEvent is one change to the set of loaded models.
type LoadEvent struct {
	Kind  LoadKind
	Model string // as the server names it, e.g. "qwen3:latest"
	// ContextLength is the window loaded (Load, Reload) or the one in
	// force until then (Unload, Expire).
	ContextLength int
	// Seq is the request that caused it (see Request.Seq); 0 for an
	// expiry, which no request causes.
	Seq int
	At  time.Time
}

// loadedModel is a model in memory. Its fields are guarded by Server.mu.
type loadedModel struct {
	spec      ModelSpec
	requested int // num_ctx as asked for, before the cap: what a reload compares
	window    int
	keepAlive time.Duration
	expiresAt time.Time
	refs      int    // requests using it now
	cache     string // the text whose evaluation the model holds: last prompt and reply
}

// runOptions are the options of a request that matter to the fake.
type runOptions struct {
	numCtx     int // requested window (request, else model parameter, else server default)
	numPredict int // -1: no limit
}

// SetDefaultContextLength sets the window for requests that set no num_ctx
// (the real server's OLLAMA_CONTEXT_LENGTH); n <= 0 restores
// DefaultContextLength.
func (s *Server) SetDefaultContextLength(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		n = DefaultContextLength
	}
	s.defaultCtx = n
}

// SetKeepAlive sets how long models stay loaded after a request that sets
// no keep_alive (OLLAMA_KEEP_ALIVE); negative keeps them forever.
func (s *Server) SetKeepAlive(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keepAlive = d
}

// LoadEvents returns every load, reload, unload and expiry so far, in
// order, so a test can assert that no reload happened (or exactly one).
func (s *Server) LoadEvents() []LoadEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	return slices.Clone(s.events)
}

// LoadedWindow returns the window model is loaded with now, and whether
// it is loaded at all.
func (s *Server) LoadedWindow(model string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	lm, ok := s.loaded[normalizeName(model)]
	if !ok {
		return 0, false
	}
	return lm.window, true
}

// parseRunOptions resolves num_ctx and num_predict the way the real server
// does: its default, then the model's parameters, then the request's
// options. A value of the wrong type is the real server's error.
func (s *Server) parseRunOptions(m ModelSpec, opts map[string]any) (runOptions, error) {
	s.mu.Lock()
	o := runOptions{numCtx: s.defaultCtx, numPredict: -1}
	s.mu.Unlock()
	for _, src := range []map[string]any{m.Parameters, opts} {
		if err := intOption(src, "num_ctx", &o.numCtx); err != nil {
			return o, err
		}
		if err := intOption(src, "num_predict", &o.numPredict); err != nil {
			return o, err
		}
	}
	o.numCtx = max(o.numCtx, minContext)
	return o, nil
}

func intOption(m map[string]any, key string, dst *int) error {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	switch n := v.(type) {
	case float64:
		*dst = int(n)
	case int:
		*dst = n
	case int64:
		*dst = int(n)
	case json.Number:
		i, err := strconv.Atoi(n.String())
		if err != nil {
			return fmt.Errorf("option %q must be of type integer", key)
		}
		*dst = i
	default:
		return fmt.Errorf("option %q must be of type integer", key)
	}
	return nil
}

// acquire gives a request the model loaded with the window it asks for:
// loading it when it is not in memory and reloading it when the request
// asks for another num_ctx than it was loaded with (the real scheduler
// compares the options as requested, before the model's maximum caps
// them). kind says which happened ("" for neither). Pair with release.
func (s *Server) acquire(m ModelSpec, o runOptions, keepAlive *api.Duration, seq int) (lm *loadedModel, kind LoadKind) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(now)
	lm = s.loaded[m.Name]
	switch {
	case lm == nil:
		kind = Load
	case lm.requested != o.numCtx:
		kind = Reload
	}
	if kind != "" {
		lm = &loadedModel{spec: m, requested: o.numCtx, window: min(o.numCtx, m.ContextLength), keepAlive: s.keepAlive}
		s.loaded[m.Name] = lm
		s.events = append(s.events, LoadEvent{Kind: kind, Model: m.Name, ContextLength: lm.window, Seq: seq, At: now})
	}
	if keepAlive != nil {
		lm.keepAlive = keepAlive.Duration
	}
	lm.refs++
	lm.expiresAt = expiry(now, lm.keepAlive)
	return lm, kind
}

// release ends a request's use of a model, keeping what it evaluated as
// the prompt cache. A model whose keep_alive is 0 unloads once idle.
func (s *Server) release(lm *loadedModel, seq int, evaluated string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	lm.refs--
	if evaluated != "" {
		lm.cache = evaluated
	}
	if lm.refs > 0 {
		return
	}
	lm.expiresAt = expiry(now, lm.keepAlive)
	if lm.keepAlive <= 0 && s.loaded[lm.spec.Name] == lm {
		delete(s.loaded, lm.spec.Name)
		s.events = append(s.events, LoadEvent{Kind: Unload, Model: lm.spec.Name, ContextLength: lm.window, Seq: seq, At: now})
	}
}

// unload frees a model now, as a request with keep_alive 0 and nothing to
// answer asks; one still answering another request unloads when it is done.
func (s *Server) unload(name string, seq int) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	lm, ok := s.loaded[name]
	if !ok {
		return
	}
	if lm.refs > 0 {
		lm.keepAlive = 0
		return
	}
	delete(s.loaded, name)
	s.events = append(s.events, LoadEvent{Kind: Unload, Model: name, ContextLength: lm.window, Seq: seq, At: now})
}

// expireLocked unloads the idle models whose keep_alive has run out.
func (s *Server) expireLocked(now time.Time) {
	for name, lm := range s.loaded {
		if lm.refs == 0 && now.After(lm.expiresAt) {
			delete(s.loaded, name)
			s.events = append(s.events, LoadEvent{Kind: Expire, Model: name, ContextLength: lm.window, At: now})
		}
	}
}

// expiry is now plus keep_alive; a negative keep_alive (forever) arrives
// as the largest duration, which lands some 292 years ahead as on the real
// server.
func expiry(now time.Time, keepAlive time.Duration) time.Time {
	if keepAlive < 0 {
		keepAlive = math.MaxInt64
	}
	return now.Add(keepAlive)
}

// cachedTokens is how many tokens at the start of prompt the model still
// holds from its last evaluation.
func cachedTokens(cache, prompt string) int {
	n := 0
	for n < len(cache) && n < len(prompt) && cache[n] == prompt[n] {
		n++
	}
	c := CountTokens(prompt[:n])
	if n < len(prompt) && c > 0 {
		c-- // the token the texts part in is evaluated again
	}
	return c
}

// handlePS answers /api/ps: the loaded models, the longest to live first.
func (s *Server) handlePS(w http.ResponseWriter) {
	now := time.Now()
	s.mu.Lock()
	s.expireLocked(now)
	models := make([]api.ProcessModelResponse, 0, len(s.loaded))
	for _, lm := range s.loaded {
		size := lm.spec.Size + int64(lm.window)*kvBytesPerToken
		models = append(models, api.ProcessModelResponse{
			Name:          lm.spec.Name,
			Model:         lm.spec.Name,
			Size:          size,
			Digest:        digest(lm.spec.Name),
			Details:       details(&lm.spec),
			ExpiresAt:     lm.expiresAt,
			SizeVRAM:      size,
			ContextLength: lm.window,
		})
	}
	s.mu.Unlock()
	slices.SortStableFunc(models, func(a, b api.ProcessModelResponse) int {
		return cmp.Or(b.ExpiresAt.Compare(a.ExpiresAt), cmp.Compare(a.Name, b.Name))
	})
	writeJSON(w, http.StatusOK, api.ProcessResponse{Models: models})
}
