package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
)

// classify turns what the client returned into the typed errors of package
// engine, so the interfaces can tell a person what to do. what names the
// operation for the errors that stay untyped.
func (e *Engine) classify(ctx context.Context, err error, model, what string) error {
	if err == nil {
		return nil
	}
	// A cancelled call fails with whatever the transport saw when the
	// connection was torn down; the cause the caller cares about is ctx.
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s stopped: %w", what, ctxErr)
	}
	var status api.StatusError
	if errors.As(err, &status) {
		if status.StatusCode == http.StatusNotFound && isOpenAIPath(e.host) && !strings.Contains(status.ErrorMessage, "model") {
			return &engine.ServerError{Status: status.StatusCode, Message: fmt.Sprintf(
				"%s has no Ollama API: an address ending in /v1 is an OpenAI-compatible API's. Use --engine openai for it (engine = \"openai\" for an endpoint), or drop /v1 to speak Ollama's own API", e.host)}
		}
		return statusError(status.StatusCode, status.ErrorMessage, model)
	}
	var auth api.AuthorizationError
	if errors.As(err, &auth) {
		return &engine.ServerError{Status: auth.StatusCode, Message: "the server asks to sign in (" + strings.TrimSpace(auth.Status+" "+auth.SigninURL) + ")"}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &engine.UnreachableError{Host: e.host, Err: op.Err}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &engine.UnreachableError{Host: e.host, Err: dns}
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return fmt.Errorf("%s: the server at %s answered something that is not Ollama's API (%v); check that the host is an Ollama server's", what, e.host, err)
	}
	if isTransport(err) {
		return fmt.Errorf("%s: request to %s failed: %w", what, e.host, err)
	}
	// The client turns an {"error": ...} line inside a 200 stream into a
	// plain error: the server gave up after it had started to answer.
	return &engine.ServerError{Message: err.Error()}
}

// isOpenAIPath reports whether host's path is where OpenAI-compatible
// APIs live (/v1), which Ollama's native API never is.
func isOpenAIPath(host string) bool {
	u, err := url.Parse(host)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
}

// statusError maps an HTTP error answer. The matches are on the messages the
// server really sends (see ollamatest, which mirrors them).
func statusError(code int, msg, model string) error {
	switch {
	case code == http.StatusNotFound && strings.Contains(msg, "model") && strings.Contains(msg, "not found"):
		return &engine.ModelNotFoundError{Model: model}
	case code == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
		return &engine.ToolsUnsupportedError{Model: model}
	case code == http.StatusBadRequest && strings.Contains(msg, "does not support thinking"):
		return &engine.ThinkingUnsupportedError{Model: model}
	case code == http.StatusBadRequest && strings.Contains(msg, "exceeds the context length"):
		return &engine.ContextOverflowError{Model: model, ServerMessage: msg}
	}
	if msg == "" {
		msg = http.StatusText(code)
	}
	return &engine.ServerError{Status: code, Message: msg}
}

// isTransport reports whether err came from the HTTP round trip itself
// rather than from the server's answer.
func isTransport(err error) bool {
	var urlErr interface{ Timeout() bool }
	return errors.As(err, &urlErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// The official client stops reading a stream at the first read error and
// returns nil, so a dropped connection would look like a short but complete
// reply. readTracker sits in the transport and keeps the error the body
// read failed with, for the request whose context carries it.
type readTracker struct{ err error }

type trackerKey struct{}

func withTracker(ctx context.Context) (context.Context, *readTracker) {
	t := &readTracker{}
	return context.WithValue(ctx, trackerKey{}, t), t
}

// trackingTransport wraps the response bodies of tracked requests.
type trackingTransport struct{ base http.RoundTripper }

func (t trackingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if tr, ok := req.Context().Value(trackerKey{}).(*readTracker); ok {
		resp.Body = &trackedBody{ReadCloser: resp.Body, tracker: tr}
	}
	return resp, nil
}

type trackedBody struct {
	io.ReadCloser
	tracker *readTracker
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.tracker.err = err
	}
	return n, err
}

// connLost reports whether err is the connection dropping (rather than
// never opening): the server went away while it should have been answering.
func connLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// lostCause strips the request line the client adds ("Post URL: EOF"),
// which says nothing the error's text does not already say.
func lostCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// streamLost builds the error for a stream that ended without its final
// chunk: what the body read failed with, or a plain early end.
func streamLost(tr *readTracker, received int) error {
	cause := tr.err
	if cause == nil {
		cause = errors.New("the stream ended before the final chunk")
	}
	return &engine.StreamError{Received: received, Err: cause}
}
