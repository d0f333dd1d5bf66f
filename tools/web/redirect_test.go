package web

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// publicAddrs makes public addresses lead to loopback servers, so a test
// can stand in for sites on the internet: the policy judges the public
// address, and the connection goes to the server instead.
func publicAddrs(t *testing.T, servers map[string]*countingServer) Option {
	t.Helper()
	table := map[netip.AddrPort]string{}
	for public, srv := range servers {
		u, _ := url.Parse(srv.URL)
		table[netip.MustParseAddrPort(public)] = u.Host
	}
	return func(o *options) {
		o.dial = func(ctx context.Context, d *net.Dialer, network string, to netip.AddrPort) (net.Conn, error) {
			if local, ok := table[to]; ok {
				return (&net.Dialer{}).DialContext(ctx, network, local)
			}
			return d.DialContext(ctx, network, to.String())
		}
	}
}

// A redirect from a public site must not lead an approved request into an
// allow-listed private host; a redirect between allow-listed destinations
// still works.
func TestHTTPRequestRedirectFromPublicSiteToAllowListedHost(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	internal := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
		switch r.URL.Path {
		case "/to-lan":
			http.Redirect(w, r, "http://lan.example:"+portOf(r.Host)+"/admin", http.StatusFound)
		default:
			fmt.Fprint(w, "internal secret")
		}
	})
	port := internal.port()
	internalURL := "http://127.0.0.1:" + port
	targets := map[string]string{
		"/to-literal":     internalURL + "/admin",
		"/to-listed-name": "http://nas.example:" + port + "/admin",
		"/to-listed-net":  "http://lan.example:" + port + "/admin",
		"/to-public":      "http://other.example/ok",
		"/via-public":     "http://other.example/to-literal",
	}
	public := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			fmt.Fprint(w, "public ok")
			return
		}
		// 307 keeps the method and the body.
		http.Redirect(w, r, targets[r.URL.Path], http.StatusTemporaryRedirect)
	})
	dns := fakeResolver{
		"public.example": {"93.184.215.14"},
		"other.example":  {"93.184.215.15"},
		"nas.example":    {"127.0.0.1"}, // allow-listed by name
		"lan.example":    {"127.0.0.1"}, // allow-listed by address only
	}
	h, err := NewHTTPRequest(HTTPConfig{AllowHosts: []string{"127.0.0.1", "nas.example"}}, WithResolver(dns),
		publicAddrs(t, map[string]*countingServer{"93.184.215.14:80": public, "93.184.215.15:80": public}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })

	// Direct requests to the allow-listed host work, and leave idle
	// connections to it that a redirect must not be able to reuse.
	for _, direct := range []string{internalURL, "http://nas.example:" + port, "http://lan.example:" + port} {
		if r := run(h, tools.Args{"url": direct + "/direct"}); !r.Success || !strings.Contains(r.Content, "internal secret") {
			t.Fatalf("direct request to %s: %q", direct, r.Content)
		}
	}
	mu.Lock()
	bodies = nil
	mu.Unlock()

	const why = ". allow_hosts lists it, but http_request follows a redirect to an allow-listed destination only from another allow-listed one"
	for path, want := range map[string]string{
		"/to-literal":     "the redirect from http://public.example/to-literal to " + internalURL + "/admin points to 127.0.0.1, a loopback address" + why,
		"/to-listed-name": "the redirect from http://public.example/to-listed-name to http://nas.example:" + port + "/admin: the host nas.example resolves to 127.0.0.1, a loopback address" + why,
		"/to-listed-net":  "the redirect from http://public.example/to-listed-net to http://lan.example:" + port + "/admin: the host lan.example resolves to 127.0.0.1, a loopback address" + why,
		"/via-public":     "the redirect from http://other.example/to-literal to " + internalURL + "/admin points to 127.0.0.1, a loopback address" + why,
	} {
		r := run(h, tools.Args{"url": "http://public.example" + path, "method": "POST", "body": "form=secret"})
		if r.Success || !strings.Contains(r.Content, want) || r.Metadata["blocked"] != true {
			t.Errorf("%s: %q\nwant it to contain %q", path, r.Content, want)
		}
	}
	mu.Lock()
	if len(bodies) != 0 {
		t.Errorf("the allow-listed server received redirected requests: %q", bodies)
	}
	mu.Unlock()

	// Redirects between public sites are followed as before.
	if r := run(h, tools.Args{"url": "http://public.example/to-public"}); !r.Success || !strings.Contains(r.Content, "public ok") || r.Metadata["redirects"] != 1 {
		t.Errorf("public to public: %v %q", r.Success, r.Content)
	}
	// From an allow-listed destination, redirects into the allow-list are
	// followed: by name to an address, and from an address to a name in an
	// allow-listed network.
	for _, start := range []string{"http://nas.example:" + port + "/to-lan", internalURL + "/to-lan"} {
		r := run(h, tools.Args{"url": start, "method": "POST", "body": "kept"})
		if !r.Success || !strings.Contains(r.Content, "internal secret") || r.Metadata["redirects"] != 1 {
			t.Errorf("%s: %v %q", start, r.Success, r.Content)
		}
	}
}

func portOf(hostport string) string {
	_, port, _ := strings.Cut(hostport, ":")
	return port
}

// Over https the connection the trace reports is the TLS one; the mark of
// the dialer is found under it.
func TestAllowListedConnSeesThroughTLS(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, listed := range []bool{true, false} {
		c := tls.Client(&checkedConn{Conn: a, allowListed: listed}, &tls.Config{ServerName: "nas.example"})
		if got := allowListedConn(c); got != listed {
			t.Errorf("allowListedConn(tls over %v) = %v", listed, got)
		}
	}
	if allowListedConn(a) || allowListedConn(nil) {
		t.Error("a connection the dialer did not make counts as allow-listed")
	}
}
