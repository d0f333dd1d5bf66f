// Package ollamatest is a fake Ollama server for tests and demos. It
// listens on loopback and speaks Ollama's native API with the real
// server's wire format (as recorded in the project's notes on v0.17.4):
// status codes, error bodies, NDJSON chunk shapes and field order.
//
// What the model says is scripted. A test registers models and rules:
//
//	srv := ollamatest.New(t)
//	srv.Model("qwen3", "completion", "tools", "thinking")
//	srv.On(ollamatest.UserSays("15% of 340")).Reply(
//		ollamatest.Think("A percentage: the calculator is exact."),
//		ollamatest.ToolCall("calculator", `{"expression":"15/100*340"}`))
//	srv.On(ollamatest.ToolResult("calculator")).Reply(ollamatest.Text("15% of 340 is 51."))
//	... point the code under test at srv.URL ...
//	sent := srv.Chats() // every /api/chat request, decoded
//
// Before any rule is consulted the server checks the request the way
// Ollama does: an unknown model is 404 {"error":"model 'X' not found"},
// tools sent to a model without the tools capability are 400 "... does not
// support tools", think on a model without thinking is 400, a malformed
// body is 400 with the decoder's message.
//
// Models have context windows and the server enforces them as Ollama
// does (see the project's wire notes, "The context window"):
//
//   - A model's maximum is ModelSpec.ContextLength (/api/show's
//     model_info["<family>.context_length"]). A request runs with its
//     options.num_ctx, else the model's num_ctx parameter, else the
//     server's default (DefaultContextLength, 4096; see
//     SetDefaultContextLength), never more than the maximum.
//   - The first request loads the model with that window; one asking for
//     another num_ctx reloads it (LoadEvents records both, /api/ps shows
//     the window in force as context_length). keep_alive sets expires_at;
//     keep_alive 0 with nothing to answer unloads, as `ollama stop` does.
//   - The prompt is the model's template applied to the messages and
//     tools (see Render), counted with CountTokens: a fixed rule, not
//     characters/4, so a client has to calibrate against what the server
//     reports. prompt_eval_count is the whole prompt every turn; only
//     prompt_eval_duration shrinks when the prompt starts with what the
//     model evaluated last (its cache).
//   - A prompt bigger than the window is cut silently unless the request
//     says "truncate": false: the oldest messages go first, system
//     messages and the last message stay. With "truncate": false it is
//     400 {"error":"the input length exceeds the context length"}.
//     Request.SilentCut says whether it happened.
//   - A reply that fills the window ends with done_reason "length" when
//     the request says "shift": false; otherwise the stream stops
//     mid-reply without its final chunk, as the real server's did on a
//     small model. num_predict ends a reply with "length" too.
//   - "_debug_render_only": true answers the rendered prompt instead of a
//     reply, unless rendering is turned off (SetRenderSupport,
//     ModelSpec.NoRender), when the field is ignored as by a server
//     without it.
//
// /api/pull streams progress for models made Pullable and the real
// server's error for others. Every request is recorded (Requests) with
// what the window rules did to it.
//
// Final-chunk metrics: prompt_eval_count and eval_count are tokens by
// CountTokens, load_duration is the time until the model was ready,
// prompt_eval_duration the time the uncached prompt took at the model's
// PromptRate, and the others are measured, so a slow script (ChunkDelay)
// reports a realistic speed. Rule.Metrics sets exact figures instead.
//
// The same scripts load from JSON files (see LoadScript) and the server
// runs on its own with `go run ./engine/ollama/ollamatest/cmd --script FILE`.
package ollamatest

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// DefaultVersion is what /api/version answers unless SetVersion changes it.
const DefaultVersion = "0.17.4"

// maxBody bounds what the server reads of a request body.
const maxBody = 64 << 20

// TB is the part of testing.TB the server needs; *testing.T and *testing.B
// satisfy it. (Taking an interface keeps package testing out of binaries
// that embed the server, such as a dev command.)
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Server is a running fake. Its methods are safe for concurrent use, and
// rules and models may be added while it serves.
type Server struct {
	// URL is the base URL to give clients, e.g. http://127.0.0.1:40123.
	URL string

	http    *http.Server
	closing chan struct{}
	active  sync.WaitGroup
	started time.Time

	mu       sync.Mutex
	closed   bool
	version  string
	models   []*ModelSpec
	rules    []*Rule
	fallback *Rule
	failures map[string]failure
	requests []*Request
	calls    int // tool call ids handed out
	log      io.Writer

	defaultCtx int
	keepAlive  time.Duration
	noRender   bool
	loaded     map[string]*loadedModel // by model name
	events     []LoadEvent
	pullable   map[string]pullable // by model name
}

type failure struct {
	status int
	msg    string
}

// Request is one request the server received, as recorded for assertions.
// The decoded body is in the field for its endpoint (nil when the body did
// not decode). Treat it as read-only.
type Request struct {
	Seq    int // 1-based order of arrival
	Method string
	Path   string
	Header http.Header
	Body   []byte

	Chat     *api.ChatRequest
	Generate *api.GenerateRequest
	Show     *api.ShowRequest
	Embed    *api.EmbedRequest
	Pull     *api.PullRequest

	// Status is the HTTP status the server answered with.
	Status int
	// Reply names the scripted reply that answered ("rule 2 (user says
	// ...)" or "default"); empty when none did.
	Reply string

	// What a chat or generate request asked of the window, as sent:
	// options.num_ctx and num_predict (0 when unset), truncate and shift
	// (nil when unset: the server's default, true), _debug_render_only
	// and keep_alive.
	NumCtx     int
	NumPredict int
	Truncate   *bool
	Shift      *bool
	RenderOnly bool
	KeepAlive  *api.Duration

	// What the server did with it. Window is the context length the
	// model ran with; Load says whether this request loaded or reloaded
	// it. Prompt is the rendered prompt the model read, PromptTokens its
	// tokens (prompt_eval_count), FullPromptTokens those of the whole
	// conversation before any cut. CutMessages and CutTokens are the
	// silent cut: messages dropped from the front and, when the last one
	// alone did not fit, tokens dropped after that. CachedTokens were
	// reused from the previous request's evaluation.
	Window           int
	Load             LoadKind
	Prompt           string
	PromptTokens     int
	FullPromptTokens int
	CutMessages      int
	CutTokens        int
	CachedTokens     int
	// How the reply ended: the tokens generated (eval_count), the
	// done_reason of the final chunk ("" when none was sent), and
	// whether generation stopped because the window was full.
	EvalTokens int
	DoneReason string
	WindowFull bool
	// Unloaded is set on a request that asked to unload the model.
	Unloaded bool

	// PullCancelled is set when the client went away mid-pull.
	PullCancelled bool
}

// windowSummary is what the log says about the window rules.
func (r *Request) windowSummary() string {
	var b strings.Builder
	if r.Load != "" {
		fmt.Fprintf(&b, " %s", r.Load)
	}
	if r.Unloaded {
		b.WriteString(" unload")
	}
	if r.Window > 0 {
		fmt.Fprintf(&b, " num_ctx=%d", r.Window)
	}
	if r.Prompt != "" {
		fmt.Fprintf(&b, " prompt=%d", r.PromptTokens)
	}
	switch {
	case r.CutMessages > 0 && r.CutTokens > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d messages, then %d tokens, of %d)", r.CutMessages, r.CutTokens, r.FullPromptTokens)
	case r.CutMessages > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d messages of %d tokens)", r.CutMessages, r.FullPromptTokens)
	case r.CutTokens > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d tokens of %d)", r.CutTokens, r.FullPromptTokens)
	}
	if r.RenderOnly {
		b.WriteString(" render-only")
	}
	if r.WindowFull {
		b.WriteString(" window full")
	}
	if r.PullCancelled {
		b.WriteString(" pull cancelled")
	}
	return b.String()
}

// SilentCut reports whether the server cut this request's conversation to
// fit the window without saying so.
func (r *Request) SilentCut() bool { return r.CutMessages > 0 || r.CutTokens > 0 }

// Messages returns the conversation: the chat messages, or for
// /api/generate the system prompt and the prompt as messages.
func (r *Request) Messages() []api.Message {
	switch {
	case r.Chat != nil:
		return r.Chat.Messages
	case r.Generate != nil:
		var msgs []api.Message
		if r.Generate.System != "" {
			msgs = append(msgs, api.Message{Role: "system", Content: r.Generate.System})
		}
		return append(msgs, api.Message{Role: "user", Content: r.Generate.Prompt})
	}
	return nil
}

// Turn is the model turn the request asks for: 1 + the assistant messages
// already in the conversation.
func (r *Request) Turn() int {
	n := 1
	for _, m := range r.Messages() {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

func (r *Request) last() *api.Message {
	msgs := r.Messages()
	if len(msgs) == 0 {
		return nil
	}
	return &msgs[len(msgs)-1]
}

func (r *Request) model() string {
	switch {
	case r.Chat != nil:
		return r.Chat.Model
	case r.Generate != nil:
		return r.Generate.Model
	case r.Pull != nil:
		//lint:ignore SA1019 older clients still send "name"
		return cmp.Or(r.Pull.Model, r.Pull.Name)
	}
	return ""
}

// New starts a server on 127.0.0.1 (a free port) and closes it when the
// test ends.
func New(t TB) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen starts a server on addr (host:port; port 0 picks a free one) with
// script applied (nil for none). Close stops it.
func Listen(addr string, script *Script) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Server{
		closing:    make(chan struct{}),
		started:    time.Now().UTC().Truncate(time.Second),
		version:    DefaultVersion,
		defaultCtx: DefaultContextLength,
		keepAlive:  DefaultKeepAlive,
		loaded:     make(map[string]*loadedModel),
		pullable:   make(map[string]pullable),
	}
	if script != nil {
		s.Use(script)
	}
	s.URL = "http://" + dialAddr(ln.Addr())
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// dialAddr is the address a client on this machine dials to reach ln.
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// ClosedURL returns the URL of a loopback port nothing listens on: a
// server that is not running, for "connection refused" tests.
func ClosedURL(t TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	url := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	return url
}

// Close stops the server: hanging and delayed replies end, open
// connections are closed, and Close returns once every handler has.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	_ = s.http.Close()
	s.active.Wait()
}

// ModelSpec describes a model the server has. In a script file the keys
// are the JSON names below.
type ModelSpec struct {
	// Name as pulled, e.g. "qwen3:8b"; ":latest" is implied without a tag.
	Name string `json:"name"`
	// Capabilities as /api/show reports them: completion, tools,
	// thinking, vision, embedding, insert. Empty means completion only.
	Capabilities  []string `json:"capabilities,omitempty"`
	Size          int64    `json:"size,omitempty"`
	Family        string   `json:"family,omitempty"`
	ParameterSize string   `json:"parameter_size,omitempty"`
	Quantization  string   `json:"quantization,omitempty"`
	// ContextLength is the model's own maximum window
	// (model_info["<family>.context_length"]); 32768 when unset. The
	// window a request runs with is num_ctx (or the server's default),
	// never more than this.
	ContextLength   int       `json:"context_length,omitempty"`
	EmbeddingLength int       `json:"embedding_length,omitempty"`
	ModifiedAt      time.Time `json:"modified_at,omitzero"`
	// Template renders a request into the prompt the model reads:
	// TemplateJSON (the default), TemplateNames, or Go text/template
	// source over .Messages and .Tools (see Render).
	Template string `json:"template,omitempty"`
	// Parameters are the model's own default options, as a Modelfile's
	// PARAMETER lines set them; /api/show lists them, and num_ctx and
	// num_predict here apply to requests that do not set their own.
	// Unset: {"temperature": 0.7}.
	Parameters map[string]any `json:"parameters,omitempty"`
	// NoRender makes the server ignore _debug_render_only for this model
	// and answer normally, as a server without the feature does.
	NoRender bool `json:"no_render,omitempty"`
	// LoadTime is how long loading (or reloading) takes; 1ms when unset.
	// In a script: "load_time": "250ms".
	LoadTime time.Duration `json:"-"`
	// PromptRate is how many prompt tokens a second the model evaluates
	// when they are not in its cache; 4,000,000 when unset (a 2,048-token
	// prompt costs half a millisecond).
	PromptRate float64 `json:"prompt_rate,omitempty"`

	tmpl *chatTemplate
}

// Model adds (or replaces) a model with the given capabilities
// ("completion", "tools", "thinking", ...; none means completion only).
func (s *Server) Model(name string, caps ...string) *Server {
	return s.AddModel(ModelSpec{Name: name, Capabilities: caps})
}

// AddModel adds (or replaces) a model described in full. It panics when
// the spec's Template does not parse, like regexp.MustCompile: a broken
// test setup fails where it is written.
func (s *Server) AddModel(m ModelSpec) *Server {
	m, err := completeSpec(m, s.started)
	if err != nil {
		panic("ollamatest: model " + m.Name + ": " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putModelLocked(&m)
	return s
}

func (s *Server) putModelLocked(m *ModelSpec) {
	for i, old := range s.models {
		if old.Name == m.Name {
			s.models[i] = m
			return
		}
	}
	s.models = append(s.models, m)
}

// completeSpec fills a spec's defaults and parses its template.
func completeSpec(m ModelSpec, modified time.Time) (ModelSpec, error) {
	m.Name = normalizeName(m.Name)
	if len(m.Capabilities) == 0 {
		m.Capabilities = []string{"completion"}
	}
	m.Capabilities = slices.Clone(m.Capabilities)
	if m.Family == "" {
		m.Family = baseName(m.Name)
	}
	if m.ContextLength <= 0 {
		m.ContextLength = 32768
	}
	if m.EmbeddingLength == 0 {
		m.EmbeddingLength = 64
	}
	if m.ModifiedAt.IsZero() {
		m.ModifiedAt = modified
	}
	if m.Parameters == nil {
		m.Parameters = map[string]any{"temperature": 0.7}
	} else {
		m.Parameters = maps.Clone(m.Parameters)
	}
	if m.LoadTime <= 0 {
		m.LoadTime = time.Millisecond
	}
	if m.PromptRate <= 0 {
		m.PromptRate = 4e6
	}
	t, err := parseTemplate(m.Template)
	if err != nil {
		return m, err
	}
	m.tmpl = t
	return m, nil
}

// SetRenderSupport turns the server's _debug_render_only on (the default)
// or off: off, the field is ignored and requests are answered normally, as
// by a server without the feature. ModelSpec.NoRender turns it off for
// one model.
func (s *Server) SetRenderSupport(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noRender = !on
}

// On adds a rule answering chat and generate requests that match every
// matcher (no matchers: every request). Set its reply with Reply.
func (s *Server) On(matchers ...Matcher) *Rule {
	r := &Rule{when: slices.Clone(matchers)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, r)
	r.label = fmt.Sprintf("rule %d", len(s.rules))
	return r
}

// Default sets the reply for requests no rule matches. Without one, such a
// request gets a 500 whose message says what was asked, so a test that
// forgot a rule fails saying so.
func (s *Server) Default(steps ...Step) *Rule {
	r := &Rule{label: "default"}
	r.Reply(steps...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = r
	return r
}

// SetVersion sets what /api/version answers.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// FailEndpoint makes every request to path (e.g. "/api/tags") fail with
// status and {"error": message}; status 0 removes the failure.
func (s *Server) FailEndpoint(path string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = make(map[string]failure)
	}
	if status == 0 {
		delete(s.failures, path)
		return
	}
	s.failures[path] = failure{status: status, msg: message}
}

// LogTo writes one line per request to w (nil stops logging).
func (s *Server) LogTo(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = w
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// Chats returns the decoded body of every /api/chat request, in order.
func (s *Server) Chats() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []api.ChatRequest
	for _, r := range s.requests {
		if r.Chat != nil {
			out = append(out, *r.Chat)
		}
	}
	return out
}

// ServeHTTP answers one request; the Server is an http.Handler so it can
// also be mounted elsewhere.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "server closed")
		return
	}
	s.active.Add(1)
	s.mu.Unlock()
	defer s.active.Done()

	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	rec.Seq = len(s.requests)
	fail, failing := s.failures[r.URL.Path]
	s.mu.Unlock()

	sw := &statusWriter{ResponseWriter: w}
	defer s.logRequest(rec, sw)
	if failing {
		writeError(sw, fail.status, fail.msg)
		return
	}
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		sw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(sw, "Ollama is running")
	case r.URL.Path == "/api/version" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.mu.Lock()
		v := s.version
		s.mu.Unlock()
		writeJSON(sw, http.StatusOK, map[string]string{"version": v})
	case r.URL.Path == "/api/tags" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.handleTags(sw)
	case r.URL.Path == "/api/ps" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.handlePS(sw)
	case r.URL.Path == "/api/pull" && r.Method == http.MethodPost:
		s.handlePull(sw, r, rec)
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		s.handleShow(sw, rec)
	case r.URL.Path == "/api/embed" && r.Method == http.MethodPost:
		s.handleEmbed(sw, rec)
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.handleChat(sw, r, rec)
	case r.URL.Path == "/api/generate" && r.Method == http.MethodPost:
		s.handleGenerate(sw, r, rec)
	default:
		sw.Header().Set("Content-Type", "text/plain")
		sw.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(sw, "404 page not found")
	}
}

// record updates a request's record under the lock that Requests copies
// it under, so a test may poll while requests are in flight.
func (s *Server) record(update func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	update()
}

func (s *Server) logRequest(rec *Request, sw *statusWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Status = sw.status
	if s.log == nil {
		return
	}
	line := fmt.Sprintf("%s %s %s -> %d", time.Now().Format("15:04:05.000"), rec.Method, rec.Path, sw.status)
	if m := rec.model(); m != "" {
		line += " model=" + m
	}
	line += rec.windowSummary()
	if rec.Reply != "" {
		line += " by " + rec.Reply
	}
	fmt.Fprintln(s.log, printable(line))
}

// printable escapes control characters, so a model name or rule text
// from a client or a script cannot drive the terminal the log goes to.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// statusWriter remembers the status for the record and the log; Unwrap
// keeps http.ResponseController's Flush and Hijack working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// decode reads a request body the way the real server's JSON binding does,
// so malformed bodies get the same messages.
func decode(body []byte, v any) error {
	err := json.NewDecoder(bytes.NewReader(body)).Decode(v)
	if errors.Is(err, io.EOF) {
		return errors.New("missing request body")
	}
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"ollamatest: cannot encode the response"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// lookup finds a registered model by any spelling of its name.
func (s *Server) lookup(name string) (ModelSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupLocked(name)
}

func (s *Server) lookupLocked(name string) (ModelSpec, bool) {
	n := normalizeName(name)
	for _, m := range s.models {
		if m.Name == n {
			return *m, true
		}
	}
	return ModelSpec{}, false
}

func (s *Server) handleTags(w http.ResponseWriter) {
	s.mu.Lock()
	models := make([]api.ListModelResponse, 0, len(s.models))
	for _, m := range s.models {
		models = append(models, api.ListModelResponse{
			Name:       m.Name,
			Model:      m.Name,
			ModifiedAt: m.ModifiedAt,
			Size:       m.Size,
			Digest:     digest(m.Name),
			Details:    details(m),
		})
	}
	s.mu.Unlock()
	// Like Ollama: most recently modified first.
	slices.SortStableFunc(models, func(a, b api.ListModelResponse) int {
		return cmp.Compare(b.ModifiedAt.Unix(), a.ModifiedAt.Unix())
	})
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}

func (s *Server) handleShow(w http.ResponseWriter, rec *Request) {
	var req api.ShowRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() { rec.Show = &req })
	//lint:ignore SA1019 older clients still send "name", and the real server accepts it
	name := cmp.Or(req.Model, req.Name)
	if name == "" {
		writeError(w, http.StatusBadRequest, "model is required")
		return
	}
	m, ok := s.lookup(name)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	caps := make([]model.Capability, len(m.Capabilities))
	for i, c := range m.Capabilities {
		caps[i] = model.Capability(c)
	}
	resp := api.ShowResponse{
		Modelfile:  "# Modelfile generated by \"ollama show\"\nFROM " + fullName(m.Name) + "\n",
		Parameters: parameterLines(m.Parameters),
		Template:   m.tmpl.source,
		Details:    details(&m),
		ModelInfo: map[string]any{
			"general.architecture":         m.Family,
			"general.parameter_count":      parameterCount(m.ParameterSize),
			m.Family + ".context_length":   m.ContextLength,
			m.Family + ".embedding_length": m.EmbeddingLength,
		},
		Tensors:      []api.Tensor{{Name: "token_embd.weight", Type: cmp.Or(m.Quantization, "Q4_K"), Shape: []uint64{uint64(m.EmbeddingLength), 151936}}},
		Capabilities: caps,
		ModifiedAt:   m.ModifiedAt,
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleEmbed(w http.ResponseWriter, rec *Request) {
	var req api.EmbedRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() { rec.Embed = &req })
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		if in != "" {
			inputs = []string{in}
		}
	case []any:
		for _, v := range in {
			str, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "invalid input type")
				return
			}
			inputs = append(inputs, str)
		}
	case nil:
	default:
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	m, ok := s.lookup(req.Model)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	start := time.Now()
	opts, err := s.parseRunOptions(m, req.Options)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Embedding runs on a loaded model like anything else.
	lm, kind := s.acquire(m, opts, req.KeepAlive, rec.Seq)
	defer s.release(lm, rec.Seq, "")
	if kind != "" {
		time.Sleep(m.LoadTime)
	}
	loaded := time.Since(start)
	vecs := make([][]float32, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vecs[i] = Embedding(in, m.EmbeddingLength)
		tokens += CountTokens(in)
	}
	s.record(func() { rec.Load, rec.Window = kind, lm.window })
	writeJSON(w, http.StatusOK, api.EmbedResponse{
		Model:           req.Model,
		Embeddings:      vecs,
		TotalDuration:   max(time.Since(start), time.Microsecond),
		LoadDuration:    max(loaded, time.Microsecond),
		PromptEvalCount: tokens,
	})
}

// normalizeName lower-cases a model name and gives it its implicit tag.
func normalizeName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return ""
	}
	if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		name += ":latest"
	}
	return name
}

// fullName is the name as the server spells it in capability errors.
func fullName(name string) string {
	switch strings.Count(name, "/") {
	case 0:
		return "registry.ollama.ai/library/" + name
	case 1:
		return "registry.ollama.ai/" + name
	}
	return name
}

// baseName is the model part of a name: "library/qwen3:8b" -> "qwen3".
func baseName(name string) string {
	name = name[strings.LastIndex(name, "/")+1:]
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	return name
}

// digest is a stable stand-in for the manifest digest /api/tags reports.
func digest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// parameterCount reads a size like "8.2B" or "600M" (0 when unset).
func parameterCount(size string) int64 {
	size = strings.TrimSpace(strings.ToUpper(size))
	mult := 1.0
	switch {
	case strings.HasSuffix(size, "B"):
		mult, size = 1e9, strings.TrimSuffix(size, "B")
	case strings.HasSuffix(size, "M"):
		mult, size = 1e6, strings.TrimSuffix(size, "M")
	}
	f, err := strconv.ParseFloat(size, 64)
	if err != nil {
		return 0
	}
	return int64(f * mult)
}

// parameterLines lists parameters as /api/show does: one "name value" line
// each (a list gives one line per value), names padded to 30 columns,
// values in Go syntax. Sorted, where the real server follows map order.
func parameterLines(params map[string]any) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if list, ok := params[k].([]any); ok {
			for _, v := range list {
				lines = append(lines, fmt.Sprintf("%-*s %#v", 30, k, v))
			}
			continue
		}
		lines = append(lines, fmt.Sprintf("%-*s %#v", 30, k, params[k]))
	}
	return strings.Join(lines, "\n")
}

func details(m *ModelSpec) api.ModelDetails {
	return api.ModelDetails{
		Format:            "gguf",
		Family:            m.Family,
		Families:          []string{m.Family},
		ParameterSize:     m.ParameterSize,
		QuantizationLevel: m.Quantization,
	}
}
