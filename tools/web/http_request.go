package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/internal/networds"
)

// HTTPRequest is the http_request tool: one HTTP request to a public URL,
// with every address it connects to checked by a Policy (see the package
// comment), at most MaxRedirects redirects, a capped response body and a
// per-call timeout.
type HTTPRequest struct {
	cfg    HTTPConfig
	policy *Policy
	// transport honours allow_hosts; strict, with strictPolicy, does not.
	// A call's requests go through transport until one reaches a
	// destination allow_hosts does not list; any redirect after that goes
	// through strict (see redirectGuard). They keep separate connection
	// pools, so strict never reuses a connection to an allow-listed host.
	transport    *http.Transport
	strict       *http.Transport
	strictPolicy *Policy
}

// Option adjusts NewHTTPRequest.
type Option func(*options)

type options struct {
	resolver Resolver
	dial     func(ctx context.Context, d *net.Dialer, network string, to netip.AddrPort) (net.Conn, error) // see guardedDialer.dial
}

// WithResolver makes http_request look names up with r instead of the
// system resolver. Tests use it to make a name resolve to loopback.
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// NewHTTPRequest builds http_request from cfg. An invalid allow_hosts entry
// is an error: a typo there would silently leave a host blocked.
func NewHTTPRequest(cfg HTTPConfig, opts ...Option) (*HTTPRequest, error) {
	o := options{resolver: net.DefaultResolver}
	for _, opt := range opts {
		opt(&o)
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	policy, err := NewPolicy(c.AllowHosts)
	if err != nil {
		return nil, err
	}
	strict := policy.withoutAllowList()
	dialer := func(p *Policy) *guardedDialer {
		return &guardedDialer{policy: p, resolver: o.resolver, timeout: 15 * time.Second, dial: o.dial}
	}
	return &HTTPRequest{
		cfg:          c,
		policy:       policy,
		transport:    newGuardedTransport(dialer(policy)),
		strict:       newGuardedTransport(dialer(strict)),
		strictPolicy: strict,
	}, nil
}

// HTTPRequestFactory adapts NewHTTPRequest to the registry.
func HTTPRequestFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) {
		h, err := NewHTTPRequest(cfg.HTTP)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

// Close releases idle connections.
func (h *HTTPRequest) Close() error {
	h.transport.CloseIdleConnections()
	h.strict.CloseIdleConnections()
	return nil
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

// Spec returns http_request's spec. The tool's own timeout leaves room for
// the longest request a call may ask for.
func (h *HTTPRequest) Spec() tools.Spec {
	headers := &jsonschema.Schema{
		Type:                 "object",
		Description:          "Request headers as name: value pairs (optional)",
		AdditionalProperties: &jsonschema.Schema{Type: "string"},
	}
	return tools.Spec{
		Name: "http_request",
		Description: "Send an HTTP request to a public http(s) URL and return the status, key headers and body " +
			fmt.Sprintf("(at most %d bytes). Requests to loopback, private and other internal addresses are refused.", h.cfg.MaxBytes),
		Parameters: tools.Params(
			tools.StringParam("url", "The http:// or https:// URL to request", true),
			tools.EnumParam("method", "HTTP method (default GET)", false, methods...),
			tools.Param{Name: "headers", Schema: headers},
			tools.StringParam("body", "Request body (optional; JSON bodies get Content-Type application/json unless set)", false),
			tools.NumberParam("timeout", fmt.Sprintf("Timeout in seconds (default %g, at most %g)", h.cfg.Timeout, h.cfg.MaxTimeout), false),
		),
		Category:             "network",
		RequiresConfirmation: true,
		TimeoutSeconds:       h.cfg.MaxTimeout + 5,
		Metadata:             h.specMetadata(),
	}
}

// GrantScope is the host of the URL: a grant covers requests to it (a
// redirect to another host is still followed, as the call approved).
func (h *HTTPRequest) GrantScope(args tools.Args) tools.Scope {
	host := "(no host)"
	if u, err := url.Parse(strings.TrimSpace(args.String("url"))); err == nil && u.Hostname() != "" {
		host = strings.ToLower(u.Hostname())
		if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443" || u.Scheme == "http" && p == "80") {
			host = net.JoinHostPort(host, p)
		}
	}
	return tools.Scope{Kind: tools.ScopeHost, Value: host, Words: "requests to " + host}
}

func (h *HTTPRequest) specMetadata() map[string]any {
	m := map[string]any{"max_bytes": h.cfg.MaxBytes}
	if len(h.cfg.AllowHosts) > 0 {
		m["allow_hosts"] = h.cfg.AllowHosts
	}
	return m
}

// headers Go manages itself, or that would let a call misdirect the request.
var refusedHeaders = map[string]string{
	"Host":              "put the host in the URL",
	"Content-Length":    "it is computed from the body",
	"Transfer-Encoding": "it is chosen by the client",
	"Connection":        "connections are managed by the client",
	"Upgrade":           "protocol upgrades are not supported",
	"Te":                "it is chosen by the client",
	"Trailer":           "trailers are not supported",
	"Proxy-Connection":  "no proxy is used",
}

// Execute sends the request described by args.
func (h *HTTPRequest) Execute(ctx context.Context, args tools.Args) tools.Result {
	req, lim, fail := h.buildRequest(args)
	if fail != nil {
		return *fail
	}
	rctx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()
	sent := &sendState{}
	req = req.WithContext(httptrace.WithClientTrace(rctx, sent.trace()))

	var redirects, redirectStatus int
	current, previous := req.URL.Redacted(), ""
	guard := &redirectGuard{open: h.transport, strict: h.strict}
	client := &http.Client{
		Transport: guard,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			from := via[len(via)-1].URL.Redacted()
			status := 0
			if next.Response != nil {
				status = next.Response.StatusCode
			}
			if len(via) > MaxRedirects {
				return &tooManyRedirects{from: from, to: next.URL.Redacted()}
			}
			policy := h.policy
			if !guard.trusted() {
				policy = h.strictPolicy
			}
			if err := policy.CheckURL(next.URL); err != nil {
				var be *BlockedError
				if errors.As(err, &be) {
					be.From, be.URL, be.Status = from, next.URL.Redacted(), status
				}
				return err
			}
			redirects, redirectStatus = len(via), status
			current, previous = next.URL.Redacted(), from
			return nil
		},
	}

	start := time.Now()
	resp, err := client.Do(req)
	headersAt := time.Since(start)
	if err != nil {
		at := attempt{requested: req.URL.Redacted(), current: current, previous: previous, redirectStatus: redirectStatus,
			method: req.Method, sent: sent, limits: lim}
		return h.failure(ctx, err, at)
	}
	defer resp.Body.Close()

	body, truncated, readErr := readCapped(resp.Body, h.cfg.MaxBytes)
	elapsed := time.Since(start)
	timedOut := readErr != nil && rctx.Err() != nil && ctx.Err() == nil
	if readErr != nil && len(body) == 0 {
		if timedOut {
			return tools.Fail("The response from %s started (HTTP %d) but none of its body arrived within the %s timeout. %s",
				current, resp.StatusCode, networds.Seconds(lim.timeout), lim.advice())
		}
		return tools.Fail("The response from %s started (HTTP %d) but reading its body failed: %s", current, resp.StatusCode, networds.Trouble(readErr))
	}

	r := formatResponse(resp, body, truncated, h.cfg.MaxBytes, redirects > 0)
	switch {
	case timedOut:
		r.note = fmt.Sprintf("[response incomplete: only %d bytes arrived within the %s timeout]", len(body), networds.Seconds(lim.timeout))
	case readErr != nil:
		r.note = fmt.Sprintf("[response incomplete: the connection failed after %d bytes: %s]", len(body), networds.Trouble(readErr))
	}
	res := tools.OK(r.content())
	res.Success = resp.StatusCode < 400
	if !res.Success {
		res.Status = tools.StatusError
	}
	return res.
		WithMeta("method", req.Method).
		WithMeta("url", req.URL.Redacted()).
		WithMeta("final_url", resp.Request.URL.Redacted()).
		WithMeta("redirects", redirects).
		WithMeta("status", resp.StatusCode).
		WithMeta("status_text", http.StatusText(resp.StatusCode)).
		WithMeta("headers", r.headers).
		WithMeta("content_type", r.contentType).
		WithMeta("bytes", len(body)).
		WithMeta("truncated", truncated).
		WithMeta("binary", r.binary).
		WithMeta("timeout_seconds", lim.timeout.Seconds()).
		WithMeta("time_to_headers_ms", headersAt.Milliseconds()).
		WithMeta("elapsed_ms", elapsed.Milliseconds())
}

// redirectGuard is one call's round tripper. Its first request goes through
// the transport that honours allow_hosts, and so does every redirect as
// long as each request so far reached an allow-listed destination (the
// dialer marks its connections; see checkedConn). Once a request reached
// any other destination, the redirects that follow go through the strict
// transport, which refuses allow-listed private destinations like any
// other private one: a public site that answers an approved request with
// a redirect cannot point it, 307 body and all, at nas.lan.
type redirectGuard struct {
	open, strict http.RoundTripper

	mu      sync.Mutex
	started bool
	listed  bool // every request so far reached an allow-listed destination
}

// trusted reports whether the next request may use the allow-list.
func (g *redirectGuard) trusted() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.started || g.listed
}

func (g *redirectGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	trusted := g.trusted()
	rt := g.strict
	if trusted {
		rt = g.open
	}
	var listed atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		listed.Store(allowListedConn(info.Conn))
	}}
	resp, err := rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	g.mu.Lock()
	g.started = true
	g.listed = trusted && listed.Load()
	g.mu.Unlock()
	return resp, err
}

// buildRequest turns args into a request and its timeout, or a failed
// result saying which argument is wrong.
func (h *HTTPRequest) buildRequest(args tools.Args) (*http.Request, limits, *tools.Result) {
	failf := func(format string, a ...any) (*http.Request, limits, *tools.Result) {
		r := tools.Fail(format, a...)
		return nil, limits{}, &r
	}
	raw := strings.TrimSpace(args.String("url"))
	if raw == "" {
		return failf("No URL provided.")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return failf("Invalid URL %q: %v. Give a full http:// or https:// URL.", raw, networds.Unwrap(err))
	}
	if err := h.policy.CheckURL(u); err != nil {
		r := tools.Fail("%v", err).WithMeta("blocked", true)
		return nil, limits{}, &r
	}
	u.Scheme = strings.ToLower(u.Scheme)

	method := strings.ToUpper(strings.TrimSpace(args.String("method")))
	if method == "" {
		method = http.MethodGet
	}
	body := args.String("body")
	if body != "" && method == http.MethodHead {
		return failf("A HEAD request cannot carry a body; use POST, PUT or PATCH to send one.")
	}

	lim := limits{timeout: seconds(h.cfg.Timeout), max: h.cfg.MaxTimeout}
	if t, ok, err := args.Float("timeout"); err != nil {
		return failf("%v.", err)
	} else if ok {
		if t <= 0 {
			return failf("Parameter 'timeout' must be a positive number of seconds, got %g.", t)
		}
		lim.asked = t
		lim.timeout = seconds(min(t, h.cfg.MaxTimeout))
	}

	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u.String(), reader)
	if err != nil {
		return failf("Invalid request: %v", networds.Unwrap(err))
	}
	if hv, ok := args["headers"]; ok && hv != nil {
		m, ok := hv.(map[string]any)
		if !ok {
			return failf("Parameter 'headers' must be an object of name: value strings.")
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			value, ok := m[name].(string)
			if !ok {
				return failf("Header %q must have a string value.", name)
			}
			canon := http.CanonicalHeaderKey(strings.TrimSpace(name))
			if why, refused := refusedHeaders[canon]; refused {
				return failf("Header %q cannot be set: %s.", name, why)
			}
			if !validHeaderName(canon) || strings.ContainsAny(value, "\r\n\x00") {
				return failf("Header %q is not a valid HTTP header (names are letters, digits and -; values are one line).", name)
			}
			req.Header.Add(canon, value)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", h.cfg.UserAgent)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		if json.Valid([]byte(body)) {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	return req, lim, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
