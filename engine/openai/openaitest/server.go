// Package openaitest is a stand-in for OpenAI-compatible servers, for
// tests and demos: it listens on loopback and answers
// /v1/chat/completions (streamed as server-sent events, or whole) and
// /v1/models the way llama.cpp's llama-server, vLLM, LM Studio or OpenAI
// itself would; the Flavor decides whose model entries, extra endpoints,
// reasoning field and error bodies it uses. The error bodies are the
// servers' own, as their sources and their users' reports show them.
// (Ollama's /v1 is served by ollamatest, through Ollama's own translation
// code.)
//
// What the model says is scripted in the scenario language of package
// enginetest, shared with ollamatest:
//
//	srv := openaitest.New(t, openaitest.LlamaCpp)
//	srv.AddModel(openaitest.ModelSpec{Name: "qwen3", Window: 8192})
//	srv.On(et.UserSays("15% of 340")).Reply(
//		et.Think("A percentage: the calculator is exact."),
//		et.ToolCall("calculator", `{"expression":"15/100*340"}`).InPieces(6))
//	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
//	... point the code under test at srv.BaseURL ...
//	sent := srv.Requests() // every request, decoded
//
// Before any rule is consulted the server checks the request as its flavor
// does: the API key (RequireKey), the model (llama.cpp serves its one
// model under any name; the others answer 404), tools for a model whose
// server refuses them (ModelSpec.NoTools: llama.cpp without --jinja, vLLM
// without --enable-auto-tool-choice), and a conversation longer than the
// model's window (about four characters a token), refused in the
// flavor's words.
//
// Each flavor says what the window is where the real server does: vLLM's
// max_model_len in its /v1/models entries, llama.cpp's
// default_generation_settings.n_ctx in GET /props (and its GGUF's
// n_ctx_train in the entry's meta), LM Studio's loaded_context_length
// and max_context_length in GET /api/v0/models, a hosted API's
// context_length.
//
// Usage: when the request asks for it (stream_options.include_usage, or
// any non-streamed reply), prompt_tokens is about a quarter of the
// conversation's characters and completion_tokens the number of deltas
// sent; Rule.Usage sets exact figures and Rule.NoUsage sends none. The
// llama.cpp flavor adds its "timings", measured.
//
// The Server is an http.Handler, so it can also be mounted under /v1 of
// another server; LoadScript reads a scenario from a JSON file, which
// cmd/jarvis-standin serves.
package openaitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// Flavor is which server the fake plays.
type Flavor string

// The servers the fake can play.
const (
	LlamaCpp Flavor = "llama.cpp"
	VLLM     Flavor = "vllm"
	LMStudio Flavor = "lmstudio"
	OpenAI   Flavor = "openai"
)

// Flavors are the servers the stand-in plays, in the order people meet
// them.
var Flavors = []Flavor{LlamaCpp, VLLM, LMStudio, OpenAI}

// maxBody bounds what the server reads of a request body.
const maxBody = 64 << 20

// Server is a fake. Its methods are safe for concurrent use, and rules
// and models may be added while it serves.
type Server struct {
	// Scenario holds the rules: srv.On and srv.Default.
	enginetest.Scenario

	// URL is the server's root, e.g. http://127.0.0.1:40123; BaseURL is
	// the API's, URL + "/v1". Both are empty for NewHandler's servers.
	URL, BaseURL string

	flavor  Flavor
	core    fakewire.Core
	closing <-chan struct{}
	started time.Time

	mu        sync.Mutex
	key       string
	models    []*ModelSpec
	requests  []*Request
	calls     int
	build     string
	failPaths map[string]int
}

// New starts a server of the given flavor on 127.0.0.1 and closes it when
// the test ends.
func New(t enginetest.TB, flavor Flavor) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", flavor, nil)
	if err != nil {
		t.Fatalf("openaitest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen starts a server of the given flavor on addr (host:port; port 0
// picks a free one) with script applied (nil for none). Close stops it.
func Listen(addr string, flavor Flavor, script *Script) (*Server, error) {
	s := NewHandler(flavor)
	if script != nil {
		s.Use(script)
	}
	url, err := s.core.Listen(addr, s)
	if err != nil {
		return nil, err
	}
	s.URL, s.BaseURL = url, url+"/v1"
	return s, nil
}

// NewHandler returns a server that does not listen: mount it (it is an
// http.Handler) where requests for /v1/... arrive.
func NewHandler(flavor Flavor) *Server {
	s := &Server{
		flavor:  flavor,
		started: time.Now().UTC().Truncate(time.Second),
		build:   defaultVersion(flavor),
	}
	s.closing = s.core.Closing()
	return s
}

// Flavor is the server the stand-in plays.
func (s *Server) Flavor() Flavor { return s.flavor }

func defaultVersion(f Flavor) string {
	switch f {
	case LlamaCpp:
		return "b6123-0a1b2c3d"
	case VLLM:
		return "0.10.1"
	}
	return ""
}

// Close stops the server: hanging and delayed replies end, connections
// close, and Close returns once every handler has.
func (s *Server) Close() { s.core.Close() }

// ClosedURL returns the base URL of a loopback port nothing listens on.
func ClosedURL(t enginetest.TB) string {
	t.Helper()
	url, err := fakewire.ClosedURL()
	if err != nil {
		t.Fatalf("openaitest: %v", err)
	}
	return url + "/v1"
}

// ModelSpec describes a model the server serves. In a script file the
// keys are the JSON names below.
type ModelSpec struct {
	Name string `json:"name"`
	// Window is the context the server enforces (llama-server -c, vLLM's
	// max_model_len, LM Studio's loaded context); 0 means 32768.
	Window int `json:"window,omitempty"`
	// TrainWindow is the model's own maximum (llama.cpp's n_ctx_train, LM
	// Studio's max_context_length); 0 means Window.
	TrainWindow int `json:"train_window,omitempty"`
	// NoTools makes the server refuse tools for this model, as its flavor
	// does.
	NoTools bool `json:"no_tools,omitempty"`
	// Type is LM Studio's kind of model in /api/v0/models: "llm" (the
	// default), "vlm" (reads images) or "embeddings".
	Type string `json:"type,omitempty"`
	// NotLoaded is an LM Studio model that is downloaded but not loaded:
	// /api/v0/models lists it without a loaded_context_length.
	NotLoaded    bool   `json:"not_loaded,omitempty"`
	Size         int64  `json:"size,omitempty"`
	Params       int64  `json:"params,omitempty"`
	Arch         string `json:"arch,omitempty"`
	Quantization string `json:"quantization,omitempty"`
	// SupportedParameters, for the OpenAI flavor, lists what a hosted
	// API's model entry says it takes (OpenRouter's shape).
	SupportedParameters []string `json:"supported_parameters,omitempty"`
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

// call is the request as the scenario reads it.
func (r *Request) call() *enginetest.Call {
	c := &enginetest.Call{Seq: r.Seq, Path: r.Path, Request: r}
	if r.Chat == nil {
		return c
	}
	c.Model, c.Stream = r.Chat.Model, r.Chat.Stream
	for _, t := range r.Chat.Tools {
		c.Tools = append(c.Tools, t.Function.Name)
	}
	for _, m := range r.Chat.Messages {
		msg := enginetest.Message{Role: m.Role, Content: m.Text(), ToolCallID: m.ToolCallID}
		if m.Role == "tool" {
			msg.ToolName = r.ToolName(m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, enginetest.MessageCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		c.Messages = append(c.Messages, msg)
	}
	return c
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
	if !s.core.Enter() {
		s.writeError(w, http.StatusServiceUnavailable, "server closed")
		return
	}
	defer s.core.Leave()
	s.mu.Lock()
	key, fail := s.key, s.failPaths[r.URL.Path]
	s.mu.Unlock()

	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	rec.Seq = len(s.requests)
	s.mu.Unlock()
	sw := &fakewire.StatusWriter{ResponseWriter: w}
	defer s.logRequest(rec, sw)

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

// LogTo writes one line per request to w (nil stops logging).
func (s *Server) LogTo(w io.Writer) { s.core.LogTo(w) }

// logRequest records the status and logs the request: its model and the
// rule that answered.
func (s *Server) logRequest(rec *Request, sw *fakewire.StatusWriter) {
	s.record(func() { rec.Status = sw.Status })
	var detail strings.Builder
	if rec.Chat != nil {
		detail.WriteString(" model=" + rec.Chat.Model)
	}
	if rec.Reply != "" {
		detail.WriteString(" by " + rec.Reply)
	}
	s.core.Log(rec.Method, rec.Path, sw.Status, detail.String())
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
