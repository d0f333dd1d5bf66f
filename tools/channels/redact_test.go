package channels

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// The credential of some webhook services is the first label of the host.
const hostSecret = "eo1a2b3c4d5e6f7g"

// via makes every connection of s go to srv, whatever host the channel
// names, so names that only exist on the internet can be used on loopback.
// A nil srv makes every name unknown, as DNS would.
func via(s *set, srv *fake) {
	base := s.client.Transport.(*http.Transport).Clone()
	base.Proxy = nil
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if srv == nil {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		u, _ := url.Parse(srv.URL)
		return (&net.Dialer{}).DialContext(ctx, network, u.Host)
	}
	s.client.Transport = base
}

func statusVia(t *testing.T, cfg Config, channel string, srv *fake) tools.Result {
	t.Helper()
	st := NewStatus(cfg)
	via(st.set, srv)
	return st.Execute(context.Background(), tools.Args{"channel": channel})
}

func sendVia(t *testing.T, cfg Config, channel string, srv *fake) tools.Result {
	t.Helper()
	s := NewSend(cfg)
	via(s.set, srv)
	return s.Execute(context.Background(), tools.Args{"channel": channel, "message": "hello"})
}

func TestStatusHidesSecretInWebhookHost(t *testing.T) {
	srv := newFake(t, status(405, ""))
	for _, c := range []struct {
		name string
		ch   Channel
	}{
		{"webhook", Channel{Type: "webhook", URL: "http://" + hostSecret + ".m.pipedream.net/p"}},
		{"upper-case host", Channel{Type: "webhook", URL: "http://" + strings.ToUpper(hostSecret) + ".m.pipedream.net/hook"}},
		{"slack-compatible", Channel{Type: "slack", URL: "http://" + hostSecret + ".chat.example/hooks/abc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{"hook": c.ch}
			r := statusVia(t, cfg, "hook", srv)
			assertContains(t, r, true, "- HEAD http://<webhook host>.", "ok, the host answered (HTTP 405)")
			assertNoSecret(t, r, hostSecret, strings.ToUpper(hostSecret))

			// An unreachable host: the network error names it too.
			r = statusVia(t, cfg, "hook", nil)
			assertContains(t, r, false, "could not connect to <webhook host>.")
			assertNoSecret(t, r, hostSecret, strings.ToUpper(hostSecret))
			r = sendVia(t, cfg, "hook", nil)
			assertContains(t, r, false, "could not connect to <webhook host>.")
			assertNoSecret(t, r, hostSecret, strings.ToUpper(hostSecret))
		})
	}
}

// A service's own host holds no secret: it stays readable, and so does a
// word in the text that happens to be a host's first label.
func TestStatusKeepsWellKnownHostsReadable(t *testing.T) {
	srv := newFake(t, status(404, ""))
	r := statusVia(t, Config{"team": {Type: "slack", URL: "http://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"}}, "team", srv)
	assertContains(t, r, true, "- HEAD http://hooks.slack.com/: ok")
	checks, _ := r.Metadata["checks"].([]map[string]any)
	if len(checks) != 1 || checks[0]["check"] != "HEAD http://hooks.slack.com/" {
		t.Errorf("checks metadata %v", r.Metadata["checks"])
	}

	// The word in the text that is also the host's first label stays.
	r = statusVia(t, Config{"hook": {Type: "webhook", URL: "http://answered.hooks.example/h"}}, "hook", srv)
	assertContains(t, r, true, "- HEAD http://<webhook host>.hooks.example/: ok, the host answered (HTTP 404)")
	// A registered domain is no secret.
	r = statusVia(t, Config{"hook": {Type: "webhook", URL: "http://webhook.site/0123"}}, "hook", srv)
	assertContains(t, r, true, "- HEAD http://webhook.site/: ok", "The webhook itself was not called")
}

func TestReplaceLabel(t *testing.T) {
	for in, want := range map[string]string{
		"HEAD https://secret1.m.example/":          "HEAD https://<h>.m.example/",
		"lookup secret1.example: no such host":     "lookup <h>.example: no such host",
		"“secret1.example” and (secret1)":          "“<h>.example” and (secret1)",
		"ésecret1.example":                         "é<h>.example",
		"secret12.example secret1-x.y xsecret1.":   "secret12.example secret1-x.y xsecret1.",
		"the secret1 answered":                     "the secret1 answered",
		"secret1secret1.x secret1.secret1.example": "secret1secret1.x <h>.<h>.example",
		"secret1.": "<h>.",
	} {
		if got := replaceLabel(in, "secret1", "<h>"); got != want {
			t.Errorf("replaceLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
