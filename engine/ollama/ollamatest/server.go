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
// Final-chunk metrics: prompt_eval_count is about one token per four
// characters of the conversation, eval_count is the number of chunks sent,
// and the durations are measured, so a slow script (ChunkDelay) reports a
// realistic speed. Rule.Metrics sets exact figures instead.
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

	// Status is the HTTP status the server answered with.
	Status int
	// Reply names the scripted reply that answered ("rule 2 (user says
	// ...)" or "default"); empty when none did.
	Reply string
}

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
		closing: make(chan struct{}),
		started: time.Now().UTC().Truncate(time.Second),
		version: DefaultVersion,
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
	Capabilities    []string  `json:"capabilities,omitempty"`
	Size            int64     `json:"size,omitempty"`
	Family          string    `json:"family,omitempty"`
	ParameterSize   string    `json:"parameter_size,omitempty"`
	Quantization    string    `json:"quantization,omitempty"`
	ContextLength   int       `json:"context_length,omitempty"`
	EmbeddingLength int       `json:"embedding_length,omitempty"`
	ModifiedAt      time.Time `json:"modified_at,omitzero"`
}

// Model adds (or replaces) a model with the given capabilities
// ("completion", "tools", "thinking", ...; none means completion only).
func (s *Server) Model(name string, caps ...string) *Server {
	return s.AddModel(ModelSpec{Name: name, Capabilities: caps})
}

// AddModel adds (or replaces) a model described in full.
func (s *Server) AddModel(m ModelSpec) *Server {
	m.Name = normalizeName(m.Name)
	if len(m.Capabilities) == 0 {
		m.Capabilities = []string{"completion"}
	}
	m.Capabilities = slices.Clone(m.Capabilities)
	if m.Family == "" {
		m.Family = baseName(m.Name)
	}
	if m.ContextLength == 0 {
		m.ContextLength = 32768
	}
	if m.EmbeddingLength == 0 {
		m.EmbeddingLength = 64
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ModifiedAt.IsZero() {
		m.ModifiedAt = s.started
	}
	for i, old := range s.models {
		if old.Name == m.Name {
			s.models[i] = &m
			return s
		}
	}
	s.models = append(s.models, &m)
	return s
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
	if rec.Reply != "" {
		line += " by " + rec.Reply
	}
	fmt.Fprintln(s.log, line)
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
	n := normalizeName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
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
		Parameters: "temperature                    0.7",
		Template:   "{{ .Prompt }}",
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
	vecs := make([][]float32, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vecs[i] = Embedding(in, m.EmbeddingLength)
		tokens += estimateTokens(in)
	}
	writeJSON(w, http.StatusOK, api.EmbedResponse{
		Model:           req.Model,
		Embeddings:      vecs,
		TotalDuration:   max(time.Since(start), time.Microsecond),
		LoadDuration:    time.Microsecond,
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

func details(m *ModelSpec) api.ModelDetails {
	return api.ModelDetails{
		Format:            "gguf",
		Family:            m.Family,
		Families:          []string{m.Family},
		ParameterSize:     m.ParameterSize,
		QuantizationLevel: m.Quantization,
	}
}
