// Package openai implements engine.InferenceEngine for servers that speak
// the OpenAI API — llama.cpp's llama-server, vLLM, SGLang, LM Studio,
// Ollama's /v1 and hosted APIs — on OpenAI's official Go SDK,
// github.com/openai/openai-go/v3: /v1/chat/completions streamed as
// server-sent events, /v1/models, and the extras some servers add
// (llama.cpp's /props, vLLM's /version, LM Studio's /api/v0/models).
//
// Besides converting types, the engine adds what a person needs: reasoning
// text under either of its two names, tool calls assembled from their
// deltas, usage estimated when the server reports none, a stream cut off
// before its end told apart from a finished one, and typed errors
// (engine.UnreachableError, ModelNotFoundError, ToolsUnsupportedError,
// ContextOverflowError, StreamError, and this package's AuthError and
// RateLimitError) whose advice names these servers' own flags.
//
// Tests run it against openaitest, a loopback fake of these servers.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// EnvAPIKey is where OpenAI's own tools, and jarvis's configuration, look
// for a key when none is configured.
const EnvAPIKey = "OPENAI_API_KEY"

// Engine talks to one OpenAI-compatible server. It is safe for concurrent
// use.
type Engine struct {
	base string // http://host:port/v1, without a trailing slash
	key  string // only to keep it out of messages
	// keyFrom says where the key is set, for the advice of AuthError.
	keyFrom string
	client  oai.Client
	chat    oai.ChatService
	models  oai.ModelService

	// maxCompletion is set once the server refused max_tokens and asked
	// for max_completion_tokens (OpenAI's reasoning models do).
	maxCompletion atomic.Bool

	mu      sync.Mutex
	shown   map[string]engine.ModelDetails
	noTools map[string]bool // models the server refused tools for
	// owners holds each described model's owned_by: it says which
	// server's own API can tell its window now (see windowNow).
	owners map[string]string
	// noNative is set when a server that names itself Ollama has no
	// native API beside /v1 to ask.
	noNative atomic.Bool
}

var (
	_ engine.InferenceEngine = (*Engine)(nil)
	_ engine.Describer       = (*Engine)(nil)
	_ engine.WindowAdvisor   = (*Engine)(nil)
)

// WindowAdvice says how to get a larger window: these servers fix it when
// they load the model, so a request's num_ctx cannot change it.
func (e *Engine) WindowAdvice() string { return windowAdvice }

// Option configures New.
type Option func(*config)

type config struct {
	key        string
	keyFrom    string
	httpClient *http.Client
}

// WithAPIKey sends key as a bearer token. Without it (or with "") no
// Authorization header is sent: local servers need none. The engine does
// not read OPENAI_API_KEY itself; whoever configures it decides.
func WithAPIKey(key string) Option {
	return func(c *config) { c.key = strings.TrimSpace(key) }
}

// WithKeyFrom says where the key is configured ("api_key of endpoint lab
// in the config"), for the advice when the server refuses it or wants
// one; without it the advice names api_key and OPENAI_API_KEY.
func WithKeyFrom(where string) Option {
	return func(c *config) { c.keyFrom = strings.TrimSpace(where) }
}

// WithHTTPClient uses c for requests instead of the engine's own client.
// Its Timeout should be zero: a reply streams for as long as the model
// writes, and callers bound calls with their context instead.
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) { cfg.httpClient = c }
}

// New returns an engine for the server at baseURL, read with ParseBaseURL:
// "http://127.0.0.1:8080/v1", "localhost:8080" (the /v1 is added to a URL
// without a path) or "https://openrouter.ai/api/v1".
func New(baseURL string, opts ...Option) (*Engine, error) {
	base, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	hc := cfg.httpClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	// The SDK is given every setting explicitly and built without
	// openai.NewClient, which would read OPENAI_API_KEY, OPENAI_BASE_URL
	// and more from the environment behind the configuration's back.
	ropts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		// A retry would hide a refused key or a full queue behind seconds
		// of silence; the person decides, with the error's advice.
		option.WithMaxRetries(0),
	}
	if cfg.key != "" {
		ropts = append(ropts, option.WithAPIKey(cfg.key))
	}
	return &Engine{
		base:    base,
		key:     cfg.key,
		keyFrom: cfg.keyFrom,
		client:  oai.Client{Options: ropts},
		chat:    oai.NewChatService(ropts...),
		models:  oai.NewModelService(ropts...),
		shown:   make(map[string]engine.ModelDetails),
		noTools: make(map[string]bool),
		owners:  make(map[string]string),
	}, nil
}

// ParseBaseURL checks and normalises a server's base URL. A missing scheme
// means http; a URL without a path gets /v1, where every one of these
// servers serves the API; a path is kept as written (a hosted API's
// "/api/v1", a proxy's prefix). The listen-everywhere addresses 0.0.0.0
// and [::] mean this machine.
func ParseBaseURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("no base URL given for the OpenAI-compatible server: write one like http://127.0.0.1:8080/v1")
	}
	raw := s
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid base URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("invalid base URL %q: the scheme must be http or https", raw)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("invalid base URL %q: it names no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("invalid base URL %q: write it without a query, fragment or user; the API key goes in its own setting", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("invalid base URL %q: port %q is not a number from 1 to 65535", raw, p)
		}
	}
	switch u.Hostname() {
	case "0.0.0.0":
		u.Host = joinHost("127.0.0.1", u.Port())
	case "::":
		u.Host = joinHost("::1", u.Port())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.RawPath = ""
	return u.String(), nil
}

func joinHost(host, port string) string {
	if port == "" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}

// defaultHTTPClient bounds only the connect: a server that is not there
// fails in seconds, while a model that loads for minutes is still waited
// for.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// Host returns the server's base URL (with its /v1).
func (e *Engine) Host() string { return e.base }

// Chat streams one reply (stream: true, with the final usage chunk asked
// for). Content and reasoning deltas reach onChunk as they arrive; tool
// calls are assembled from their deltas and reach onChunk whole, together,
// when the reply finishes (its finish_reason, or the stream's end), since a
// call's arguments are complete only then. Tool calls keep the server's id,
// or get "call_N" numbered after the calls already in the conversation.
//
// On error the returned response holds what arrived (tool calls of a reply
// cut short are dropped: their arguments may be incomplete): a
// *engine.StreamError when the connection dropped mid-reply, the context's
// error (wrapped) when ctx ended first, a *engine.ContextOverflowError
// when the reported prompt filled the server's window (it cut the
// conversation: see checkCut). A model the server lists as an embedding
// model is refused before anything is sent (*engine.NotAChatModelError).
func (e *Engine) Chat(ctx context.Context, req engine.ChatRequest, onChunk func(engine.Chunk)) (engine.ChatResponse, error) {
	start := time.Now()
	resp := engine.ChatResponse{Model: req.Model, Message: engine.Message{Role: engine.RoleAssistant}}
	what := "chat with " + req.Model
	if err := e.checkChatModel(ctx, req.Model); err != nil {
		return resp, err
	}
	r, err := newRequest(req.Model, req.Messages, req.Tools, req.Options, e.maxCompletion.Load())
	if err != nil {
		return resp, fmt.Errorf("%s: %w", what, err)
	}
	r.params.StreamOptions.IncludeUsage = oai.Bool(true)

	var raw *http.Response
	err = e.client.Post(ctx, "chat/completions", r.params, &raw, option.WithJSONSet("stream", true))
	if raw != nil && raw.Body != nil {
		defer raw.Body.Close()
	}
	if err != nil {
		resp.Usage.WallSeconds = time.Since(start).Seconds()
		if ctx.Err() == nil && connLost(err) {
			return resp, &engine.StreamError{Err: lostCause(err)}
		}
		err = e.classify(ctx, err, raw, req.Model, what)
		if e.switchToMaxCompletion(err, req.Options) {
			return e.Chat(ctx, req, onChunk)
		}
		return resp, err
	}
	if err := e.checkEventStream(raw, what); err != nil {
		return resp, err
	}

	dec := &doneWatcher{Decoder: ssestream.NewDecoder(raw)}
	stream := ssestream.NewStream[streamChunk](dec, nil)
	acc := assembler{onChunk: onChunk, ids: newIDSet(req.Messages)}
	var refused error
	for stream.Next() {
		c := stream.Current()
		if c.Object == "error" {
			refused = e.inStreamError(apiError{Message: cleanMessage(c.Message), Type: c.Type}, req.Model)
			break
		}
		acc.add(&c)
	}
	streamErr := stream.Err()
	_ = stream.Close()
	end := time.Now()

	complete := refused == nil && streamErr == nil && (acc.finished || dec.done)
	if complete {
		acc.deliverCalls()
	}
	e.finishReply(&resp, &acc, r.sentChars, complete, start, end)
	switch {
	case complete:
		return resp, e.checkCut(ctx, req.Model, resp)
	case refused != nil:
		return resp, refused
	case ctx.Err() != nil:
		return resp, fmt.Errorf("%s stopped: %w", what, ctx.Err())
	case streamErr == nil:
		return resp, &engine.StreamError{Received: acc.content.Len(), Err: errEndedEarly}
	case connLost(streamErr):
		return resp, &engine.StreamError{Received: acc.content.Len(), Err: lostCause(streamErr)}
	}
	return resp, e.classify(ctx, streamErr, nil, req.Model, what)
}

// switchToMaxCompletion reports whether err is a server refusing
// max_tokens in favour of max_completion_tokens (OpenAI's reasoning models)
// for a request that set num_predict, and if so sends the limit under the
// new name from now on. The refusal comes before any reply, so asking
// again is safe; the flag makes sure it happens once.
func (e *Engine) switchToMaxCompletion(err error, o engine.Options) bool {
	var se *engine.ServerError
	if o.NumPredict <= 0 || !errors.As(err, &se) || se.Status != http.StatusBadRequest ||
		!strings.Contains(se.Message, "max_completion_tokens") || !strings.Contains(se.Message, "not supported") {
		return false
	}
	return e.maxCompletion.CompareAndSwap(false, true)
}

// errEndedEarly is the cause of a stream that ended cleanly but without a
// finish_reason or [DONE]: the server (or a proxy) stopped in mid-reply.
var errEndedEarly = errors.New("the stream ended before the reply finished")

// checkEventStream refuses a 200 that is a web page or a JSON document
// rather than an event stream: a base URL that points at something other
// than the API (a proxy's login page, another service) answers that way,
// and reading it as events would find nothing. Anything else (a missing or
// plain-text content type from a minimal server) is read as events.
func (e *Engine) checkEventStream(raw *http.Response, what string) error {
	ct := raw.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "text/html" && mt != "application/json" {
		return nil
	}
	return fmt.Errorf("%s: the server at %s answered with %s instead of an event stream; check the base URL (it usually ends in /v1)", what, e.base, ct)
}

// finishReply fills the response from what the stream delivered. Usage is
// the server's final figures when it sent them, else an estimate (about
// four characters a token, marked Estimated). Durations are llama.cpp's
// own timings when it sent them, else measured here: the prompt from the
// request to the first delta, generation from the first delta to the end.
func (e *Engine) finishReply(resp *engine.ChatResponse, a *assembler, sentChars int, complete bool, start, end time.Time) {
	if a.model != "" {
		resp.Model = a.model
	}
	// Copies: the builders' buffers have grown by doubling, and the reply
	// is kept for the rest of the session.
	resp.Message.Content = strings.Clone(a.content.String())
	resp.Message.Thinking = strings.Clone(a.thinking.String())
	if complete {
		resp.Message.ToolCalls = a.toolCalls()
		resp.DoneReason = a.finish
	}
	received := a.content.Len() + a.thinking.Len()
	for _, b := range a.calls {
		received += len(b.name) + b.args.Len()
	}
	resp.Usage = replyUsage(a.usage, a.timings, sentChars, received, start, a.firstDelta, end)
}

// replyUsage turns what the server reported into events.Usage, measuring
// and estimating what it did not report.
func replyUsage(u *oai.CompletionUsage, t *llamaTimings, sentChars, receivedChars int, start, firstDelta, end time.Time) events.Usage {
	var out events.Usage
	out.WallSeconds = end.Sub(start).Seconds()
	switch {
	case u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0):
		out.PromptTokens = int(u.PromptTokens)
		out.OutputTokens = int(u.CompletionTokens)
		out.ThinkingTokens = int(u.CompletionTokensDetails.ReasoningTokens)
	case t != nil && (t.PromptN > 0 || t.PredictedN > 0):
		// llama.cpp's prompt_n counts only what it did not have cached;
		// usage, when sent, is the whole prompt.
		out.PromptTokens = t.PromptN
		out.OutputTokens = t.PredictedN
	default:
		out.PromptTokens = estimateTokens(sentChars)
		out.OutputTokens = estimateTokens(receivedChars)
		out.Estimated = true
	}
	if t != nil && t.PredictedMS > 0 {
		out.PromptSeconds = t.PromptMS / 1e3
		out.EvalSeconds = t.PredictedMS / 1e3
		out.TotalSeconds = out.PromptSeconds + out.EvalSeconds
		out.TokensPerSec = t.PredictedPerSecond
		if out.TokensPerSec == 0 {
			out.TokensPerSec = float64(t.PredictedN) / out.EvalSeconds
		}
		return out
	}
	if !firstDelta.IsZero() {
		out.PromptSeconds = firstDelta.Sub(start).Seconds()
		out.EvalSeconds = end.Sub(firstDelta).Seconds()
		if out.EvalSeconds > 0 && out.OutputTokens > 0 {
			out.TokensPerSec = float64(out.OutputTokens) / out.EvalSeconds
		}
	}
	return out
}

// Generate answers one prompt without streaming (the llm tool's
// sub-query): a chat completion with the system prompt and the prompt as
// a user message.
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest) (engine.GenerateResponse, error) {
	start := time.Now()
	out := engine.GenerateResponse{Model: req.Model}
	what := "generate with " + req.Model
	var msgs []engine.Message
	if req.System != "" {
		msgs = append(msgs, engine.Message{Role: engine.RoleSystem, Content: req.System})
	}
	msgs = append(msgs, engine.Message{Role: engine.RoleUser, Content: req.Prompt})
	r, err := newRequest(req.Model, msgs, nil, req.Options, e.maxCompletion.Load())
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	var httpResp *http.Response
	cc, err := e.chat.Completions.New(ctx, r.params, option.WithResponseInto(&httpResp))
	end := time.Now()
	if err != nil {
		if ctx.Err() == nil && connLost(err) {
			return out, &engine.StreamError{Err: lostCause(err)}
		}
		err = e.classify(ctx, err, httpResp, req.Model, what)
		if e.switchToMaxCompletion(err, req.Options) {
			return e.Generate(ctx, req)
		}
		return out, err
	}
	if cc.Model != "" {
		out.Model = cc.Model
	}
	received := 0
	if len(cc.Choices) > 0 {
		msg := cc.Choices[0].Message
		out.Content = msg.Content
		received = len(msg.Content) + len(rawString(msg.JSON.ExtraFields["reasoning_content"].Raw())) +
			len(rawString(msg.JSON.ExtraFields["reasoning"].Raw()))
	}
	var usage *oai.CompletionUsage
	if cc.JSON.Usage.Valid() {
		usage = &cc.Usage
	}
	var timings *llamaTimings
	if raw := cc.JSON.ExtraFields["timings"].Raw(); raw != "" && raw != "null" {
		timings = new(llamaTimings)
		if json.Unmarshal([]byte(raw), timings) != nil {
			timings = nil
		}
	}
	// Without streaming there is no first token to time: the whole call
	// counts as generation.
	out.Usage = replyUsage(usage, timings, r.sentChars, received, start, start, end)
	return out, nil
}

// rawString decodes a JSON string read raw from an SDK type's extra
// fields ("" for anything else).
func rawString(raw string) string {
	var s string
	if raw == "" || json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}
