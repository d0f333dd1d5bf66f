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
	"golang.org/x/net/html/atom"
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

func (s *searxng) where() string { return "SearXNG at " + shownURL(s.endpoint) }

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
	if err := doJSON(c, req, s.where(), searxngHelp, &answer); err != nil {
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

// searxngHelp says what to change when a SearXNG instance refuses.
var searxngHelp = serviceHelp{
	forbidden: "refused to answer in JSON",
	hint: func(status int) string {
		const auth = "If the instance sits behind authentication, put the credentials in searxng_url (https://user:password@host)."
		switch status {
		case http.StatusForbidden:
			return "SearXNG answers 403 to format=json when the instance does not allow the JSON format: add json to search.formats in its settings.yml (formats: [html, json]) and restart it. " + auth
		case http.StatusUnauthorized:
			return auth
		case http.StatusTooManyRequests:
			return "SearXNG's limiter turns away clients it takes for bots: on your own instance, set limiter: false under server in settings.yml, or let this machine's address pass (pass_ip under [botdetection.ip_lists] in limiter.toml)."
		case http.StatusNotFound:
			return "Check searxng_url: it should be the instance's base URL, such as http://localhost:8888."
		}
		return ""
	},
	notJSON: "Check searxng_url: it should be the instance's base URL, such as http://localhost:8888, and the instance must allow the JSON format (json in search.formats in its settings.yml).",
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

func (b *brave) where() string { return serviceAt(b.name(), b.endpoint, DefaultBraveURL) }

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
	help := keyHelp("Check the API key: brave_api_key under [web.search] in the config file, or BRAVE_API_KEY.")
	if err := doJSON(c, req, b.where(), help, &answer); err != nil {
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

func (t *tavily) where() string { return serviceAt(t.name(), t.endpoint, DefaultTavilyURL) }

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
	help := keyHelp("Check the API key: tavily_api_key under [web.search] in the config file, or TAVILY_API_KEY.")
	if err := doJSON(c, req, t.where(), help, &answer); err != nil {
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

// shownURL is an endpoint fit to show: no user info, query or fragment.
func shownURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// serviceAt names a hosted service, with its endpoint when the config
// points it somewhere other than the service's own.
func serviceAt(name string, u *url.URL, def string) string {
	if shown := shownURL(u); shown != def {
		return name + " at " + shown
	}
	return name
}

// serviceHelp is what a backend adds to the failures it knows.
type serviceHelp struct {
	// forbidden words a 403 when it does not mean bad credentials.
	forbidden string
	// hint says what to change after an error status ("" for nothing).
	hint func(status int) string
	// notJSON says what to check when the answer is not the JSON API.
	notJSON string
}

// keyHelp is the help of a service that authenticates with an API key.
func keyHelp(check string) serviceHelp {
	return serviceHelp{hint: func(status int) string {
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return check
		}
		return ""
	}}
}

// apiError is a search service's error answer.
type apiError struct {
	service    string
	status     int
	retryAfter string
	detail     string
	help       serviceHelp
}

func (e *apiError) Error() string {
	code := fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
	if e.detail != "" {
		code += ": " + e.detail
	}
	var msg string
	switch {
	case e.status == http.StatusForbidden && e.help.forbidden != "":
		msg = fmt.Sprintf("%s %s (%s).", e.service, e.help.forbidden, code)
	case e.status == http.StatusUnauthorized || e.status == http.StatusForbidden:
		msg = fmt.Sprintf("%s rejected the request as unauthorized (%s).", e.service, code)
	case e.status == http.StatusTooManyRequests:
		wait := "Wait before searching again."
		if e.retryAfter != "" {
			if secs, err := strconv.Atoi(e.retryAfter); err == nil {
				wait = fmt.Sprintf("Retry after %d seconds.", secs)
			} else {
				wait = fmt.Sprintf("Retry after %s.", e.retryAfter)
			}
		}
		msg = fmt.Sprintf("%s rate-limited the search (%s). %s", e.service, code, wait)
	case e.status >= 500:
		msg = fmt.Sprintf("%s failed on its side (%s). Try again later.", e.service, code)
	default:
		msg = fmt.Sprintf("%s refused the search (%s).", e.service, code)
	}
	if e.help.hint != nil {
		if hint := e.help.hint(e.status); hint != "" {
			msg += " " + hint
		}
	}
	return msg
}

// doJSON sends req and decodes a 2xx JSON answer into out; other answers
// become an *apiError carrying the service's own message.
func doJSON(c *http.Client, req *http.Request, service string, help serviceHelp, out any) error {
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
		return &apiError{service: service, status: resp.StatusCode, retryAfter: retry, detail: errorDetail(resp), help: help}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSearchBody)).Decode(out); err != nil {
		media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		what := "something that is not its JSON API"
		switch {
		case media == "text/html":
			what = "a web page instead of JSON results"
		case media != "" && media != "application/json":
			what = media + " instead of JSON results"
		}
		check := help.notJSON
		if check == "" {
			check = "Check the configured URL."
		}
		return searchFailure{fmt.Sprintf("%s answered with %s (HTTP %d). %s (detail: Content-Type %q: %v)", service, what, resp.StatusCode, check, media, err)}
	}
	return nil
}

// searchFailure is an error whose text is a finished message for the result.
type searchFailure struct{ msg string }

func (f searchFailure) Error() string { return f.msg }

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

// cleanHit turns a result's markup into plain text (Brave highlights terms
// with <strong>, services escape what they quote) and collapses
// whitespace, keeping snippets short.
func cleanHit(title, link, snippet string) hit {
	return hit{Title: clip(plainText(title), 200), URL: strings.TrimSpace(link), Snippet: clip(plainText(snippet), 400)}
}

// plainText decodes HTML entities and removes the tags a service marked
// its text up with, keeping everything else as written. A tag counts only
// when it is an HTML element that is closed again (or needs no closing,
// like <br>): "std::vector<int>" and "Map<String, List<T>>" arrive raw in
// titles and are text, not markup, while "&lt;int&gt;" is the same text
// escaped.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.Join(strings.Fields(s), " ")
	}
	type token struct {
		kind html.TokenType
		name string
		text string // the decoded text, or the tag as written
	}
	var toks []token
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			// A "<" that starts something the tokenizer cannot finish
			// ("a <b") is text that was cut off: keep it.
			if raw := z.Raw(); len(raw) > 0 {
				toks = append(toks, token{kind: html.TextToken, text: string(raw)})
			}
			break
		}
		t := token{kind: tt, text: string(z.Raw())}
		switch tt {
		case html.TextToken:
			t.text = string(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			t.name = string(name)
		}
		toks = append(toks, t)
	}
	// Which start tags are closed later, and which end tags close one.
	markup := make([]bool, len(toks))
	var open []int
	for i, t := range toks {
		switch t.kind {
		case html.StartTagToken:
			if isElement(t.name) {
				if voidElements[t.name] {
					markup[i] = true
				} else {
					open = append(open, i)
				}
			}
		case html.SelfClosingTagToken:
			markup[i] = isElement(t.name)
		case html.EndTagToken:
			for j := len(open) - 1; j >= 0; j-- {
				if toks[open[j]].name == t.name {
					markup[open[j]], markup[i] = true, true
					open = open[:j]
					break
				}
			}
		case html.CommentToken, html.DoctypeToken:
			markup[i] = true
		}
	}
	var b strings.Builder
	for i, t := range toks {
		switch {
		case !markup[i]:
			b.WriteString(t.text)
		case blockElements[t.name]:
			// Inline tags (<strong>) sit inside words; block tags
			// separate them.
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// isElement reports whether name is a name HTML knows. The atom table
// holds attribute names too, but a tag counts as markup only when it is
// also closed, which "<value>" in a title is not.
func isElement(name string) bool { return atom.Lookup([]byte(name)) != 0 }

var voidElements = map[string]bool{"br": true, "wbr": true, "hr": true, "img": true}

var blockElements = map[string]bool{
	"br": true, "hr": true, "p": true, "div": true, "li": true, "td": true, "tr": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
}

// clip cuts s to n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
