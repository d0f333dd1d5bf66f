package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// The advice the engine's typed errors give, in words for servers that
// speak the OpenAI API.
const (
	serverKind     = "the OpenAI-compatible server"
	unreachableFix = "Start the server (for example llama-server, vllm serve, or LM Studio's local server), or check the base URL: it usually ends in /v1, e.g. http://127.0.0.1:8080/v1"
	modelFix       = "Pick one the server lists with {{model}} (see {{models}}); servers such as vLLM and LM Studio serve only the models they were started with or have loaded"
	windowAdvice   = "restart the server with a larger window (llama-server -c N, vllm serve --max-model-len N, or the context length in LM Studio's load settings), then tell jarvis its size ({{window}}): the server fixes the window when it loads the model, so a request cannot change it"
	windowFix      = "The server fixes the window when it loads the model: restart it with a larger one (llama-server -c N, vllm serve --max-model-len N, or the context length in LM Studio's load settings), lower num_predict, or shorten the conversation; then tell jarvis the window ({{window}})"
	jinjaFix       = "llama-server takes tools only when started with --jinja (and a chat template that knows tools); restart it so, or use {{agent react}}, which works with any model"
	vllmToolsFix   = "vLLM takes tools only when started with --enable-auto-tool-choice and a --tool-call-parser for the model; restart it so, or use {{agent react}}, which works with any model"
	keyHint        = "api_key in the config or OPENAI_API_KEY"
)

// AuthError is a 401 or 403: the server wants an API key, or refused the
// one sent. It unwraps to the *engine.ServerError with the server's own
// words. The key itself never appears in the message.
type AuthError struct {
	Host    string
	Status  int
	Message string
	// KeySent says whether the request carried a key.
	KeySent bool
	// KeyFrom says where the key comes from, for the advice (WithKeyFrom);
	// "" means api_key in the config or OPENAI_API_KEY.
	KeyFrom string
}

func (e *AuthError) Error() string {
	said := fmt.Sprintf("HTTP %d", e.Status)
	if e.Message != "" {
		said += ": " + e.Message
	}
	keyHint := keyHint
	if e.KeyFrom != "" {
		keyHint = e.KeyFrom
	}
	switch {
	case !e.KeySent:
		return fmt.Sprintf("the server at %s wants an API key and none was sent (%s). Set %s", e.Host, said, keyHint)
	case e.Status == http.StatusForbidden:
		return fmt.Sprintf("the server at %s accepted the API key but refused the request (%s). Check what the key may use (its project, model access or permissions); it comes from %s", e.Host, said, keyHint)
	}
	return fmt.Sprintf("the server at %s refused the API key (%s). Check %s; the key is not shown", e.Host, said, keyHint)
}

// Unwrap lets errors.As find the *engine.ServerError.
func (e *AuthError) Unwrap() error { return &engine.ServerError{Status: e.Status, Message: e.Message} }

// RateLimitError is a 429: too many requests or tokens for now, or no
// quota left. RetryAfter is what the server asked to wait (from its
// retry-after-ms or retry-after header, or its message), 0 when it did not
// say.
type RateLimitError struct {
	Message    string
	RetryAfter time.Duration
	// Quota is set when the account has run out of credit: waiting does
	// not help.
	Quota bool
}

func (e *RateLimitError) Error() string {
	said := "HTTP 429"
	if e.Message != "" {
		said += ": " + e.Message
	}
	switch {
	case e.Quota:
		return fmt.Sprintf("the account has no quota left (%s). Retrying will not help; check the plan and billing of the key", said)
	case e.RetryAfter > 0:
		return fmt.Sprintf("the server is limiting the rate of requests (%s). Try again in %s", said, roundWait(e.RetryAfter))
	}
	return fmt.Sprintf("the server is limiting the rate of requests (%s). Try again in a little while", said)
}

// Unwrap lets errors.As find the *engine.ServerError.
func (e *RateLimitError) Unwrap() error {
	return &engine.ServerError{Status: http.StatusTooManyRequests, Message: e.Message}
}

func roundWait(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// classify turns what the SDK returned into the typed errors of package
// engine. resp is the HTTP response when the call got one: the SDK turns an
// error body it cannot read as OpenAI's ({"error":"text"}, a proxy's HTML
// page) into a bare JSON error, but leaves the response, body included, to
// whoever asked for it. what names the operation for errors that stay
// untyped; model is "" when the request was not about one model.
func (e *Engine) classify(ctx context.Context, err error, resp *http.Response, model, what string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// A cancelled call fails with whatever the transport saw when the
		// connection was torn down; the cause the caller cares about is ctx.
		return fmt.Errorf("%s stopped: %w", what, ctxErr)
	}
	var apiErr *oai.Error
	if resp == nil && errors.As(err, &apiErr) {
		resp = apiErr.Response
	}
	if resp != nil && resp.StatusCode >= 400 {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		}
		return e.statusError(resp.StatusCode, resp.Header, body, model)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return e.inStreamError(parseAPIError(streamErr.Event.Data), model)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return e.unreachable(op.Err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return e.unreachable(dns)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return fmt.Errorf("%s: the server at %s answered something that is not the OpenAI API (%v); check the base URL", what, e.base, err)
	}
	return fmt.Errorf("%s: request to %s failed: %w", what, e.base, lostCause(err))
}

func (e *Engine) unreachable(err error) error {
	return &engine.UnreachableError{Host: e.base, Err: err, Server: serverKind, Fix: unreachableFix}
}

// connLost reports whether err is the connection dropping (rather than
// never opening): the server went away while it should have been answering.
func connLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// lostCause strips the request line the HTTP client adds ("Post URL: EOF").
func lostCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// apiError is an error answer, normalised from the shapes servers use:
// {"error":{"message","type","code",...}} (OpenAI, llama.cpp, vLLM, LM
// Studio, Ollama's /v1), {"error":"text"} (vLLM's key check, LM Studio),
// {"object":"error","message",...} (older vLLM), {"detail":"text"}
// (FastAPI), or not JSON at all (a proxy's page).
type apiError struct {
	Message string
	Type    string
	Code    string
	// NPromptTokens and NCtx are llama.cpp's figures for a request that
	// does not fit.
	NPromptTokens int
	NCtx          int
}

func parseAPIError(body []byte) apiError {
	var top struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil {
		return apiError{Message: cleanMessage(string(body))}
	}
	var a apiError
	switch {
	case len(top.Error) > 0 && top.Error[0] == '{':
		var inner struct {
			Message       string          `json:"message"`
			Type          string          `json:"type"`
			Code          json.RawMessage `json:"code"`
			NPromptTokens int             `json:"n_prompt_tokens"`
			NCtx          int             `json:"n_ctx"`
		}
		_ = json.Unmarshal(top.Error, &inner)
		a = apiError{Message: inner.Message, Type: inner.Type, Code: codeString(inner.Code), NPromptTokens: inner.NPromptTokens, NCtx: inner.NCtx}
	case len(top.Error) > 0 && top.Error[0] == '"':
		_ = json.Unmarshal(top.Error, &a.Message)
	case top.Message != "":
		a = apiError{Message: top.Message, Type: top.Type, Code: codeString(top.Code)}
	case len(top.Detail) > 0:
		if json.Unmarshal(top.Detail, &a.Message) != nil {
			a.Message = string(top.Detail)
		}
	default:
		a.Message = string(body)
	}
	a.Message = cleanMessage(a.Message)
	return a
}

// codeString reads an error code written as a string ("model_not_found")
// or a number (400).
func codeString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// cleanMessage makes a server's message fit for one line of a terminal:
// control characters (escape sequences among them) become spaces, runs of
// space shrink, and a page-long answer is cut.
func cleanMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	const limit = 600
	if len(s) > limit {
		cut := limit
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

// statusError maps an HTTP error answer. The matches are on what the
// servers really send (openaitest mirrors each of them).
func (e *Engine) statusError(status int, header http.Header, body []byte, model string) error {
	a := parseAPIError(body)
	a.Message = e.redactKey(a.Message)
	if err := e.typedError(status, a, model); err != nil {
		return err
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &AuthError{Host: e.base, Status: status, Message: a.Message, KeySent: e.key != "", KeyFrom: e.keyFrom}
	case http.StatusTooManyRequests:
		return &RateLimitError{Message: a.Message, RetryAfter: retryAfter(header, a.Message, time.Now()), Quota: a.Code == "insufficient_quota"}
	}
	msg := a.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &engine.ServerError{Status: status, Message: msg}
}

// inStreamError maps an error event that arrived after the reply started
// ({"error":{...}} as data): the same refusals are recognised, anything
// else is a ServerError without a status.
func (e *Engine) inStreamError(a apiError, model string) error {
	a.Message = e.redactKey(a.Message)
	status, _ := strconv.Atoi(a.Code)
	if err := e.typedError(status, a, model); err != nil {
		return err
	}
	msg := a.Message
	if msg == "" {
		msg = "the server reported an error without a message"
	}
	return &engine.ServerError{Message: msg}
}

// typedError recognises the refusals that have an engine type: tools,
// thinking, a missing model, a request too long for the window. Tools come
// first: OpenRouter refuses them with a 404.
func (e *Engine) typedError(status int, a apiError, model string) error {
	lower := strings.ToLower(a.Message)
	switch {
	case strings.Contains(lower, "--jinja"):
		e.markNoTools(model)
		return &engine.ToolsUnsupportedError{Model: model, Fix: jinjaFix}
	case strings.Contains(lower, "enable-auto-tool-choice"):
		e.markNoTools(model)
		return &engine.ToolsUnsupportedError{Model: model, Fix: vllmToolsFix}
	case strings.Contains(lower, "does not support tools"),
		strings.Contains(lower, "support tool use"):
		e.markNoTools(model)
		return &engine.ToolsUnsupportedError{Model: model}
	case strings.Contains(lower, "does not support thinking"):
		return &engine.ThinkingUnsupportedError{Model: model}
	case isOverflow(a, lower):
		return overflowError(model, a)
	case model != "" && isModelMissing(status, a, lower):
		return &engine.ModelNotFoundError{Model: model, Fix: modelFix}
	}
	return nil
}

func isModelMissing(status int, a apiError, lower string) bool {
	if a.Code == "model_not_found" {
		return true
	}
	return status == http.StatusNotFound && strings.Contains(lower, "model") &&
		(strings.Contains(lower, "not found") || strings.Contains(lower, "does not exist") || strings.Contains(lower, "no models loaded"))
}

func isOverflow(a apiError, lower string) bool {
	return a.Code == "context_length_exceeded" || a.Type == "exceed_context_size_error" ||
		strings.Contains(lower, "maximum context length is") ||
		strings.Contains(lower, "exceeds the available context size") ||
		strings.Contains(lower, "exceeds context size") ||
		strings.Contains(lower, "larger than the max context size") ||
		strings.Contains(lower, "context length of only")
}

// The figures servers put in their words when a request does not fit.
var (
	// OpenAI and vLLM: "This model's maximum context length is 4096 tokens."
	reMaxContext = lazyregexp.New(`maximum context length is (\d+)`)
	// vLLM: "However, you requested 4200 tokens (3000 in the messages, 1200
	// in the completion)"; the messages part is the prompt.
	reInMessages = lazyregexp.New(`(\d+) in the messages`)
	// OpenAI: "However, your messages resulted in 130532 tokens"; vLLM:
	// "However, your request has 4176 input tokens".
	rePromptSaid = lazyregexp.New(`(?:resulted in|request has|you requested) (\d+)(?: input)? tokens`)
	// llama.cpp: "request (4476 tokens) exceeds the available context size
	// (4096 tokens)", older "input (4476 tokens) is larger than the max
	// context size (4096 tokens)".
	reLlamaPrompt = lazyregexp.New(`(?:request|input) \((\d+) tokens\)`)
	reLlamaWindow = lazyregexp.New(`context size \((\d+) tokens\)`)
	// LM Studio: "Trying to keep the first 5406 tokens when context the
	// overflows. However, the model is loaded with context length of only
	// 1056 tokens".
	reLMStudioWindow = lazyregexp.New(`context length of only (\d+) tokens`)
	reLMStudioPrompt = lazyregexp.New(`keep the first (\d+) tokens`)
)

func overflowError(model string, a apiError) *engine.ContextOverflowError {
	e := &engine.ContextOverflowError{Model: model, ServerMessage: a.Message, Fix: windowFix,
		Window: a.NCtx, PromptTokens: a.NPromptTokens}
	find := func(re func() *regexp.Regexp) int {
		if m := re().FindStringSubmatch(a.Message); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 0
	}
	for _, re := range []func() *regexp.Regexp{reMaxContext, reLlamaWindow, reLMStudioWindow} {
		if e.Window == 0 {
			e.Window = find(re)
		}
	}
	// vLLM's "'max_tokens' ... is too large" fits the prompt but not the
	// reply it was allowed: the prompt figure would mislead.
	if strings.Contains(a.Message, "is too large") {
		e.PromptTokens = 0
		return e
	}
	for _, re := range []func() *regexp.Regexp{reInMessages, rePromptSaid, reLlamaPrompt, reLMStudioPrompt} {
		if e.PromptTokens == 0 {
			e.PromptTokens = find(re)
		}
	}
	return e
}

// OpenAI writes the wait into its message: "Please try again in 20s",
// "try again in 120ms".
var reTryAgain = lazyregexp.New(`try again in (\d+(?:\.\d+)?)(ms|s)\b`)

// retryAfter reads how long a 429 asks to wait: retry-after-ms (OpenAI),
// then retry-after in seconds or as an HTTP date, then the message.
func retryAfter(h http.Header, msg string, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	if m := reTryAgain().FindStringSubmatch(strings.ToLower(msg)); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "ms" {
			return time.Duration(n * float64(time.Millisecond))
		}
		return time.Duration(n * float64(time.Second))
	}
	return 0
}

// redactKey hides the API key should a server (or a proxy) echo it.
func (e *Engine) redactKey(s string) string {
	if e.key == "" || len(e.key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, e.key, "[api key]")
}
