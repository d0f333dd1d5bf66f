package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// fakeResolver answers names from a table, like a DNS server an attacker
// controls would.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		out[i] = net.IPAddr{IP: net.ParseIP(a)}
	}
	return out, nil
}

// countingServer is a loopback server that counts the requests it got, so
// a test can prove a refused request never arrived.
type countingServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	cs := &countingServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) port() string {
	u, _ := url.Parse(cs.URL)
	return u.Port()
}

func newTool(t *testing.T, cfg HTTPConfig, res Resolver) *HTTPRequest {
	t.Helper()
	if res == nil {
		res = fakeResolver{}
	}
	h, err := NewHTTPRequest(cfg, WithResolver(res))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func run(h *HTTPRequest, args tools.Args) tools.Result {
	return h.Execute(context.Background(), args)
}

func TestHTTPRequestAllowListedLoopback(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Set-Cookie", "session=secret")
		fmt.Fprint(w, "hello from loopback")
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": srv.URL + "/greet"})
	if !r.Success {
		t.Fatalf("allow-listed request failed: %s", r.Content)
	}
	for _, want := range []string{"HTTP/1.1 200 OK", "Content-Type: text/plain; charset=utf-8", `ETag: "v1"`, "\n\nhello from loopback"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, r.Content)
		}
	}
	if strings.Contains(r.Content, "session=secret") {
		t.Error("content shows Set-Cookie; only key headers belong there")
	}
	if r.Metadata["status"] != 200 || r.Metadata["final_url"] != srv.URL+"/greet" || r.Metadata["redirects"] != 0 {
		t.Errorf("metadata = %v", r.Metadata)
	}
	if _, ok := r.Metadata["elapsed_ms"].(int64); !ok {
		t.Errorf("metadata lacks elapsed_ms: %v", r.Metadata)
	}
	if hdr, _ := r.Metadata["headers"].(map[string]string); hdr["Content-Type"] == "" {
		t.Errorf("metadata headers = %v", r.Metadata["headers"])
	}
}

// Every spelling of a loopback or private address is refused, and the
// server never sees a request.
func TestHTTPRequestRefusesPrivateAndLoopbackForms(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	port := srv.port()
	h := newTool(t, HTTPConfig{}, fakeResolver{"localhost": {"127.0.0.1"}})
	cases := map[string]string{
		"127.0.0.1":          "a loopback address",
		"127.0.0.2":          "a loopback address",
		"2130706433":         "non-standard numeric form",
		"0177.0.0.1":         "non-standard numeric form",
		"0x7f000001":         "non-standard numeric form",
		"0x7f.0.0.1":         "non-standard numeric form",
		"127.1":              "non-standard numeric form",
		"[::1]":              "::1, a loopback address",
		"[::ffff:127.0.0.1]": "IPv4-mapped form of 127.0.0.1",
		"[::ffff:7f00:1]":    "IPv4-mapped form of 127.0.0.1",
		"[::127.0.0.1]":      "IPv4-compatible form of 127.0.0.1",
		"[64:ff9b::7f00:1]":  "NAT64 address embedding 127.0.0.1",
		"[2002:7f00:1::1]":   "6to4 address embedding 127.0.0.1",
		"[fe80::1%25lo]":     "link-local",
		"10.0.0.1":           "private address",
		"192.168.0.1":        "private address",
		"169.254.169.254":    "link-local",
		"100.64.0.1":         "carrier-grade NAT",
		"0.0.0.0":            "unspecified",
		"localhost":          "the host localhost resolves to 127.0.0.1",
		"LOCALHOST.":         "the host localhost resolves to 127.0.0.1",
	}
	for host, want := range cases {
		r := run(h, tools.Args{"url": "http://" + host + ":" + port + "/"})
		if r.Success || !strings.HasPrefix(r.Content, "Refused: ") || !strings.Contains(r.Content, want) {
			t.Errorf("%s: got success=%v %q; want a refusal mentioning %q", host, r.Success, r.Content, want)
		}
		if r.Metadata["blocked"] != true {
			t.Errorf("%s: metadata lacks blocked=true: %v", host, r.Metadata)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the server received %d requests; every one should have been refused before sending", n)
	}
}

// A name is checked on the addresses it resolves to, at dial time: the
// resolver here plays an attacker's DNS server.
func TestHTTPRequestRefusesNameResolvingToLoopback(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	dns := fakeResolver{
		"rebind.example": {"127.0.0.1"},
		"mixed.example":  {"93.184.215.14", "127.0.0.1"},
		"mapped.example": {"::ffff:127.0.0.1"},
	}
	h := newTool(t, HTTPConfig{}, dns)
	for name, want := range map[string]string{
		"rebind.example": "the host rebind.example resolves to 127.0.0.1, a loopback address",
		"mixed.example":  "the host mixed.example resolves to 127.0.0.1",
		"mapped.example": "the host mapped.example resolves to 127.0.0.1, a loopback address",
	} {
		r := run(h, tools.Args{"url": "http://" + name + ":" + srv.port() + "/"})
		if r.Success || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q; want a refusal mentioning %q", name, r.Content, want)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the server received %d requests", n)
	}

	// The same name reaches the server once its network is allowed, which
	// shows the dialler connects to the address it checked.
	allowed := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.0/8"}}, dns)
	r := run(allowed, tools.Args{"url": "http://rebind.example:" + srv.port() + "/"})
	if !r.Success || !strings.HasSuffix(r.Content, "reached") {
		t.Fatalf("allow-listed network: %s", r.Content)
	}

	unknown := run(h, tools.Args{"url": "http://nowhere.example/"})
	if unknown.Success || !strings.Contains(unknown.Content, "nowhere.example was not found") {
		t.Errorf("unknown name: %q", unknown.Content)
	}
}

func TestHTTPRequestRefusesRedirectToInternalAddress(t *testing.T) {
	inner := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal secret") })
	target := map[string]string{
		"/literal": "http://127.0.0.1:" + inner.port() + "/admin",
		"/mapped":  "http://[::ffff:127.0.0.1]:" + inner.port() + "/admin",
		"/numeric": "http://2130706433:" + inner.port() + "/admin",
		"/name":    "http://internal.example:" + inner.port() + "/admin",
		"/file":    "file:///etc/passwd",
	}
	front := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target[r.URL.Path], http.StatusFound)
	})
	// front.example is allow-listed by name and resolves to loopback, where
	// the front server listens; the redirect targets are not allowed.
	dns := fakeResolver{"front.example": {"127.0.0.1"}, "internal.example": {"127.0.0.1"}}
	h := newTool(t, HTTPConfig{AllowHosts: []string{"front.example"}}, dns)
	frontURL := "http://front.example:" + front.port()
	for path, want := range map[string]string{
		"/literal": "the redirect from " + frontURL + "/literal to http://127.0.0.1:" + inner.port() + "/admin points to 127.0.0.1, a loopback address",
		"/mapped":  "IPv4-mapped form of 127.0.0.1",
		"/numeric": "non-standard numeric form",
		"/name":    "the redirect from " + frontURL + "/name to http://internal.example:" + inner.port() + "/admin: the host internal.example resolves to 127.0.0.1",
		"/file":    `scheme "file" is not http or https`,
	} {
		r := run(h, tools.Args{"url": frontURL + path})
		if r.Success || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q\nwant it to contain %q", path, r.Content, want)
		}
	}
	if n := inner.hits.Load(); n != 0 {
		t.Fatalf("the internal server received %d requests through redirects", n)
	}
	if n := front.hits.Load(); n != int64(len(target)) {
		t.Fatalf("front server hits = %d, want %d", n, len(target))
	}
}

func TestHTTPRequestRedirectLimit(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if r.URL.Query().Get("stop") == strconv.Itoa(n) {
			fmt.Fprintf(w, "arrived after %d", n)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d?%s", n+1, r.URL.RawQuery), http.StatusFound)
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)

	ok := run(h, tools.Args{"url": srv.URL + "/hop/0?stop=5"})
	if !ok.Success || !strings.Contains(ok.Content, "arrived after 5") || ok.Metadata["redirects"] != 5 {
		t.Fatalf("5 redirects: %v %q %v", ok.Success, ok.Content, ok.Metadata["redirects"])
	}
	if !strings.Contains(ok.Content, "Final URL: "+srv.URL+"/hop/5?stop=5") {
		t.Errorf("content lacks the final URL:\n%s", ok.Content)
	}

	srv.hits.Store(0)
	loop := run(h, tools.Args{"url": srv.URL + "/hop/0?stop=never"})
	if loop.Success || !strings.HasPrefix(loop.Content, "Stopped after 5 redirects: each request was answered with another redirect") {
		t.Fatalf("redirect loop: %q", loop.Content)
	}
	if n := srv.hits.Load(); n != 6 {
		t.Fatalf("redirect loop made %d requests, want 6 (the first and 5 redirects)", n)
	}
}

func TestHTTPRequestCapsBody(t *testing.T) {
	big := strings.Repeat("0123456789", 300_000) // 3 MB
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, big)
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": srv.URL})
	if !r.Success || !strings.HasSuffix(r.Content, "\n[response truncated at 1048576 bytes]") {
		t.Fatalf("default cap: success=%v, tail %q", r.Success, r.Content[max(0, len(r.Content)-80):])
	}
	if r.Metadata["bytes"] != 1<<20 || r.Metadata["truncated"] != true {
		t.Errorf("metadata = %v", r.Metadata)
	}

	small := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}, MaxBytes: 1000}, nil)
	r = run(small, tools.Args{"url": srv.URL})
	body := r.Content[strings.Index(r.Content, "\n\n")+2:]
	if want := big[:1000] + "\n[response truncated at 1000 bytes]"; body != want {
		t.Fatalf("configured cap: body %q", body[max(0, len(body)-60):])
	}
}

func TestHTTPRequestTruncationKeepsCharactersWhole(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ab"+strings.Repeat("é", 10)) // 'é' is two bytes
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}, MaxBytes: 5}, nil)
	r := run(h, tools.Args{"url": srv.URL})
	if !strings.HasSuffix(r.Content, "\n\nabé\n[response truncated at 5 bytes]") {
		t.Fatalf("content = %q", r.Content)
	}
}

func TestHTTPRequestSummarisesBinary(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 4000)...)
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sniff" {
			w.Header()["Content-Type"] = nil // let the client sniff
		} else {
			w.Header().Set("Content-Type", "image/png")
		}
		w.Write(png)
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	for _, path := range []string{"/typed", "/sniff"} {
		r := run(h, tools.Args{"url": srv.URL + path})
		want := fmt.Sprintf("[binary content not shown: image/png, %d bytes]", len(png))
		if !r.Success || !strings.HasSuffix(r.Content, want) || strings.Contains(r.Content, "IHDR") {
			t.Errorf("%s: %q", path, r.Content)
		}
		if r.Metadata["binary"] != true {
			t.Errorf("%s: metadata binary = %v", path, r.Metadata["binary"])
		}
	}
}

func TestHTTPRequestDecodesDeclaredCharset(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	if r := run(h, tools.Args{"url": srv.URL}); !strings.HasSuffix(r.Content, "\n\ncafé") {
		t.Fatalf("content = %q", r.Content)
	}
}

func TestHTTPRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": srv.URL, "timeout": 0.2})
	if want := "The request to " + srv.URL + " was sent, but no answer came within the 0.2s timeout. Try again later, or pass a larger 'timeout' (up to 120)."; r.Success || r.Content != want {
		t.Fatalf("content = %q", r.Content)
	}

	// A cancelled call (the executor's timeout, or the user) stops too.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result)
	go func() { done <- h.Execute(ctx, tools.Args{"url": srv.URL}) }()
	cancel()
	if r := <-done; r.Success {
		t.Fatal("cancelled request succeeded")
	}
}

func TestHTTPRequestSendsMethodHeadersAndBody(t *testing.T) {
	type seen struct {
		method, body, ctype, ua, custom string
	}
	var mu sync.Mutex
	var got []seen
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, string(b), r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), r.Header.Get("X-Custom")})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, "made")
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}, UserAgent: "probe/2"}, nil)
	r := run(h, tools.Args{
		"url": srv.URL, "method": "POST", "body": `{"a":1}`,
		"headers": map[string]any{"x-custom": "yes"},
	})
	if !r.Success || !strings.HasPrefix(r.Content, "HTTP/1.1 201 Created") {
		t.Fatalf("POST: %q", r.Content)
	}
	run(h, tools.Args{"url": srv.URL, "method": "PUT", "body": "plain words", "headers": map[string]any{"User-Agent": "mine/1"}})
	run(h, tools.Args{"url": srv.URL, "method": "PATCH", "body": "<x/>", "headers": map[string]any{"Content-Type": "application/xml"}})
	run(h, tools.Args{"url": srv.URL, "method": "DELETE"})
	head := run(h, tools.Args{"url": srv.URL, "method": "HEAD"})
	if !strings.HasSuffix(head.Content, "(HEAD request: no body)") {
		t.Errorf("HEAD content = %q", head.Content)
	}
	want := []seen{
		{"POST", `{"a":1}`, "application/json", "probe/2", "yes"},
		{"PUT", "plain words", "text/plain; charset=utf-8", "mine/1", ""},
		{"PATCH", "<x/>", "application/xml", "probe/2", ""},
		{"DELETE", "", "", "probe/2", ""},
		{"HEAD", "", "", "probe/2", ""},
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("server saw\n%v\nwant\n%v", got, want)
	}
}

func TestHTTPRequestErrorStatusIsAFailureWithBody(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": srv.URL + "/missing"})
	if r.Success || !strings.HasPrefix(r.Content, "HTTP/1.1 404 Not Found") || !strings.Contains(r.Content, "no such page") {
		t.Fatalf("404: success=%v %q", r.Success, r.Content)
	}
	if r.Metadata["status"] != 404 {
		t.Errorf("status metadata = %v", r.Metadata["status"])
	}
}

func TestHTTPRequestArgumentErrors(t *testing.T) {
	h := newTool(t, HTTPConfig{}, nil)
	cases := []struct {
		args tools.Args
		want string
	}{
		{tools.Args{}, "No URL provided."},
		{tools.Args{"url": "ftp://example.com/x"}, `scheme "ftp" is not http or https`},
		{tools.Args{"url": "example.com/path"}, "has no scheme"},
		{tools.Args{"url": "http://exa mple.com/"}, "Invalid URL"},
		{tools.Args{"url": "https://example.com", "method": "HEAD", "body": "x"}, "HEAD request cannot carry a body"},
		{tools.Args{"url": "https://example.com", "headers": map[string]any{"Host": "internal"}}, `Header "Host" cannot be set`},
		{tools.Args{"url": "https://example.com", "headers": map[string]any{"Bad Name": "v"}}, "not a valid HTTP header"},
		{tools.Args{"url": "https://example.com", "headers": map[string]any{"X-A": "v\r\nX-B: w"}}, "not a valid HTTP header"},
		{tools.Args{"url": "https://example.com", "headers": map[string]any{"X-A": 3.0}}, "must have a string value"},
		{tools.Args{"url": "https://example.com", "timeout": -1.0}, "positive number of seconds"},
	}
	for _, c := range cases {
		r := run(h, c.args)
		if r.Success || !strings.Contains(r.Content, c.want) {
			t.Errorf("%v: %q; want it to contain %q", c.args, r.Content, c.want)
		}
	}
}

// A proxy from the environment would connect to the destination on our
// behalf, out of the dialler's sight: http_request must not use one.
func TestHTTPRequestIgnoresProxyFromEnvironment(t *testing.T) {
	proxy := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "via proxy") })
	target := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "direct") })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	dns := fakeResolver{"site.example": {"127.0.0.1"}}
	h := newTool(t, HTTPConfig{AllowHosts: []string{"site.example"}}, dns)
	r := run(h, tools.Args{"url": "http://site.example:" + target.port() + "/"})
	if !r.Success || !strings.HasSuffix(r.Content, "direct") {
		t.Fatalf("content = %q", r.Content)
	}
	if proxy.hits.Load() != 0 {
		t.Fatal("the request went through the environment's proxy")
	}
}

func TestHTTPConfigValidation(t *testing.T) {
	for _, cfg := range []HTTPConfig{
		{MaxBytes: -1},
		{Timeout: 300, MaxTimeout: 60},
		{AllowHosts: []string{"10.0.0.0/99"}},
	} {
		if _, err := NewHTTPRequest(cfg); err == nil {
			t.Errorf("NewHTTPRequest(%+v) succeeded; want an error", cfg)
		}
	}
	// The registry gets a real nil, not a nil pointer inside an interface.
	if tool, err := HTTPRequestFactory(Config{HTTP: HTTPConfig{MaxBytes: -1}})(tools.Deps{}); err == nil || tool != nil {
		t.Errorf("factory with a bad config = %v, %v", tool, err)
	}
	if tool, err := WebSearchFactory(Config{Search: SearchConfig{Backend: "bing"}})(tools.Deps{}); err == nil || tool != nil {
		t.Errorf("search factory with a bad config = %v, %v", tool, err)
	}
	h := newTool(t, HTTPConfig{}, nil)
	spec := h.Spec()
	if !spec.RequiresConfirmation || spec.TimeoutSeconds != DefaultMaxTimeout+5 || spec.Metadata["max_bytes"] != int64(DefaultMaxBytes) {
		t.Errorf("spec = %+v", spec)
	}
}
