package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// maxSearchBody caps what is read of a search answer (generous: a page of
// results with snippets is a few tens of KiB).
const maxSearchBody = 8 << 20

// searxng queries a SearXNG instance's JSON API (GET /search?format=json).
type searxng struct{ endpoint *url.URL }

func newSearxNG(raw string) (*searxng, error) {
	u, err := serviceURL("searxng_url", raw)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(u.Path, "/search") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	}
	return &searxng{endpoint: u}, nil
}

func (s *searxng) name() string { return "SearXNG" }

func (s *searxng) search(ctx context.Context, c *http.Client, query string, n int) ([]hit, error) {
	u := *s.endpoint
	q := u.Query()
	q.Set("q", query)
	q.Set("format", "json")
	q.Set("pageno", "1")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	var answer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	hint := func(status int) string {
		if status == http.StatusForbidden {
			return "SearXNG answers 403 when its JSON API is disabled: add json to search.formats in the instance's settings.yml. If the instance sits behind authentication, put the credentials in searxng_url (https://user:password@host)."
		}
		return "If the instance sits behind authentication, put the credentials in searxng_url (https://user:password@host)."
	}
	if err := doJSON(c, req, s.name(), hint, &answer); err != nil {
		return nil, err
	}
	hits := make([]hit, 0, min(n, len(answer.Results)))
	for _, r := range answer.Results {
		if len(hits) == n {
			break
		}
		hits = append(hits, cleanHit(r.Title, r.URL, r.Content))
	}
	return hits, nil
}

// brave queries the Brave Search web API.
type brave struct {
	endpoint *url.URL
	key      string
}

func newBrave(raw, key string) (*brave, error) {
	u, err := serviceURL("brave_url", raw)
	if err != nil {
		return nil, err
	}
	return &brave{endpoint: u, key: key}, nil
}

func (b *brave) name() string { return "Brave Search" }

func (b *brave) search(ctx context.Context, c *http.Client, query string, n int) ([]hit, error) {
	u := *b.endpoint
	q := u.Query()
	q.Set("q", query)
	q.Set("count", strconv.Itoa(n))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	var answer struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	hint := func(int) string {
		return "Check the API key: brave_api_key under [web.search] in the config file, or BRAVE_API_KEY."
	}
	if err := doJSON(c, req, b.name(), hint, &answer); err != nil {
		return nil, err
	}
	hits := make([]hit, 0, len(answer.Web.Results))
	for _, r := range answer.Web.Results {
		hits = append(hits, cleanHit(r.Title, r.URL, r.Description))
	}
	return hits, nil
}

// tavily queries the Tavily search API (POST /search).
type tavily struct {
	endpoint *url.URL
	key      string
}

func newTavily(raw, key string) (*tavily, error) {
	u, err := serviceURL("tavily_url", raw)
	if err != nil {
		return nil, err
	}
	return &tavily{endpoint: u, key: key}, nil
}

func (t *tavily) name() string { return "Tavily" }

func (t *tavily) search(ctx context.Context, c *http.Client, query string, n int) ([]hit, error) {
	payload, err := json.Marshal(map[string]any{
		// The key goes in the body, as the original API wants, and in the
		// Authorization header, as the current one does.
		"api_key":      t.key,
		"query":        query,
		"max_results":  n,
		"search_depth": "basic",
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint.String(), bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	var answer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	hint := func(int) string {
		return "Check the API key: tavily_api_key under [web.search] in the config file, or TAVILY_API_KEY."
	}
	if err := doJSON(c, req, t.name(), hint, &answer); err != nil {
		return nil, err
	}
	hits := make([]hit, 0, len(answer.Results))
	for _, r := range answer.Results {
		hits = append(hits, cleanHit(r.Title, r.URL, r.Content))
	}
	return hits, nil
}

// serviceURL parses a configured endpoint.
func serviceURL(key, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := raw
		if err == nil {
			shown = u.Redacted()
		}
		return nil, fmt.Errorf("[web.search] %s %q is not an http:// or https:// URL", key, shown)
	}
	return u, nil
}

// apiError is a search service's error answer.
type apiError struct {
	service    string
	status     int
	retryAfter string
	detail     string
	hint       string
}

func (e *apiError) Error() string {
	code := fmt.Sprintf("HTTP %d", e.status)
	if e.detail != "" {
		code += ": " + e.detail
	}
	switch {
	case e.status == http.StatusUnauthorized || e.status == http.StatusForbidden:
		return fmt.Sprintf("%s rejected the request as unauthorized (%s). %s", e.service, code, e.hint)
	case e.status == http.StatusTooManyRequests:
		wait := "Wait before searching again."
		if e.retryAfter != "" {
			if secs, err := strconv.Atoi(e.retryAfter); err == nil {
				wait = fmt.Sprintf("Retry after %d seconds.", secs)
			} else {
				wait = fmt.Sprintf("Retry after %s.", e.retryAfter)
			}
		}
		return fmt.Sprintf("%s rate-limited the search (%s). %s", e.service, code, wait)
	case e.status >= 500:
		return fmt.Sprintf("%s failed on its side (%s). Try again later.", e.service, code)
	}
	return fmt.Sprintf("%s refused the search (%s).", e.service, code)
}

// doJSON sends req and decodes a 2xx JSON answer into out; other answers
// become an *apiError carrying the service's own message.
func doJSON(c *http.Client, req *http.Request, service string, hint func(status int) string, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		retry := resp.Header.Get("Retry-After")
		if retry == "" {
			// Brave's reset header lists the per-second window first.
			retry = strings.TrimSpace(strings.Split(resp.Header.Get("X-RateLimit-Reset"), ",")[0])
		}
		return &apiError{service: service, status: resp.StatusCode, retryAfter: retry, detail: errorDetail(resp), hint: hint(resp.StatusCode)}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSearchBody)).Decode(out); err != nil {
		media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		return fmt.Errorf("%s answered with something that is not its JSON API (Content-Type %q: %v); check the configured URL", service, media, err)
	}
	return nil
}

// errorDetail extracts a service's error message from its answer: the usual
// JSON fields, or a short plain-text body.
func errorDetail(resp *http.Response) string {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if s := findMessage(v, 0); s != "" {
			return clip(strings.Join(strings.Fields(s), " "), 300)
		}
		return ""
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if media == "text/plain" {
		return clip(strings.Join(strings.Fields(string(raw)), " "), 300)
	}
	return ""
}

func findMessage(v any, depth int) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if depth > 2 {
			return ""
		}
		for _, key := range []string{"detail", "message", "error_description", "description", "error", "code"} {
			if inner, ok := x[key]; ok {
				if s := findMessage(inner, depth+1); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// cleanHit strips markup (Brave highlights terms with <strong>) and
// collapses whitespace, keeping snippets short.
func cleanHit(title, link, snippet string) hit {
	return hit{Title: clip(plainText(title), 200), URL: strings.TrimSpace(link), Snippet: clip(plainText(snippet), 400)}
}

func plainText(s string) string {
	if strings.ContainsAny(s, "<&") {
		z := html.NewTokenizer(strings.NewReader(s))
		var b strings.Builder
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			switch tt {
			case html.TextToken:
				b.Write(z.Text())
			case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
				// Inline tags (<strong>) sit inside words; block tags
				// separate them.
				switch name, _ := z.TagName(); string(name) {
				case "br", "p", "div", "li", "td", "tr", "h1", "h2", "h3":
					b.WriteByte(' ')
				}
			}
		}
		s = b.String()
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
