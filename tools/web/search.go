package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/internal/networds"
)

// Search result counts.
const (
	DefaultSearchResults = 5
	MaxSearchResults     = 20
)

// WebSearch is the web_search tool. It sends the query to one backend, the
// one named in the config or else the first configured of SearXNG (a local
// instance keeps queries on the user's own infrastructure), Brave Search
// and Tavily.
type WebSearch struct {
	backend backend // nil when nothing is configured
	problem string  // why backend is nil, for the failed result
	client  *http.Client
	secrets []string
}

// hit is one search result.
type hit struct {
	Title, URL, Snippet string
}

// backend is one search service.
type backend interface {
	// name is the service's display name.
	name() string
	// where names the service for messages: with its URL when that is
	// the user's choice (a SearXNG instance, an endpoint override).
	where() string
	// search returns at most n hits for query.
	search(ctx context.Context, c *http.Client, query string, n int) ([]hit, error)
}

// NewWebSearch builds web_search from cfg, taking missing settings from the
// environment. An unknown backend name is an error; a backend without its
// key or URL is not: the tool then explains how to configure it.
func NewWebSearch(cfg SearchConfig) (*WebSearch, error) { return newWebSearch(cfg, nil) }

// WebSearchFactory adapts NewWebSearch to the registry.
func WebSearchFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) {
		w, err := NewWebSearch(cfg.Search)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

func newWebSearch(cfg SearchConfig, getenv func(string) string) (*WebSearch, error) {
	c := cfg.resolved(getenv)
	w := &WebSearch{secrets: nonEmpty(c.BraveAPIKey, c.TavilyAPIKey)}
	if u, err := url.Parse(c.SearxNGURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			w.secrets = append(w.secrets, p)
		}
	}
	w.client = &http.Client{
		Transport: &http.Transport{
			// The search services are the user's own choice, reached the way
			// the user's other programs reach them.
			Proxy:               http.ProxyFromEnvironment,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        8,
			IdleConnTimeout:     60 * time.Second,
			TLSHandshakeTimeout: 15 * time.Second,
		},
		Timeout:       seconds(c.Timeout),
		CheckRedirect: sameHostRedirects,
	}

	configured := map[string]func() (backend, error){
		"searxng": func() (backend, error) {
			if c.SearxNGURL == "" {
				return nil, nil
			}
			return newSearxNG(c.SearxNGURL)
		},
		"brave": func() (backend, error) {
			if c.BraveAPIKey == "" {
				return nil, nil
			}
			return newBrave(c.BraveURL, c.BraveAPIKey)
		},
		"tavily": func() (backend, error) {
			if c.TavilyAPIKey == "" {
				return nil, nil
			}
			return newTavily(c.TavilyURL, c.TavilyAPIKey)
		},
	}
	order := []string{"searxng", "brave", "tavily"}
	if c.Backend != "" {
		build, ok := configured[c.Backend]
		if !ok {
			return nil, fmt.Errorf("[web.search] backend %q is not supported; use searxng, brave or tavily (or leave it empty to use the first configured)", c.Backend)
		}
		b, err := build()
		if err != nil {
			return nil, err
		}
		if b == nil {
			w.problem = missingSetting(c.Backend)
		}
		w.backend = b
		return w, nil
	}
	for _, name := range order {
		b, err := configured[name]()
		if err != nil {
			return nil, err
		}
		if b != nil {
			w.backend = b
			return w, nil
		}
	}
	w.problem = notConfigured
	return w, nil
}

const notConfigured = `web_search is not configured: no search backend is set up. Configure one in the config file:

  [web.search]
  backend = "searxng"                      # or "brave" or "tavily"; empty picks the first configured
  searxng_url = "http://localhost:8888"    # a SearXNG instance with the json format enabled
  brave_api_key = "..."                    # a Brave Search API key
  tavily_api_key = "..."                   # a Tavily API key

or set one of the environment variables SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY.`

func missingSetting(backend string) string {
	switch backend {
	case "searxng":
		return `web_search uses the SearXNG backend, but no instance URL is set: put searxng_url = "http://host:port" under [web.search] in the config file, or set SEARXNG_URL.`
	case "brave":
		return `web_search uses the Brave Search backend, but no API key is set: put brave_api_key = "..." under [web.search] in the config file, or set BRAVE_API_KEY.`
	}
	return `web_search uses the Tavily backend, but no API key is set: put tavily_api_key = "..." under [web.search] in the config file, or set TAVILY_API_KEY.`
}

// Spec returns web_search's spec. The query leaves the machine, so the
// call needs confirmation.
func (w *WebSearch) Spec() tools.Spec {
	s := tools.Spec{
		Name:        "web_search",
		Description: "Search the web and return a numbered list of results (title, URL, snippet). The query is sent to the configured search service.",
		Parameters: tools.Params(
			tools.StringParam("query", "Search query", true),
			tools.IntegerParam("max_results", fmt.Sprintf("Number of results (default %d, at most %d)", DefaultSearchResults, MaxSearchResults), false),
		),
		Category:             "search",
		RequiresConfirmation: true,
		TimeoutSeconds:       w.client.Timeout.Seconds() + 5,
	}
	if w.backend != nil {
		s.Metadata = map[string]any{"backend": w.backend.name()}
	}
	return s
}

// Execute runs one search.
func (w *WebSearch) Execute(ctx context.Context, args tools.Args) tools.Result {
	query := strings.TrimSpace(args.String("query"))
	if query == "" {
		return tools.Fail("No search query provided.")
	}
	n := DefaultSearchResults
	if v, ok, err := args.Int("max_results"); err != nil {
		return tools.Fail("%v.", err)
	} else if ok {
		if v < 1 {
			return tools.Fail("Parameter 'max_results' must be at least 1, got %d.", v)
		}
		n = min(v, MaxSearchResults)
	}
	if w.backend == nil {
		return tools.Fail("%s", w.problem).WithMeta("configured", false)
	}
	start := time.Now()
	hits, err := w.backend.search(ctx, w.client, query, n)
	elapsed := time.Since(start)
	if err != nil {
		return tools.Fail("%s", w.redact(w.describeError(ctx, err))).
			WithMeta("backend", w.backend.name()).
			WithMeta("elapsed_ms", elapsed.Milliseconds())
	}
	if len(hits) > n {
		hits = hits[:n]
	}
	res := tools.OK(w.redact(formatHits(query, hits)))
	return res.
		WithMeta("backend", w.backend.name()).
		WithMeta("query", query).
		WithMeta("results", len(hits)).
		WithMeta("elapsed_ms", elapsed.Milliseconds())
}

// formatHits renders "1. Title\n   URL\n   snippet" blocks, one blank line
// apart.
func formatHits(query string, hits []hit) string {
	if len(hits) == 0 {
		return fmt.Sprintf("No results found for %q.", query)
	}
	blocks := make([]string, 0, len(hits))
	for i, h := range hits {
		title := h.Title
		if title == "" {
			title = h.URL
		}
		block := fmt.Sprintf("%d. %s\n   %s", i+1, title, h.URL)
		if h.Snippet != "" {
			block += "\n   " + h.Snippet
		}
		blocks = append(blocks, block)
	}
	return strings.Join(blocks, "\n\n")
}

// describeError words a backend failure, naming the service and, for one
// the user runs or chose, its URL.
func (w *WebSearch) describeError(ctx context.Context, err error) string {
	var api *apiError
	var done searchFailure
	switch {
	case errors.As(err, &api):
		return api.Error()
	case errors.As(err, &done):
		return done.msg
	}
	where := w.backend.where()
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || networds.IsTimeout(err)) {
		return fmt.Sprintf("%s did not answer within %gs (timeout under [web.search] in the config). Try again later.", where, w.client.Timeout.Seconds())
	}
	return fmt.Sprintf("The search request to %s failed: %s.", where, networds.Trouble(err))
}

// redact removes API keys from text, in case a service echoes one.
func (w *WebSearch) redact(s string) string {
	for _, secret := range w.secrets {
		s = strings.ReplaceAll(s, secret, "<redacted>")
	}
	return s
}

// sameHostRedirects follows at most MaxRedirects redirects, and only within
// the host that was asked: a search service moving to another host is a
// configuration to fix, not something to follow with credentials attached.
func sameHostRedirects(next *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	first := via[0].URL
	if !strings.EqualFold(next.URL.Host, first.Host) {
		return fmt.Errorf("the service redirected to another host (%s), which is not followed; point the configured URL at the final address", next.URL.Host)
	}
	if first.Scheme == "https" && next.URL.Scheme != "https" {
		return fmt.Errorf("the service redirected from https to %s, which is not followed", next.URL.Scheme)
	}
	return nil
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
