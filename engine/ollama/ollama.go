// Package ollama implements engine.InferenceEngine (and engine.Embedder) on
// Ollama's official Go client, github.com/ollama/ollama/api, speaking the
// native API: /api/chat streamed as NDJSON, /api/generate, /api/show,
// /api/tags, /api/version and /api/embed. The streamed calls read the
// client's types with a reader of the engine's own (see stream.go).
//
// Besides converting types, the engine adds what the client leaves out:
// errors a person can act on (engine.UnreachableError, ModelNotFoundError,
// ToolsUnsupportedError, ThinkingUnsupportedError, StreamError), detection
// of a stream cut off before its final chunk (the client reports that as
// success), tool call ids when the server sends none, and a capability cache.
//
// Tests run it against ollamatest, a loopback fake of the server.
package ollama

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// Engine talks to one Ollama server. It is safe for concurrent use.
type Engine struct {
	host   string
	base   *url.URL
	http   *http.Client
	client *api.Client

	mu    sync.Mutex
	shown map[string]engine.ModelDetails // by normalized model name
	// levels holds, by normalized model name, whether the model takes a
	// thinking level (see ThinkFor); filled by Show.
	levels map[string]bool
	// noRender is set once the server showed it cannot render a prompt
	// without answering (it lacks _debug_render_only).
	noRender bool
}

var (
	_ engine.InferenceEngine = (*Engine)(nil)
	_ engine.Embedder        = (*Engine)(nil)
	_ engine.Describer       = (*Engine)(nil)
	_ engine.LoadLister      = (*Engine)(nil)
	_ engine.Renderer        = (*Engine)(nil)
	_ engine.Puller          = (*Engine)(nil)
	_ engine.Unloader        = (*Engine)(nil)
	_ engine.ThinkAdjuster   = (*Engine)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	httpClient *http.Client
}

// WithHTTPClient uses c for requests instead of the engine's own client. Its
// Timeout should be zero: a reply streams for as long as the model writes,
// and callers bound calls with their context instead.
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) { cfg.httpClient = c }
}

// New returns an engine for the server at host. An empty host is resolved
// with ResolveHost (OLLAMA_HOST, then engine.DefaultHost); any other is read
// with ParseHost, so "localhost:11434" or "http://gpu-box:11434" both work.
func New(host string, opts ...Option) (*Engine, error) {
	base, err := ResolveHost(host)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("invalid Ollama host %q: %w", base, err)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	hc := defaultHTTPClient()
	if cfg.httpClient != nil {
		c := *cfg.httpClient
		rt := c.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c.Transport = trackingTransport{base: rt}
		hc = &c
	}
	return &Engine{host: base, base: u, http: hc, client: api.NewClient(u, hc), shown: make(map[string]engine.ModelDetails), levels: map[string]bool{}}, nil
}

// defaultHTTPClient bounds only the connect: an unreachable server fails in
// seconds, while a model that takes minutes to load is still waited for.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: trackingTransport{base: t}}
}

// Host returns the server's base URL.
func (e *Engine) Host() string { return e.host }

// Chat streams one reply. Content and thinking deltas and whole tool calls
// reach onChunk in order on the caller's goroutine. Tool calls keep the
// server's id, or get "call_N" numbered after the calls already in the
// conversation, so ids stay unique within it.
//
// On error the returned response holds what arrived: a *engine.StreamError
// when the connection dropped mid-reply, the context's error (wrapped) when
// ctx ended first.
func (e *Engine) Chat(ctx context.Context, req engine.ChatRequest, onChunk func(engine.Chunk)) (engine.ChatResponse, error) {
	start := time.Now()
	resp := engine.ChatResponse{Model: req.Model, Message: engine.Message{Role: engine.RoleAssistant}}
	what := "chat with " + req.Model

	msgs, err := toAPIMessages(req.Messages)
	if err != nil {
		return resp, fmt.Errorf("%s: %w", what, err)
	}
	sent, _ := e.ThinkFor(ctx, req.Model, req.Options.Think)
	think, err := thinkValue(sent)
	if err != nil {
		return resp, err
	}
	areq := &api.ChatRequest{
		Model:     req.Model,
		Messages:  msgs,
		Tools:     toAPITools(req.Tools),
		Options:   apiOptions(req.Options),
		KeepAlive: keepAlive(req.Options),
		Think:     think,
		// The server's defaults cut a conversation that outgrows the
		// window from the front, silently, and shift a reply that fills
		// it. jarvis decides what the model sees: a request that does
		// not fit is refused (400) and a full window ends the reply with
		// done_reason "length".
		Truncate: &no,
		Shift:    &no,
	}

	acc := accumulator{onChunk: onChunk, nextID: priorToolCalls(req.Messages) + 1}
	tctx, tracker := withTracker(ctx)
	err = e.chat(tctx, areq, acc.add)
	acc.finish(&resp)
	resp.Usage.WallSeconds = time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() == nil && connLost(err) {
			return resp, &engine.StreamError{Received: acc.content.Len(), Err: lostCause(err)}
		}
		return resp, e.classify(ctx, err, req.Model, what)
	}
	if !acc.done {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return resp, fmt.Errorf("%s stopped: %w", what, ctxErr)
		}
		return resp, streamLost(tracker, acc.content.Len())
	}
	return resp, nil
}

// no is the false that truncate and shift point to.
var no = false

// priorToolCalls counts the tool calls already in the conversation.
func priorToolCalls(msgs []engine.Message) int {
	n := 0
	for i := range msgs {
		n += len(msgs[i].ToolCalls)
	}
	return n
}

// accumulator builds the reply from the stream's chunks.
type accumulator struct {
	onChunk  func(engine.Chunk)
	nextID   int
	content  strings.Builder
	thinking strings.Builder
	calls    []engine.ToolCall
	model    string
	final    api.ChatResponse
	done     bool
}

func (a *accumulator) add(r api.ChatResponse) error {
	var c engine.Chunk
	c.Content = r.Message.Content
	c.Thinking = r.Message.Thinking
	a.content.WriteString(c.Content)
	a.thinking.WriteString(c.Thinking)
	if len(r.Message.ToolCalls) > 0 {
		first := len(a.calls)
		for _, tc := range r.Message.ToolCalls {
			id := tc.ID
			if id == "" {
				id = "call_" + strconv.Itoa(a.nextID)
			}
			a.nextID++
			a.calls = append(a.calls, engine.ToolCall{
				ID:        id,
				Index:     len(a.calls),
				Name:      tc.Function.Name,
				Arguments: argumentsJSON(tc.Function.Arguments),
			})
		}
		c.ToolCalls = a.calls[first:len(a.calls):len(a.calls)]
	}
	if r.Model != "" {
		a.model = r.Model
	}
	if r.Done {
		a.done = true
		a.final = r
	}
	if a.onChunk != nil && (c.Content != "" || c.Thinking != "" || len(c.ToolCalls) > 0) {
		a.onChunk(c)
	}
	return nil
}

func (a *accumulator) finish(resp *engine.ChatResponse) {
	if a.model != "" {
		resp.Model = a.model
	}
	// Copies: the builders' buffers have grown by doubling, and the reply
	// is kept for the rest of the session.
	resp.Message.Content = strings.Clone(a.content.String())
	resp.Message.Thinking = strings.Clone(a.thinking.String())
	resp.Message.ToolCalls = a.calls
	if a.done {
		resp.DoneReason = a.final.DoneReason
		resp.Usage = usage(a.final.Metrics)
	}
}

// usage converts the final chunk's metrics.
func usage(m api.Metrics) events.Usage {
	u := events.Usage{
		PromptTokens:  m.PromptEvalCount,
		OutputTokens:  m.EvalCount,
		EvalSeconds:   m.EvalDuration.Seconds(),
		PromptSeconds: m.PromptEvalDuration.Seconds(),
		LoadSeconds:   m.LoadDuration.Seconds(),
		TotalSeconds:  m.TotalDuration.Seconds(),
	}
	if u.EvalSeconds > 0 {
		u.TokensPerSec = float64(u.OutputTokens) / u.EvalSeconds
	}
	return u
}

// Generate answers one prompt without streaming (the llm tool's sub-query).
func (e *Engine) Generate(ctx context.Context, req engine.GenerateRequest) (engine.GenerateResponse, error) {
	start := time.Now()
	out := engine.GenerateResponse{Model: req.Model}
	what := "generate with " + req.Model
	sent, _ := e.ThinkFor(ctx, req.Model, req.Options.Think)
	think, err := thinkValue(sent)
	if err != nil {
		return out, err
	}
	stream := false
	areq := &api.GenerateRequest{
		Model:     req.Model,
		Prompt:    req.Prompt,
		System:    req.System,
		Stream:    &stream,
		Options:   apiOptions(req.Options),
		KeepAlive: keepAlive(req.Options),
		Think:     think,
	}
	var final *api.GenerateResponse
	var text strings.Builder
	tctx, tracker := withTracker(ctx)
	err = e.generate(tctx, areq, func(r api.GenerateResponse) error {
		text.WriteString(r.Response)
		if r.Done {
			final = &r
		}
		return nil
	})
	out.Content = text.String()
	if err != nil {
		if ctx.Err() == nil && connLost(err) {
			return out, &engine.StreamError{Received: text.Len(), Err: lostCause(err)}
		}
		return out, e.classify(ctx, err, req.Model, what)
	}
	if final == nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return out, fmt.Errorf("%s stopped: %w", what, ctxErr)
		}
		return out, streamLost(tracker, text.Len())
	}
	if final.Model != "" {
		out.Model = final.Model
	}
	out.Usage = usage(final.Metrics)
	out.Usage.WallSeconds = time.Since(start).Seconds()
	return out, nil
}

// ListModels lists the server's models, most recently changed first (the
// server's order). Capabilities are left empty: they cost one request per
// model, see Capabilities.
func (e *Engine) ListModels(ctx context.Context) ([]engine.ModelInfo, error) {
	lr, err := e.client.List(ctx)
	if err != nil {
		return nil, e.classify(ctx, err, "", "listing models")
	}
	out := make([]engine.ModelInfo, len(lr.Models))
	for i, m := range lr.Models {
		out[i] = engine.ModelInfo{
			Name:          m.Name,
			SizeBytes:     m.Size,
			ModifiedAt:    m.ModifiedAt,
			Family:        m.Details.Family,
			ParameterSize: m.Details.ParameterSize,
			Quantization:  m.Details.QuantizationLevel,
		}
	}
	return out, nil
}

// Capabilities returns what model can do, from /api/show (see Show for
// the caching).
func (e *Engine) Capabilities(ctx context.Context, model string) ([]string, error) {
	d, err := e.Show(ctx, model)
	if err != nil {
		return nil, err
	}
	return d.Capabilities, nil
}

// normalizeModel gives a model name its implicit ":latest" tag.
func normalizeModel(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.Contains(last, ":") {
		name += ":latest"
	}
	return name
}

// Version returns the server's version; it doubles as a reachability check.
func (e *Engine) Version(ctx context.Context) (string, error) {
	v, err := e.client.Version(ctx)
	if err != nil {
		return "", e.classify(ctx, err, "", "asking the server's version")
	}
	return v, nil
}

// Embed embeds inputs with model (/api/embed), one vector per input.
func (e *Engine) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	resp, err := e.client.Embed(ctx, &api.EmbedRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, e.classify(ctx, err, model, "embedding with "+model)
	}
	if len(resp.Embeddings) != len(inputs) {
		return nil, fmt.Errorf("embedding with %s: the server returned %d vectors for %d inputs", model, len(resp.Embeddings), len(inputs))
	}
	return resp.Embeddings, nil
}
