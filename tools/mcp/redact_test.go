package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

func TestRedactURL(t *testing.T) {
	cases := map[string]string{
		"https://api.example.com/mcp":                              "https://api.example.com/mcp",
		"https://api.example.com/mcp?key=s3cret-value":             "https://api.example.com/mcp?…",
		"https://user:pa55word@api.example.com:8443/mcp":           "https://api.example.com:8443/mcp",
		"https://token-only@api.example.com/mcp#frag":              "https://api.example.com/mcp",
		"https://mcp.example.com/s/0123456789abcdef0123456789/mcp": "https://mcp.example.com/s/0123…/mcp",
		"https://mcp.example.com/streamable-http/mcp":              "https://mcp.example.com/streamable-http/mcp",
		"http://h/x?": "http://h/x?…",
		"https://api.example.com/mcp?key=${API_KEY}":                  "https://api.example.com/mcp?…",
		"localhost:8080/mcp?key=s3cret":                               "localhost:8080/mcp?…",
		"http://us er:pw@host/p?k=s3cret":                             "http://host/p?…",
		"http://[bad/0123456789abcdef0123456789?token=s3cret-value":   "http://[bad/0123…?…",
		"ftp://a:b@host/very-long-path-segment-here":                  "ftp://host/very…",
		"  https://api.example.com/mcp  ":                             "https://api.example.com/mcp",
		"":                                                            "",
		"https://api.example.com/%E2%9C%93-long-escaped-segment-name": "https://api.example.com/%E2%…",
	}
	for raw, want := range cases {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestTargetAndValidateHideURLSecrets(t *testing.T) {
	sc := ServerConfig{Name: "web", URL: "https://bob:hunter2pass@api.example.com/mcp?key=s3cret-key-value"}
	if got, want := sc.Target(), "https://api.example.com/mcp?…"; got != want {
		t.Errorf("Target = %q, want %q", got, want)
	}
	bad := ServerConfig{Name: "web", URL: "api.example.com/mcp?key=s3cret-key-value"}
	err := Config{Servers: []ServerConfig{bad}}.Validate()
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), `url "api.example.com/mcp?…" must be an absolute`) {
		t.Errorf("Validate: %v", err)
	}
}

func TestDescribeErrShortensHTTPFailures(t *testing.T) {
	// What the SDK returns when the server cannot be reached: the cause is
	// at the end of a long chain, and the URL may carry a token.
	cause := &url.Error{Op: "Post", URL: "http://u:pw1234@127.0.0.1:1/mcp?key=s3cret-value", Err: errors.New("connection refused")}
	err := fmt.Errorf(`calling "tools/call": sending jsonrpc request #3: %w: %w`, errors.New("rejected by transport"), cause)
	if got, want := describeErr(err), `Post 127.0.0.1:1: connection refused`; got != want {
		t.Errorf("describeErr = %q, want %q", got, want)
	}
	if got := describeErr(errors.New("plain")); got != "plain" {
		t.Errorf("describeErr = %q", got)
	}
}

func TestScrubberHidesConfiguredSecrets(t *testing.T) {
	t.Setenv("JARVIS_TEST_MCP_KEY", "k3y-from-environment")
	t.Setenv("JARVIS_TEST_MCP_TOKEN", "tok-from-environment")
	t.Setenv("JARVIS_TEST_MCP_ENVSECRET", "env-secret-value")
	sc := ServerConfig{
		Name:    "web",
		URL:     "https://alice:pa55word@api.example.com/mcp/0123456789abcdef0123?key=${JARVIS_TEST_MCP_KEY}&plain=literal-secret",
		Headers: map[string]string{"Authorization": "Bearer ${JARVIS_TEST_MCP_TOKEN}", "X-Api-Key": "literal-header-key"},
		Env:     map[string]string{"TOKEN": "${JARVIS_TEST_MCP_ENVSECRET}"},
	}
	s := newScrubber(sc)
	expanded, err := expand("url", sc.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The SDK formats some transport errors with %v, which flattens the
	// *url.Error (and its URL) into the text.
	text := fmt.Sprintf(`standalone SSE request failed (session ID: 1): Get %q: EOF; `, expanded) +
		"stderr: invalid key k3y-from-environment for alice; header literal-header-key; token tok-from-environment; env env-secret-value; path 0123456789abcdef0123; Bearer"
	got := s.scrub(text)
	for _, secret := range []string{"k3y-from-environment", "pa55word", "literal-secret", "literal-header-key", "tok-from-environment", "env-secret-value", "0123456789abcdef0123"} {
		if strings.Contains(got, secret) {
			t.Errorf("scrubbed text still holds %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, `Get "https://api.example.com/mcp/0123…?…": EOF`) || !strings.HasSuffix(got, "; Bearer") {
		t.Errorf("scrubbed text lost what is not secret: %s", got)
	}
	if (&scrubber{}).scrub("as is") != "as is" || newScrubber(ServerConfig{Name: "x", Command: "y"}).scrub("as is") != "as is" {
		t.Error("a server without secrets changed text")
	}
}

func TestScrubbingLogHandler(t *testing.T) {
	s := newScrubber(ServerConfig{Name: "web", URL: "https://api.example.com/mcp?key=s3cret-key-value"})
	var buf bytes.Buffer
	log := slog.New(s.handler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.With("url", "https://api.example.com/mcp?key=s3cret-key-value").WithGroup("g").
		Warn("calling tools/list: key=s3cret-key-value", "error", errors.New("bad s3cret-key-value"), slog.Group("inner", "v", "s3cret-key-value"), "n", 3)
	if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "n=3") {
		t.Errorf("log record: %s", out)
	}
}

// An HTTP server whose URL carries a token in its query and user info: no
// status, reason, notice or tool result shows it.
func TestHTTPServerURLSecretsStayHidden(t *testing.T) {
	t.Setenv("JARVIS_TEST_MCP_QUERY_KEY", "query-k3y-secret")
	// The server can be taken down: it then drops every connection, so
	// calls and reconnections fail in the HTTP client.
	var down atomic.Bool
	inner := mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	sc := ServerConfig{Name: "web", URL: "http://carol:pa55word@" + u.Host + "/mcp?key=${JARVIS_TEST_MCP_QUERY_KEY}", Trusted: true}
	bus := &recorder{}
	opts := fastOptions()
	opts.Bus = bus
	var logBuf syncBuffer
	opts.Logger = slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := startManager(t, opts, sc)
	waitReady(t, m, "web")
	e := executor(t, m, tools.ExecutorOptions{})
	if r := e.Execute(context.Background(), call("web__echo", `{"text":"hi"}`)); r.Content != "hi" {
		t.Fatalf("echo: %+v", r)
	}

	down.Store(true)
	ts.CloseClientConnections()
	r := e.Execute(context.Background(), call("web__echo", `{"text":"hi"}`))
	if r.Success {
		t.Fatalf("call to a closed server succeeded: %+v", r)
	}
	st := waitFor(t, m, "web", "failed twice", func(s ServerStatus) bool { return s.State == StateFailed && s.Restarts >= 1 })
	if !strings.Contains(st.Reason, u.Host) {
		t.Errorf("the reason should still name the host: %q", st.Reason)
	}
	var notices []string
	for _, ev := range bus.ofType(events.Notice) {
		notices = append(notices, ev.Text)
	}
	var table strings.Builder
	RenderStatus(&table, m.Status(), time.Now())
	RenderTools(&table, st, time.Now())
	for what, text := range map[string]string{
		"result": r.Content, "reason": st.Reason, "last error": st.LastError, "target": st.Target,
		"notices": strings.Join(notices, "\n"), "table": table.String(), "log": logBuf.String(),
	} {
		for _, secret := range []string{"query-k3y-secret", "pa55word", "carol"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q: %s", what, secret, text)
			}
		}
	}
}

func TestProcessEnvIsMinimal(t *testing.T) {
	t.Setenv("JARVIS_TEST_API_KEY", "must-not-pass")
	t.Setenv("BRAVE_API_KEY", "brave-must-not-pass")
	t.Setenv("HOME", "/home/someone")
	t.Setenv("LC_TIME", "de_DE.UTF-8")
	t.Setenv("JARVIS_TEST_SECRET", "s3cret")
	env, err := processEnv(map[string]string{"TOKEN": "${JARVIS_TEST_SECRET}", "BRAVE_API_KEY": "chosen"})
	if err != nil {
		t.Fatal(err)
	}
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, want := range []string{"\nHOME=/home/someone\n", "\nLC_TIME=de_DE.UTF-8\n", "\nPATH=" + os.Getenv("PATH") + "\n", "\nTOKEN=s3cret\n", "\nBRAVE_API_KEY=chosen\n"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %q", strings.TrimSpace(want))
		}
	}
	for _, leak := range []string{"must-not-pass", "JARVIS_TEST_SECRET=", "brave-must-not-pass"} {
		if strings.Contains(joined, leak) {
			t.Errorf("env passes %q from jarvis's environment", leak)
		}
	}
}

// syncBuffer is a bytes.Buffer that log handlers on several goroutines can
// write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
