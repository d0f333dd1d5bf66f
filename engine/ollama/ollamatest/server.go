// Package ollamatest is a stand-in for an Ollama server, for tests and
// demos. It listens on loopback and speaks Ollama's native API with the
// real server's wire format (as recorded in the project's notes on
// v0.17.4): status codes, error bodies, NDJSON chunk shapes and field
// order. Where the real server runs its own Go code, the stand-in runs
// the same code from the Ollama module: prompts are rendered by its
// template package (with the templates it ships) or its built-in
// renderers, a model's raw text becomes thinking and tool calls through
// its thinking, tools and model/parsers packages, and /v1 is translated
// by its openai package.
//
// What the model says is scripted in the scenario language of package
// enginetest, shared with openaitest. A test registers models and rules:
//
//	srv := ollamatest.New(t)
//	srv.Model("qwen3", "completion", "tools", "thinking")
//	srv.On(et.UserSays("15% of 340")).Reply(
//		et.Think("A percentage: the calculator is exact."),
//		et.ToolCall("calculator", `{"expression":"15/100*340"}`))
//	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
//	... point the code under test at srv.URL ...
//	sent := srv.Chats() // every /api/chat request, decoded
//
// Or script what the model writes and let Ollama's parsers read it, as
// on a real server:
//
//	srv.AddModel(ollamatest.ModelSpec{Name: "qwen3-coder", Capabilities: []string{"completion", "tools"},
//		Renderer: "qwen3-coder", Parser: "qwen3-coder"})
//	srv.On(et.UserSays("2+2")).Reply(et.Raw("<tool_call>\n<function=calculator>\n" +
//		"<parameter=expression>\n2+2\n</parameter>\n</function>\n</tool_call>"))
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
//   - The prompt is the model's template (or renderer) applied to the
//     messages and tools, as the real server's chatPrompt does it (see
//     Render), counted with CountTokens: a fixed rule, not
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
// Like a real Ollama it also serves the OpenAI-compatible API
// (/v1/chat/completions, /v1/models), translated to and from /api/chat
// by Ollama's own translation code, so the same script answers a client
// of either API.
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
// The same scripts load from JSON files (see LoadScript), and
// cmd/jarvis-standin serves them on their own (make standin).
package ollamatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// DefaultVersion is what /api/version answers unless SetVersion changes it.
const DefaultVersion = "0.17.4"

// maxBody bounds what the server reads of a request body.
const maxBody = 64 << 20

// Server is a running fake. Its methods are safe for concurrent use, and
// rules and models may be added while it serves.
type Server struct {
	// Scenario holds the rules: srv.On and srv.Default.
	enginetest.Scenario

	// URL is the base URL to give clients, e.g. http://127.0.0.1:40123.
	URL string

	core    fakewire.Core
	started time.Time

	mu       sync.Mutex
	version  string
	models   []*ModelSpec
	failures map[string]failure
	requests []*Request
	calls    int // tool call ids handed out
	// completions numbers the /v1 answers' ids.
	completions int

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

// New starts a server on 127.0.0.1 (a free port) and closes it when the
// test ends.
func New(t enginetest.TB) *Server {
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
	s := &Server{
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
	url, err := s.core.Listen(addr, s)
	if err != nil {
		return nil, err
	}
	s.URL = url
	return s, nil
}

// ClosedURL returns the URL of a loopback port nothing listens on: a
// server that is not running, for "connection refused" tests.
func ClosedURL(t enginetest.TB) string {
	t.Helper()
	url, err := fakewire.ClosedURL()
	if err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	return url
}

// Close stops the server: hanging and delayed replies end, open
// connections are closed, and Close returns once every handler has.
func (s *Server) Close() { s.core.Close() }

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
func (s *Server) LogTo(w io.Writer) { s.core.LogTo(w) }

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
	if !s.core.Enter() {
		writeError(w, http.StatusServiceUnavailable, "server closed")
		return
	}
	defer s.core.Leave()

	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	rec.Seq = len(s.requests)
	fail, failing := s.failures[r.URL.Path]
	s.mu.Unlock()

	sw := &fakewire.StatusWriter{ResponseWriter: w}
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
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.handleOpenAIChat(sw, r, rec)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.handleOpenAIModels(sw)
	case strings.HasPrefix(r.URL.Path, "/v1/models/") && r.Method == http.MethodGet:
		s.handleOpenAIModel(sw, rec)
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

func (s *Server) logRequest(rec *Request, sw *fakewire.StatusWriter) {
	s.record(func() { rec.Status = sw.Status })
	// The handler's goroutine is the one that fills rec: it reads it here
	// without the lock.
	detail := rec.windowSummary()
	if m := rec.model(); m != "" {
		detail = " model=" + m + detail
	}
	if rec.Reply != "" {
		detail += " by " + rec.Reply
	}
	s.core.Log(rec.Method, rec.Path, sw.Status, detail)
}

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
