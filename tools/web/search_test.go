package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

const (
	braveKey  = "BSA-test-key-7f3a9c"
	tavilyKey = "tvly-test-key-51be02"
)

func noEnv(string) string { return "" }

func newSearch(t *testing.T, cfg SearchConfig) *WebSearch {
	t.Helper()
	w, err := newWebSearch(cfg, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func search(w *WebSearch, args tools.Args) tools.Result {
	return w.Execute(context.Background(), args)
}

// assertNoSecret fails when a secret appears anywhere in a result.
func assertNoSecret(t *testing.T, r tools.Result, secrets ...string) {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Fatalf("result leaks a secret %q: %s", s, raw)
		}
	}
}

func TestSearXNGWireFormatAndResults(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/searx/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
			return
		}
		q := r.URL.Query().Get("q")
		var results []map[string]string
		for i := 1; i <= 8; i++ {
			results = append(results, map[string]string{
				"title": fmt.Sprintf("Result %d for %s", i, q), "url": fmt.Sprintf("https://example.org/%d", i),
				"content": fmt.Sprintf("  snippet   number %d &amp; more ", i), "engine": "duckduckgo",
			})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"query": q, "number_of_results": 8, "results": results})
	})
	ws := newSearch(t, SearchConfig{SearxNGURL: srv.URL + "/searx/"})
	r := search(ws, tools.Args{"query": "go generics"})
	if !r.Success {
		t.Fatalf("search failed: %s", r.Content)
	}
	want := "1. Result 1 for go generics\n   https://example.org/1\n   snippet number 1 & more\n\n" +
		"2. Result 2 for go generics\n   https://example.org/2\n   snippet number 2 & more"
	if !strings.HasPrefix(r.Content, want) {
		t.Fatalf("content:\n%s\nwant it to start with:\n%s", r.Content, want)
	}
	if strings.Count(r.Content, "https://example.org/") != DefaultSearchResults || r.Metadata["results"] != DefaultSearchResults {
		t.Errorf("default result count: %v\n%s", r.Metadata, r.Content)
	}
	if r.Metadata["backend"] != "SearXNG" {
		t.Errorf("backend metadata = %v", r.Metadata["backend"])
	}
	if r := search(ws, tools.Args{"query": "x", "max_results": 2.0}); strings.Count(r.Content, "https://") != 2 {
		t.Errorf("max_results 2:\n%s", r.Content)
	}
}

func TestBraveWireFormat(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/res/v1/web/search" || r.URL.Query().Get("count") != "20" || r.URL.Query().Get("q") != "bbolt" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, `{"type":"search","web":{"type":"search","results":[
			{"title":"<strong>bbolt</strong> – an embedded key/value store","url":"https://github.com/etcd-io/bbolt","description":"An embedded <strong>key</strong>/value database for Go."},
			{"title":"Docs","url":"https://pkg.go.dev/go.etcd.io/bbolt","description":""}]}}`)
	})
	ws := newSearch(t, SearchConfig{BraveAPIKey: braveKey, BraveURL: srv.URL + "/res/v1/web/search"})
	r := search(ws, tools.Args{"query": "bbolt", "max_results": 50.0})
	want := "1. bbolt – an embedded key/value store\n   https://github.com/etcd-io/bbolt\n   An embedded key/value database for Go.\n\n2. Docs\n   https://pkg.go.dev/go.etcd.io/bbolt"
	if !r.Success || r.Content != want {
		t.Fatalf("content:\n%s\nwant:\n%s", r.Content, want)
	}
	assertNoSecret(t, r, braveKey)
}

func TestTavilyWireFormat(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			APIKey     string `json:"api_key"`
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"detail":{"error":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if body.APIKey != tavilyKey || r.Header.Get("Authorization") != "Bearer "+tavilyKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
			return
		}
		fmt.Fprintf(w, `{"query":%q,"answer":null,"results":[{"title":"T%d","url":"https://t.example/","content":"c","score":0.9}],"response_time":0.5}`, body.Query, body.MaxResults)
	})
	ws := newSearch(t, SearchConfig{Backend: "tavily", TavilyAPIKey: tavilyKey, TavilyURL: srv.URL + "/search", SearxNGURL: "http://unused.invalid"})
	r := search(ws, tools.Args{"query": "q", "max_results": 3.0})
	if !r.Success || r.Content != "1. T3\n   https://t.example/\n   c" {
		t.Fatalf("content = %q", r.Content)
	}
	assertNoSecret(t, r, tavilyKey)

	bad := newSearch(t, SearchConfig{TavilyAPIKey: "tvly-wrong", TavilyURL: srv.URL + "/search"})
	r = search(bad, tools.Args{"query": "q"})
	if r.Success || !strings.Contains(r.Content, "rejected the request as unauthorized (HTTP 401 Unauthorized: Unauthorized: missing or invalid API key.)") ||
		!strings.Contains(r.Content, "TAVILY_API_KEY") {
		t.Fatalf("bad key: %q", r.Content)
	}
	assertNoSecret(t, r, "tvly-wrong")
}

// Each backend's error answers become clear failed results, and a key the
// service echoes back is redacted.
func TestSearchErrorAnswers(t *testing.T) {
	type backendCase struct {
		name string
		cfg  func(url string) SearchConfig
	}
	backends := []backendCase{
		// SearXNG is picked first; the keys are configured too, and must be
		// redacted even though this backend does not use them.
		{"SearXNG", func(u string) SearchConfig {
			return SearchConfig{SearxNGURL: u, BraveAPIKey: braveKey, TavilyAPIKey: tavilyKey}
		}},
		{"Brave Search", func(u string) SearchConfig {
			return SearchConfig{BraveAPIKey: braveKey, BraveURL: u, TavilyAPIKey: tavilyKey}
		}},
		{"Tavily", func(u string) SearchConfig {
			return SearchConfig{Backend: "tavily", TavilyAPIKey: tavilyKey, TavilyURL: u, BraveAPIKey: braveKey}
		}},
	}
	answers := []struct {
		status  int
		header  http.Header
		body    string
		want    []string
		wantNot string
	}{
		{401, nil, `{"error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The key ` + braveKey + tavilyKey + ` is invalid."}}`,
			[]string{"rejected the request as unauthorized (HTTP 401 Unauthorized: The key <redacted><redacted> is invalid.)"}, ""},
		{403, nil, "", []string{" (HTTP 403 Forbidden)."}, ""},
		{429, http.Header{"Retry-After": {"17"}}, `{"message":"slow down"}`,
			[]string{"rate-limited the search (HTTP 429 Too Many Requests: slow down). Retry after 17 seconds."}, ""},
		{429, http.Header{"X-Ratelimit-Reset": {"3, 86400"}}, "",
			[]string{"rate-limited the search (HTTP 429 Too Many Requests). Retry after 3 seconds."}, ""},
		{500, http.Header{"Content-Type": {"text/plain"}}, "database exploded",
			[]string{"failed on its side (HTTP 500 Internal Server Error: database exploded). Try again later."}, ""},
		{502, http.Header{"Content-Type": {"text/html"}}, "<html><body>Bad gateway</body></html>",
			[]string{"failed on its side (HTTP 502 Bad Gateway). Try again later."}, "<html>"},
		{422, nil, `{"detail":"query too long"}`, []string{"refused the search (HTTP 422 Unprocessable Entity: query too long)."}, ""},
	}
	for _, b := range backends {
		for _, a := range answers {
			srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range a.header {
					w.Header()[k] = v
				}
				w.WriteHeader(a.status)
				io.WriteString(w, a.body)
			})
			r := search(newSearch(t, b.cfg(srv.URL)), tools.Args{"query": "anything"})
			if r.Success {
				t.Errorf("%s %d: succeeded", b.name, a.status)
				continue
			}
			for _, want := range append(a.want, b.name) {
				if !strings.Contains(r.Content, want) {
					t.Errorf("%s %d: %q\nwant it to contain %q", b.name, a.status, r.Content, want)
				}
			}
			if a.wantNot != "" && strings.Contains(r.Content, a.wantNot) {
				t.Errorf("%s %d: %q contains %q", b.name, a.status, r.Content, a.wantNot)
			}
			assertNoSecret(t, r, braveKey, tavilyKey)
		}
	}
}

// A SearXNG instance that refuses the JSON format (its default) is named
// by its URL, and the message says what to change in its settings.
func TestSearXNGThatRefusesJSON(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "<html><body>403 Forbidden</body></html>")
			return
		}
		io.WriteString(w, "<html>results</html>")
	})
	r := search(newSearch(t, SearchConfig{SearxNGURL: "http://user:pw-secret@" + strings.TrimPrefix(srv.URL, "http://") + "/?lang=en"}), tools.Args{"query": "x"})
	want := "SearXNG at " + srv.URL + "/search refused to answer in JSON (HTTP 403 Forbidden). " +
		"SearXNG answers 403 to format=json when the instance does not allow the JSON format: add json to search.formats in its settings.yml (formats: [html, json]) and restart it. " +
		"If the instance sits behind authentication, put the credentials in searxng_url (https://user:password@host)."
	if r.Success || r.Content != want {
		t.Fatalf("\n got %q\nwant %q", r.Content, want)
	}
	assertNoSecret(t, r, "pw-secret")

	// A URL that leads to a web page instead of the instance's API.
	page := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><title>Welcome to nginx</title>")
	})
	r = search(newSearch(t, SearchConfig{SearxNGURL: page.URL}), tools.Args{"query": "x"})
	if r.Success || !strings.HasPrefix(r.Content, "SearXNG at "+page.URL+"/search answered with a web page instead of JSON results (HTTP 200). Check searxng_url: it should be the instance's base URL") ||
		!strings.HasSuffix(r.Content, `(detail: Content-Type "text/html": invalid character '<' looking for beginning of value)`) {
		t.Fatalf("HTML answer: %q", r.Content)
	}

	// The limiter, and an instance that is not running.
	limited := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	r = search(newSearch(t, SearchConfig{SearxNGURL: limited.URL}), tools.Args{"query": "x"})
	if !strings.Contains(r.Content, "rate-limited the search (HTTP 429 Too Many Requests). Wait before searching again. SearXNG's limiter turns away clients it takes for bots") {
		t.Errorf("limiter: %q", r.Content)
	}
	down := limited.URL
	limited.Close()
	r = search(newSearch(t, SearchConfig{SearxNGURL: down}), tools.Args{"query": "x"})
	if !strings.HasPrefix(r.Content, "The search request to SearXNG at "+down+"/search failed: the connection was refused: nothing listens on that port (") {
		t.Errorf("down: %q", r.Content)
	}
}

// Titles and snippets lose their markup but keep text that only looks
// like it: entities are decoded, real tags removed, raw angle brackets kept.
func TestSearchResultsKeepAngleBrackets(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"results":[
			{"title":"std::vector&lt;int&gt; &amp; friends","url":"https://a.example/","content":"Use <span class=\"highlight\">vector</span>&lt;int&gt;.<br>Fast &quot;enough&quot;"},
			{"title":"std::vector<int> reference","url":"https://b.example/","content":"if a<b then Map<String, List<T>>"},
			{"title":"<strong>Go</strong> generics: <em>type</em> parameters","url":"https://c.example/","content":"1 < 2 &amp;&amp; 3 > 2"}
		]}`)
	})
	r := search(newSearch(t, SearchConfig{SearxNGURL: srv.URL}), tools.Args{"query": "vector"})
	want := "1. std::vector<int> & friends\n   https://a.example/\n   Use vector<int>. Fast \"enough\"\n\n" +
		"2. std::vector<int> reference\n   https://b.example/\n   if a<b then Map<String, List<T>>\n\n" +
		"3. Go generics: type parameters\n   https://c.example/\n   1 < 2 && 3 > 2"
	if !r.Success || r.Content != want {
		t.Fatalf("\n got %q\nwant %q", r.Content, want)
	}
}

func TestSearchDoesNotFollowRedirectToAnotherHost(t *testing.T) {
	elsewhere := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"results":[]}`) })
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old/search" {
			http.Redirect(w, r, "/new/search?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		if r.URL.Path == "/new/search" {
			io.WriteString(w, `{"results":[{"title":"moved","url":"https://m.example/","content":""}]}`)
			return
		}
		http.Redirect(w, r, elsewhere.URL+"/search", http.StatusFound)
	})
	same := search(newSearch(t, SearchConfig{SearxNGURL: srv.URL + "/old"}), tools.Args{"query": "x"})
	if !same.Success || !strings.Contains(same.Content, "1. moved") {
		t.Fatalf("same-host redirect: %q", same.Content)
	}
	r := search(newSearch(t, SearchConfig{SearxNGURL: srv.URL + "/other"}), tools.Args{"query": "x"})
	if r.Success || !strings.Contains(r.Content, "redirected to another host") {
		t.Fatalf("content = %q", r.Content)
	}
	if elsewhere.hits.Load() != 0 {
		t.Fatal("the redirect to another host was followed")
	}
}

func TestSearchNotConfigured(t *testing.T) {
	r := search(newSearch(t, SearchConfig{}), tools.Args{"query": "x"})
	if r.Success {
		t.Fatal("unconfigured search succeeded")
	}
	for _, want := range []string{"web_search is not configured", "[web.search]", "searxng_url", "brave_api_key", "tavily_api_key", "SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("message lacks %q:\n%s", want, r.Content)
		}
	}

	r = search(newSearch(t, SearchConfig{Backend: "Brave"}), tools.Args{"query": "x"})
	if r.Success || !strings.Contains(r.Content, "brave_api_key") || !strings.Contains(r.Content, "BRAVE_API_KEY") {
		t.Errorf("backend without key: %q", r.Content)
	}

	if _, err := newWebSearch(SearchConfig{Backend: "bing"}, noEnv); err == nil || !strings.Contains(err.Error(), "searxng, brave or tavily") {
		t.Errorf("unknown backend: %v", err)
	}
	if _, err := newWebSearch(SearchConfig{SearxNGURL: "localhost:8888"}, noEnv); err == nil || !strings.Contains(err.Error(), "searxng_url") {
		t.Errorf("URL without scheme: %v", err)
	}
}

func TestSearchSettingsFromEnvironment(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results":[{"title":"env","url":"https://e.example/","content":"s"}]}`)
	})
	env := map[string]string{EnvSearxNGURL: srv.URL, EnvBraveAPIKey: braveKey}
	ws, err := newWebSearch(SearchConfig{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// SearXNG comes first when several are configured: it is local-first.
	if r := search(ws, tools.Args{"query": "x"}); !r.Success || r.Metadata["backend"] != "SearXNG" {
		t.Fatalf("env SearXNG: %q %v", r.Content, r.Metadata)
	}
	// A value in the config file wins over the environment.
	ws, _ = newWebSearch(SearchConfig{Backend: "brave", BraveAPIKey: "from-config"}, func(k string) string { return env[k] })
	if b := ws.backend.(*brave); b.key != "from-config" {
		t.Fatalf("key = %q", b.key)
	}
}

func TestSearchArguments(t *testing.T) {
	ws := newSearch(t, SearchConfig{SearxNGURL: "http://127.0.0.1:9"})
	if r := search(ws, tools.Args{"query": "  "}); r.Success || r.Content != "No search query provided." {
		t.Errorf("blank query: %q", r.Content)
	}
	if r := search(ws, tools.Args{"query": "x", "max_results": 0.0}); r.Success || !strings.Contains(r.Content, "at least 1") {
		t.Errorf("zero results: %q", r.Content)
	}
	if s := ws.Spec(); !s.RequiresConfirmation || s.Metadata["backend"] != "SearXNG" {
		t.Errorf("spec = %+v", s)
	}
}

func TestSearchNoResults(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"results":[]}`) })
	r := search(newSearch(t, SearchConfig{SearxNGURL: srv.URL}), tools.Args{"query": "zxqv"})
	if !r.Success || r.Content != `No results found for "zxqv".` {
		t.Fatalf("content = %q", r.Content)
	}
}
