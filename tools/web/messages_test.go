package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// A request that runs out of time says how far it got, and suggests a
// larger timeout only while there is room for one.
func TestHTTPRequestTimeoutMessages(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}, MaxTimeout: 0.3}, nil)

	const capped = "0.3s is already the most allowed (max_timeout under [web.http] in the config), so a longer wait is not possible; try again later, or the server may be too slow for http_request."
	r := run(h, tools.Args{"url": srv.URL + "/slow", "timeout": 0.3})
	if want := "The request to " + srv.URL + "/slow was sent, but no answer came within the 0.3s timeout. " + capped; r.Content != want {
		t.Errorf("at the cap:\n got %q\nwant %q", r.Content, want)
	}
	if r.Metadata["sent"] != true {
		t.Errorf("sent = %v", r.Metadata["sent"])
	}
	r = run(h, tools.Args{"url": srv.URL + "/slow", "timeout": 10})
	if want := "The call asked for 10s, but 0.3s is the most allowed"; !strings.Contains(r.Content, want) {
		t.Errorf("asked above the cap: %q", r.Content)
	}
	// A POST that got no answer may still have done its work.
	r = run(h, tools.Args{"url": srv.URL + "/slow", "method": "POST", "body": "x", "timeout": 0.2})
	if want := "no answer came within the 0.2s timeout. The server may still have acted on the POST; check before sending it again. Try again later, or pass a larger 'timeout' (up to 0.3)."; !strings.Contains(r.Content, want) {
		t.Errorf("POST: %q", r.Content)
	}
}

// A destination that never accepts the connection: nothing was sent.
func TestHTTPRequestConnectTimeout(t *testing.T) {
	blackhole := func(o *options) {
		o.dial = func(ctx context.Context, _ *net.Dialer, _ string, _ netip.AddrPort) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	h, err := NewHTTPRequest(HTTPConfig{}, WithResolver(fakeResolver{"slow.example": {"93.184.215.14"}}), blackhole)
	if err != nil {
		t.Fatal(err)
	}
	r := run(h, tools.Args{"url": "http://slow.example/x", "timeout": 0.2})
	if want := "Could not connect to slow.example within the 0.2s timeout; the request was not sent. Try again later, or pass a larger 'timeout' (up to 120)."; r.Content != want || r.Metadata["sent"] != false {
		t.Errorf("got %q (sent %v)", r.Content, r.Metadata["sent"])
	}
}

// A redirect that is refused says that the first request was sent (and
// answered), and that nothing went to the refused destination.
func TestHTTPRequestRefusedRedirectSaysWhatWasSent(t *testing.T) {
	inner := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal") })
	front := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+inner.port()+"/admin", http.StatusFound)
	})
	dns := fakeResolver{"front.example": {"127.0.0.1"}}
	h := newTool(t, HTTPConfig{AllowHosts: []string{"front.example"}}, dns)
	from := "http://front.example:" + front.port() + "/start"
	to := "http://127.0.0.1:" + inner.port() + "/admin"
	r := run(h, tools.Args{"url": from})
	want := "Refused: the redirect from " + from + " to " + to + " points to 127.0.0.1, a loopback address. " +
		"http_request does not connect to loopback, private, link-local or other non-public addresses, so that a model cannot reach services on this machine or its network; " +
		"the request to " + from + " was sent and answered with a redirect (HTTP 302 Found), which was not followed: nothing was sent to " + to + ". " +
		"If this destination is meant to be reachable, add its host name or address to allow_hosts under [web.http] in the config file."
	if r.Content != want {
		t.Errorf("\n got %q\nwant %q", r.Content, want)
	}
	if front.hits.Load() != 1 || inner.hits.Load() != 0 {
		t.Errorf("hits: front %d, inner %d", front.hits.Load(), inner.hits.Load())
	}
	// A URL refused before anything is sent says so.
	r = run(h, tools.Args{"url": to})
	if !strings.Contains(r.Content, "; the request was not sent. If this destination") || strings.Contains(r.Content, "redirect") {
		t.Errorf("direct: %q", r.Content)
	}
}

// Connection failures say whether the request went out.
func TestHTTPRequestConnectionFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": "http://" + addr + "/"})
	if !strings.HasPrefix(r.Content, "The request to http://"+addr+"/ could not be sent: the connection was refused: nothing listens on that port (") {
		t.Errorf("refused: %q", r.Content)
	}

	// A server that reads the request and hangs up without answering.
	hangup := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	r = run(h, tools.Args{"url": hangup.URL + "/x", "method": "DELETE"})
	if !strings.HasPrefix(r.Content, "The request to "+hangup.URL+"/x was sent, but no answer came: the server closed the connection (") ||
		!strings.HasSuffix(r.Content, "The server may still have acted on the DELETE; check before sending it again.") {
		t.Errorf("hang-up: %q", r.Content)
	}
}

// A body that stops arriving: no jargon about deadlines, the bytes that
// came are kept.
func TestHTTPRequestBodyTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		if r.URL.Path == "/partial" {
			fmt.Fprint(w, "first part")
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	h := newTool(t, HTTPConfig{AllowHosts: []string{"127.0.0.1"}}, nil)
	r := run(h, tools.Args{"url": srv.URL + "/none", "timeout": 0.3})
	if want := "The response from " + srv.URL + "/none started (HTTP 200) but none of its body arrived within the 0.3s timeout. Try again later, or pass a larger 'timeout' (up to 120)."; r.Content != want {
		t.Errorf("no body:\n got %q\nwant %q", r.Content, want)
	}
	r = run(h, tools.Args{"url": srv.URL + "/partial", "timeout": 0.3})
	if !r.Success || !strings.HasSuffix(r.Content, "\n\nfirst part\n[response incomplete: only 10 bytes arrived within the 0.3s timeout]") {
		t.Errorf("partial body: %q", r.Content)
	}
}

func TestSearchTimeoutNamesTheServiceAndTheSetting(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	r := search(newSearch(t, SearchConfig{SearxNGURL: srv.URL, Timeout: 0.2}), tools.Args{"query": "x"})
	if want := "SearXNG at " + srv.URL + "/search did not answer within 0.2s (timeout under [web.search] in the config). Try again later."; r.Content != want {
		t.Errorf("\n got %q\nwant %q", r.Content, want)
	}
}

func TestServiceAtNamesOnlyEndpointsTheUserChose(t *testing.T) {
	def, _ := url.Parse(DefaultBraveURL + "?key=secret")
	if got := serviceAt("Brave Search", def, DefaultBraveURL); got != "Brave Search" {
		t.Errorf("default endpoint: %q", got)
	}
	proxy, _ := url.Parse("https://user:pw@proxy.example/brave?token=x")
	if got := serviceAt("Brave Search", proxy, DefaultBraveURL); got != "Brave Search at https://proxy.example/brave" {
		t.Errorf("override: %q", got)
	}
}
