// Package openaitest is a fake OpenAI-compatible server for tests: it
// listens on loopback and answers /v1/chat/completions (streamed as
// server-sent events, or whole) and /v1/models the way llama.cpp's
// llama-server, vLLM, LM Studio, Ollama's /v1 or OpenAI itself would —
// the Flavor decides whose model entries, extra endpoints, reasoning field
// and error bodies it uses. The error bodies are the servers' own, as
// their sources and their users' reports show them.
//
// What the model says is scripted, as in ollamatest:
//
//	srv := openaitest.New(t, openaitest.LlamaCpp)
//	srv.Model("qwen3")
//	srv.On(openaitest.UserSays("15% of 340")).Reply(
//		openaitest.Think("A percentage: the calculator is exact."),
//		openaitest.ToolCall("calculator", `{"expression":"15/100*340"}`).InPieces(6))
//	srv.On(openaitest.ToolResult("calculator")).Reply(openaitest.Text("15% of 340 is 51."))
//	... point the code under test at srv.BaseURL ...
//	sent := srv.Requests() // every request, decoded
//
// Before any rule is consulted the server checks the request as its flavor
// does: the API key (RequireKey), the model (llama.cpp serves its one
// model under any name; the others answer 404), tools for a model whose
// server refuses them (ModelSpec.NoTools: llama.cpp without --jinja, vLLM
// without --enable-auto-tool-choice, Ollama for a model without tools),
// and a conversation longer than the model's window (about four characters
// a token; Ollama cuts silently instead).
//
// Usage: when the request asks for it (stream_options.include_usage, or
// any non-streamed reply), prompt_tokens is about a quarter of the
// conversation's characters and completion_tokens the number of deltas
// sent; Rule.Usage sets exact figures and Rule.NoUsage sends none. The
// llama.cpp flavor adds its "timings", measured.
//
// The Server is an http.Handler, so it can also be mounted under /v1 of
// another fake.
package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// Flavor is which server the fake plays.
type Flavor string

// The servers the fake can play.
const (
	LlamaCpp Flavor = "llama.cpp"
	VLLM     Flavor = "vllm"
	LMStudio Flavor = "lmstudio"
	Ollama   Flavor = "ollama"
	OpenAI   Flavor = "openai"
)

// TB is the part of testing.TB the server needs.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// maxBody bounds what the server reads of a request body.
const maxBody = 64 << 20

// Server is a fake. Its methods are safe for concurrent use, and rules
// and models may be added while it serves.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:40123; BaseURL is
	// the API's, URL + "/v1". Both are empty for NewHandler's servers.
	URL, BaseURL string

	flavor  Flavor
	http    *httptest.Server
	closing chan struct{}
	active  sync.WaitGroup
	started time.Time

	mu        sync.Mutex
	closed    bool
	key       string
	models    []*ModelSpec
	rules     []*Rule
	fallback  *Rule
	requests  []*Request
	calls     int
	build     string
	failPaths map[string]int
}

// New starts a server of the given flavor on 127.0.0.1 and closes it when
// the test ends.
func New(t TB, flavor Flavor) *Server {
	t.Helper()
	s := NewHandler(flavor)
	s.http = httptest.NewServer(s)
	s.URL = s.http.URL
	s.BaseURL = s.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// NewHandler returns a server that does not listen: mount it (it is an
// http.Handler) where requests for /v1/... arrive.
func NewHandler(flavor Flavor) *Server {
	return &Server{
		flavor:  flavor,
		closing: make(chan struct{}),
		started: time.Now().UTC().Truncate(time.Second),
		build:   defaultVersion(flavor),
	}
}

func defaultVersion(f Flavor) string {
	switch f {
	case LlamaCpp:
		return "b6123-0a1b2c3d"
	case VLLM:
		return "0.10.1"
	}
	return ""
}

// Close stops the server: hanging and delayed replies end and Close
// returns once every handler has.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	if s.http != nil {
		s.http.CloseClientConnections()
		s.http.Close()
	}
	s.active.Wait()
}

// ClosedURL returns the base URL of a loopback port nothing listens on.
func ClosedURL(t TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("openaitest: %v", err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	if err := ln.Close(); err != nil {
		t.Fatalf("openaitest: %v", err)
	}
	return url
}

// ModelSpec describes a model the server serves.
type ModelSpec struct {
	Name string
	// Window is the context the server enforces (llama-server -c, vLLM's
	// max_model_len, LM Studio's loaded context); 0 means 32768.
	Window int
	// TrainWindow is the model's own maximum (llama.cpp's n_ctx_train, LM
	// Studio's max_context_length); 0 means Window.
	TrainWindow int
	// NoTools makes the server refuse tools for this model, as its flavor
	// does.
	NoTools      bool
	Size         int64
	Params       int64
	Arch         string
	Quantization string
	// SupportedParameters, for the OpenAI flavor, lists what a hosted
	// API's model entry says it takes (OpenRouter's shape).
	SupportedParameters []string
}

// Model adds (or replaces) a model with the defaults.
func (s *Server) Model(name string) *Server { return s.AddModel(ModelSpec{Name: name}) }

// AddModel adds (or replaces) a model described in full.
func (s *Server) AddModel(m ModelSpec) *Server {
	if m.Window == 0 {
		m.Window = 32768
	}
	if m.TrainWindow == 0 {
		m.TrainWindow = m.Window
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, old := range s.models {
		if old.Name == m.Name {
			s.models[i] = &m
			return s
		}
	}
	s.models = append(s.models, &m)
	return s
}

// RequireKey makes the server refuse requests without this bearer key
// ("" accepts any request again).
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// SetVersion sets what llama.cpp's /props build_info or vLLM's /version
// answers.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.build = v
}

// FailPath makes every request to path (e.g. "/props") answer status with
// the flavor's error body; 0 removes the failure.
func (s *Server) FailPath(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failPaths == nil {
		s.failPaths = make(map[string]int)
	}
	if status == 0 {
		delete(s.failPaths, path)
		return
	}
	s.failPaths[path] = status
}

// On adds a rule answering chat requests that match every matcher (none:
// every request). Set its reply with Reply.
func (s *Server) On(matchers ...Matcher) *Rule {
	r := &Rule{when: slices.Clone(matchers)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, r)
	r.label = fmt.Sprintf("rule %d", len(s.rules))
	return r
}

// Default sets the reply for requests no rule matches. Without one, such a
// request gets a 500 saying what was asked.
func (s *Server) Default(steps ...Step) *Rule {
	r := &Rule{label: "default"}
	r.Reply(steps...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = r
	return r
}

// Request is one request the server received. Chat is the decoded body of
// a chat completion (nil when it did not decode). Treat it as read-only.
type Request struct {
	Seq    int
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Chat   *ChatRequest
	// Status is the HTTP status the server answered with; Reply names the
	// rule that answered.
	Status int
	Reply  string
}

// ChatRequest is a chat completion request as the server decoded it.
type ChatRequest struct {
	Model         string    `json:"model"`
	Messages      []Message `json:"messages"`
	Tools         []Tool    `json:"tools"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	Seed                *int     `json:"seed"`
	ReasoningEffort     string   `json:"reasoning_effort"`
}

// Message is one message of a request. Content is kept raw: a string,
// null, or an array of parts.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []SentToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

// Text is the message's text: its string content, or its text parts
// joined.
func (m *Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// SentToolCall is a tool call in an assistant message of a request.
type SentToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool offered in a request; Parameters keeps the schema's
// bytes (and so their order).
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Messages returns the conversation of a chat request.
func (r *Request) Messages() []Message {
	if r.Chat == nil {
		return nil
	}
	return r.Chat.Messages
}

func (r *Request) last() *Message {
	msgs := r.Messages()
	if len(msgs) == 0 {
		return nil
	}
	return &msgs[len(msgs)-1]
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

// ToolName is the name of the tool whose call has this id, from the
// assistant messages of the conversation ("" when none has it).
func (r *Request) ToolName(callID string) string {
	for _, m := range r.Messages() {
		for _, tc := range m.ToolCalls {
			if tc.ID == callID {
				return tc.Function.Name
			}
		}
	}
	return ""
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

// Chats returns the decoded body of every chat request, in order.
func (s *Server) Chats() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ChatRequest
	for _, r := range s.requests {
		if r.Chat != nil {
			out = append(out, *r.Chat)
		}
	}
	return out
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.writeError(w, http.StatusServiceUnavailable, "server closed")
		return
	}
	s.active.Add(1)
	key, fail := s.key, s.failPaths[r.URL.Path]
	s.mu.Unlock()
	defer s.active.Done()

	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	rec.Seq = len(s.requests)
	s.mu.Unlock()
	sw := &fakewire.StatusWriter{ResponseWriter: w}
	defer func() { s.record(func() { rec.Status = sw.Status }) }()

	if fail != 0 {
		s.writeError(sw, fail, http.StatusText(fail))
		return
	}
	if key != "" && strings.HasPrefix(r.URL.Path, "/v1/") && r.Header.Get("Authorization") != "Bearer "+key {
		s.refuseKey(sw, r.Header.Get("Authorization"))
		return
	}
	get := r.Method == http.MethodGet
	switch {
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.handleChat(sw, r, rec)
	case r.URL.Path == "/v1/models" && get:
		s.handleModels(sw)
	case r.URL.Path == "/props" && get && s.flavor == LlamaCpp:
		s.handleProps(sw)
	case r.URL.Path == "/health" && get && (s.flavor == LlamaCpp || s.flavor == VLLM):
		writeJSON(sw, http.StatusOK, map[string]string{"status": "ok"})
	case r.URL.Path == "/version" && get && s.flavor == VLLM:
		s.mu.Lock()
		v := s.build
		s.mu.Unlock()
		writeJSON(sw, http.StatusOK, map[string]string{"version": v})
	case r.URL.Path == "/api/v0/models" && get && s.flavor == LMStudio:
		s.handleLMStudioModels(sw)
	default:
		s.notFound(sw, r)
	}
}

// record updates a request's record under the lock Requests copies it
// under.
func (s *Server) record(update func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	update()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"openaitest: cannot encode the response"}`)
	}
	writeRaw(w, status, "application/json", b)
}

func writeRaw(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// lookup finds the model a request names. llama.cpp serves its one model
// under any name (the first registered, or one it makes up).
func (s *Server) lookup(name string) (ModelSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.models {
		if m.Name == name {
			return *m, true
		}
	}
	if s.flavor == LlamaCpp {
		if len(s.models) > 0 {
			return *s.models[0], true
		}
		return ModelSpec{Name: name, Window: 32768, TrainWindow: 32768}, true
	}
	return ModelSpec{}, false
}

func (s *Server) modelList() []ModelSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ModelSpec, len(s.models))
	for i, m := range s.models {
		out[i] = *m
	}
	return out
}

// decode reads a JSON body strictly enough to catch a malformed one.
func decode(body []byte, v any) error {
	return json.NewDecoder(bytes.NewReader(body)).Decode(v)
}
