package mcp

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/tools"
)

// A server's configuration often carries credentials: a token in the URL's
// query (?key=${API_KEY}) or user info, a bearer header, an API key passed
// in env. Everything jarvis shows about a server (status, reasons, tool
// results a model reads, notices, logs) goes through RedactURL or the
// server's scrubber, so none of them ends up on screen, in a transcript or
// in the model's context.

// maxShownSegment is the longest URL path segment shown whole (the same
// rule as tools.RedactURL); longer ones are usually tokens or ids.
const maxShownSegment = 16

// redactedMark replaces a secret found in free text.
const redactedMark = tools.RedactedMark

// RedactURL returns raw in a form fit to show (see tools.RedactURL, which
// the audit log shares so that arguments are redacted the same way).
func RedactURL(raw string) string { return tools.RedactURL(raw) }

// scrubber replaces a server's secrets in free text: error messages of the
// HTTP client and the SDK (which may quote the whole endpoint), the last
// line of a stdio server's stderr, log records.
type scrubber struct {
	r *strings.Replacer // nil: nothing to hide
}

// minSecretLen skips values too short to be credentials: replacing them
// would garble messages and protect nothing.
const minSecretLen = 6

// newScrubber collects cfg's secrets: the endpoint (as configured and
// expanded) with its user info, query values and long path segments, every
// header value, and the value of every variable the configuration refers
// to as ${VAR}.
func newScrubber(cfg ServerConfig) *scrubber {
	repl := map[string]string{}
	secret := func(v string) {
		if len(v) >= minSecretLen {
			repl[v] = redactedMark
		}
	}
	refs := func(v string) {
		for _, m := range envRefRE().FindAllStringSubmatch(v, -1) {
			if val, ok := os.LookupEnv(m[1]); ok {
				secret(val)
				secret(url.QueryEscape(val))
				secret(url.PathEscape(val))
			}
		}
	}
	if cfg.URL != "" {
		refs(cfg.URL)
		endpoints := []string{cfg.URL}
		if expanded, err := expand("url", cfg.URL); err == nil && expanded != cfg.URL {
			endpoints = append(endpoints, expanded)
		}
		for _, e := range endpoints {
			// The whole URL first (longest match wins), shown redacted
			// rather than blanked, so messages still say where it went.
			repl[e] = RedactURL(e)
			urlSecrets(e, secret)
		}
	}
	for _, v := range cfg.Headers {
		refs(v)
		secret(v)
		if expanded, err := expand("header", v); err == nil {
			secret(expanded)
			// "Bearer TOKEN", "Basic CREDENTIALS": the token is secret,
			// the scheme word is not.
			if f := strings.Fields(expanded); len(f) > 1 {
				secret(f[len(f)-1])
			}
		}
	}
	for _, v := range cfg.Env {
		refs(v)
	}
	if len(repl) == 0 {
		return &scrubber{}
	}
	olds := make([]string, 0, len(repl))
	for k := range repl {
		olds = append(olds, k)
	}
	// At any position the Replacer tries the pairs in order: longest
	// first, so a URL is replaced whole before its parts are.
	sort.Slice(olds, func(i, j int) bool {
		if len(olds[i]) != len(olds[j]) {
			return len(olds[i]) > len(olds[j])
		}
		return olds[i] < olds[j]
	})
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, o, repl[o])
	}
	return &scrubber{r: strings.NewReplacer(pairs...)}
}

// urlSecrets passes the parts of raw that carry credentials to secret.
func urlSecrets(raw string, secret func(string)) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		secret(u.User.String())
		secret(u.User.Username())
		if p, ok := u.User.Password(); ok {
			secret(p)
		}
	}
	secret(u.RawQuery)
	for _, vs := range u.Query() {
		for _, v := range vs {
			secret(v)
			secret(url.QueryEscape(v))
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if utf8.RuneCountInString(seg) > maxShownSegment {
			secret(seg)
			if un, err := url.PathUnescape(seg); err == nil {
				secret(un)
			}
		}
	}
}

// scrub returns text with the secrets replaced.
func (s *scrubber) scrub(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// handler wraps h so that messages and attribute values it records are
// scrubbed; the SDK logs transport errors verbatim through it.
func (s *scrubber) handler(h slog.Handler) slog.Handler {
	if s == nil || s.r == nil {
		return h
	}
	return scrubHandler{h: h, s: s}
}

type scrubHandler struct {
	h slog.Handler
	s *scrubber
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return scrubHandler{h: h.h.WithAttrs(out), s: h.s}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{h: h.h.WithGroup(name), s: h.s}
}

func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.scrub(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]any, len(group))
		for i, g := range group {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.s.scrub(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
