package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Built the way the CLI builds them (registry + executor), the network
// tools refuse to run when nobody can confirm, and the server never hears
// of the call.
func TestNetworkToolsNeedConfirmation(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results":[{"title":"t","url":"https://u.example/","content":"c"}]}`)
	})
	cfg := Config{
		HTTP:   HTTPConfig{AllowHosts: []string{"127.0.0.1"}},
		Search: SearchConfig{SearxNGURL: srv.URL},
	}
	reg := tools.NewRegistry()
	if err := reg.Register("http_request", HTTPRequestFactory(cfg)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("web_search", WebSearchFactory(cfg)); err != nil {
		t.Fatal(err)
	}
	list, err := reg.BuildAll(tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	calls := []tools.Call{
		{ID: "1", Name: "http_request", Arguments: fmt.Sprintf(`{"url": %q}`, srv.URL)},
		{ID: "2", Name: "web_search", Arguments: `{"query": "private thoughts"}`},
	}

	unconfirmed, err := tools.NewExecutor(list, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		r := unconfirmed.Execute(context.Background(), c)
		want := fmt.Sprintf("Tool '%s' requires confirmation but no confirmation callback is available.", c.Name)
		if r.Success || r.Status != tools.StatusDenied || r.Content != want {
			t.Errorf("%s without a confirmer: %v %q", c.Name, r.Status, r.Content)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the server received %d requests from unconfirmed calls", n)
	}

	denied, _ := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: tools.DenyAll})
	if r := denied.Execute(context.Background(), calls[0]); r.Status != tools.StatusDenied {
		t.Errorf("denied call: %v %q", r.Status, r.Content)
	}

	approved, _ := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: tools.AllowAll})
	for _, c := range calls {
		if r := approved.Execute(context.Background(), c); !r.Success {
			t.Errorf("%s approved: %q", c.Name, r.Content)
		}
	}
	if n := srv.hits.Load(); n != 2 {
		t.Fatalf("approved calls reached the server %d times, want 2", n)
	}

	// The user may lift the requirement explicitly, per tool.
	off := false
	lifted, err := reg.Build("web_search", tools.Deps{Settings: map[string]tools.Settings{"web_search": {RequiresConfirmation: &off}}})
	if err != nil || lifted.Spec().RequiresConfirmation {
		t.Fatalf("confirm = false override: %v %+v", err, lifted.Spec())
	}
}

// The README's example block decodes into Config with the same meaning.
func TestConfigDecodesFromTOML(t *testing.T) {
	const doc = `
[web.http]
allow_hosts = ["localhost", "192.168.1.0/24", "nas.lan"]
max_bytes = 2097152
timeout = 20
max_timeout = 90
user_agent = "jarvis/1 (+me@example.org)"

[web.search]
backend = "searxng"
searxng_url = "http://localhost:8888"
brave_api_key = "BSA..."
tavily_api_key = "tvly-..."
brave_url = "https://api.search.brave.com/res/v1/web/search"
tavily_url = "https://api.tavily.com/search"
timeout = 15
`
	var file struct {
		Web Config `toml:"web"`
	}
	md, err := toml.Decode(doc, &file)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Fatalf("keys not decoded: %v", u)
	}
	c := file.Web
	if strings.Join(c.HTTP.AllowHosts, ",") != "localhost,192.168.1.0/24,nas.lan" || c.HTTP.MaxBytes != 2<<20 ||
		c.HTTP.Timeout != 20 || c.HTTP.MaxTimeout != 90 || c.HTTP.UserAgent == "" {
		t.Errorf("http = %+v", c.HTTP)
	}
	if c.Search.Backend != "searxng" || c.Search.SearxNGURL != "http://localhost:8888" || c.Search.BraveAPIKey != "BSA..." ||
		c.Search.TavilyAPIKey != "tvly-..." || c.Search.Timeout != 15 || c.Search.BraveURL == "" || c.Search.TavilyURL == "" {
		t.Errorf("search = %+v", c.Search)
	}
	if _, err := NewHTTPRequest(c.HTTP); err != nil {
		t.Errorf("example http config rejected: %v", err)
	}
}

// A grant of http_request covers the host of the URL, whatever the path,
// with the port only when it is not the scheme's.
func TestHTTPRequestGrantsOneHost(t *testing.T) {
	h, err := NewHTTPRequest(HTTPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"https://API.github.com/repos/x": "api.github.com",
		"https://api.github.com:443/y":   "api.github.com",
		"http://nas.lan:8080/status":     "nas.lan:8080",
		"http://[::1]:9000/":             "[::1]:9000",
		"not a url":                      "(no host)",
	} {
		sc := h.GrantScope(tools.Args{"url": url})
		if sc.Kind != tools.ScopeHost || sc.Value != want || sc.Words != "requests to "+want {
			t.Errorf("%s: %+v, want %s", url, sc, want)
		}
	}
	a, b := h.GrantScope(tools.Args{"url": "https://api.github.com/a"}), h.GrantScope(tools.Args{"url": "https://evil.example/a"})
	if (tools.Grant{Tool: "http_request", Scope: a}).Covers("http_request", b) {
		t.Fatal("a grant for one host covers another")
	}
}
