//go:build unix

package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// keepDown makes a failed server wait an hour before its next attempt, so
// a test reads the reason of the first one.
func keepDown() Options {
	opts := fastOptions()
	opts.RestartMin, opts.RestartMax = time.Hour, time.Hour
	return opts
}

func failedReason(t *testing.T, opts Options, sc ServerConfig) string {
	t.Helper()
	m := startManager(t, opts, sc)
	return waitFor(t, m, sc.Name, "failed", func(s ServerStatus) bool { return s.State == StateFailed }).Reason
}

func TestServerThatPrintsSomethingElseOnStdout(t *testing.T) {
	const hint = "; check that the command is an MCP server that speaks over stdio, and that it writes its logs to stderr, not stdout"
	cases := []struct {
		name, line, detail string
	}{
		{"a log line", "Secure MCP Filesystem Server running on stdio", "invalid character 'S' looking for beginning of value"},
		{"JSON that is not JSON-RPC", `{"hello":1}`, `invalid message version tag ""; expected "2.0"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := failedReason(t, keepDown(), stdioServer("chatty", "-stdout", c.line))
			want := `the server printed something other than MCP messages on stdout: "` + c.line + `"` + hint + " (detail: " + c.detail + ")"
			if got != want {
				t.Errorf("reason:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestServerThatExitsOrIsKilled(t *testing.T) {
	cases := []struct {
		name   string
		sc     ServerConfig
		reason string
	}{
		{"killed by SIGKILL", stdioServer("gone", "-kill-at-start"),
			"the server process was killed (SIGKILL) by something outside jarvis, often the system's out-of-memory killer (stderr: mcptest: allocating far too much memory)"},
		{"crashed", ServerConfig{Name: "gone", Command: "/bin/sh", Args: []string{"-c", "echo 'panic: nil map' >&2; kill -SEGV $$"}},
			"the server process crashed (SIGSEGV, segmentation fault) (stderr: panic: nil map)"},
		{"silent exit", ServerConfig{Name: "gone", Command: "/bin/sh", Args: []string{"-c", "exit 5"}},
			"the server process exited with status 5; it wrote nothing to stderr: run its command in a terminal to see what it does"},
		{"shell cannot find a command", ServerConfig{Name: "gone", Command: "/bin/sh", Args: []string{"-c", "echo one >&2; echo two >&2; echo three >&2; echo 'sh: 1: mcp-server: not found' >&2; exit 127"}},
			"the server process exited with status 127 (a shell's code for a command it could not find) (stderr: two | three | sh: 1: mcp-server: not found)"},
		{"exit 0 without being asked", ServerConfig{Name: "gone", Command: "/bin/sh", Args: []string{"-c", "echo 'usage: server DIR' >&2"}},
			"the server process exited with status 0 although nothing asked it to stop (stderr: usage: server DIR)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := failedReason(t, keepDown(), c.sc); got != c.reason {
				t.Errorf("reason:\n got %q\nwant %q", got, c.reason)
			}
		})
	}
}

func TestServerThatHangsQuotesItsStderr(t *testing.T) {
	opts := keepDown()
	opts.ConnectTimeout = 300 * time.Millisecond
	sc := ServerConfig{Name: "npx", Command: "/bin/sh", Args: []string{"-c", "echo 'npm notice downloading @example/server' >&2; exec sleep 60"}}
	got := failedReason(t, opts, sc)
	want := "the server did not answer the MCP handshake within 300ms (stderr: npm notice downloading @example/server); it may still be installing itself (npx, uvx), be waiting for something, or not be an MCP server: run its command in a terminal to see what it does, or raise start_timeout for this server"
	if got != want {
		t.Errorf("reason:\n got %q\nwant %q", got, want)
	}
}

func TestStartTimeoutPerServer(t *testing.T) {
	opts := keepDown() // ConnectTimeout 10s
	sc := stdioServer("slow", "-hang")
	sc.StartTimeout = 0.25
	if got := failedReason(t, opts, sc); !strings.HasPrefix(got, "the server did not answer the MCP handshake within 250ms;") {
		t.Errorf("reason %q", got)
	}
	if err := (Config{Servers: []ServerConfig{{Name: "x", Command: "x", StartTimeout: -1}}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "start_timeout must be a positive number of seconds, got -1 (leave it out for 30)") {
		t.Errorf("negative start_timeout: %v", err)
	}
}

func TestHTTPAnswersThatAreNotMCP(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		reason  string // HOST stands for the server's host
	}{
		{"no such path", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			"HOST has no MCP endpoint at the configured url (HTTP 404 Not Found: 404 page not found); check its path (streamable HTTP servers usually serve /mcp) (detail: "},
		{"bad token", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_token"}`)
		}, "HOST refused the request as unauthorized (HTTP 401 Unauthorized: invalid_token); check the credentials in headers for this server (detail: "},
		{"a web page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Welcome</body></html>")
		}, "HOST answered with text/html, not MCP; check that url is the server's MCP endpoint rather than a web page or another API (detail: "},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "database is down", http.StatusBadGateway) },
			"HOST failed on its side (HTTP 502 Bad Gateway: database is down); try again later, or look at the server's own logs (detail: "},
		{"JSON that is not MCP", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status":"ok"}`)
		}, "HOST answered with something that is not an MCP message; check that url is the server's MCP endpoint (detail: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			got := failedReason(t, keepDown(), ServerConfig{Name: "web", URL: ts.URL + "/mcp"})
			want := strings.ReplaceAll(c.reason, "HOST", strings.TrimPrefix(ts.URL, "http://"))
			if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ")") {
				t.Errorf("reason:\n got %q\nwant %q...", got, want)
			}
		})
	}
}

// A server that accepts the request and never answers fails after the
// start timeout, and no request to it is left open once it has failed.
func TestHungHTTPServer(t *testing.T) {
	var open atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // only then does the server see the client leave
		open.Add(1)
		defer open.Add(-1)
		<-r.Context().Done()
	}))
	defer ts.Close()
	opts := keepDown()
	opts.ConnectTimeout = 300 * time.Millisecond
	got := failedReason(t, opts, ServerConfig{Name: "web", URL: ts.URL + "/mcp"})
	host := strings.TrimPrefix(ts.URL, "http://")
	if want := host + " did not answer the MCP handshake within 300ms; check that the server is running and that url is its MCP endpoint, or raise start_timeout for this server"; got != want {
		t.Errorf("reason:\n got %q\nwant %q", got, want)
	}
	waitUntil(t, "no request is left open", func() bool { return open.Load() == 0 })
}

func TestCallToServerThatDiesByHand(t *testing.T) {
	// A call whose server is killed from outside says so, with the signal.
	sc := stdioServer("test")
	sc.Trusted = true
	m := startManager(t, keepDown(), sc)
	waitReady(t, m, "test")
	bus := &recorder{}
	e := executor(t, m, tools.ExecutorOptions{Bus: bus})
	done := make(chan tools.Result)
	go func() { done <- e.Execute(context.Background(), call("test__sleep", `{"seconds":30}`)) }()
	waitUntil(t, "the call has started", func() bool { return len(bus.ofType(events.ToolCallStart)) == 1 })
	time.Sleep(100 * time.Millisecond) // and, almost always, reached the server
	m.byName["test"].mu.Lock()
	p := m.byName["test"].conn.stdio.process()
	m.byName["test"].mu.Unlock()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	const reason = "the server process was killed (SIGKILL) by something outside jarvis, often the system's out-of-memory killer; it wrote nothing to stderr: run its command in a terminal to see what it does; it is being restarted"
	// On a machine slow enough that the kill came first, the call finds
	// the server already down: the reason is the same.
	inFlight := "MCP server 'test' failed while 'sleep' was running: " + reason
	notSent := "MCP server 'test' is unavailable: " + reason
	if r.Success || (r.Content != inFlight && r.Content != notSent) {
		t.Errorf("result:\n got %q\nwant %q", r.Content, inFlight)
	}
}

func TestTailFindsWhatIsNotAMessage(t *testing.T) {
	tl := newTail(16, 40)
	tl.write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `[{"jsonrpc":"2.0","method":"x"}]` + "\nStarting server on "))
	tl.write([]byte("stdio\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"a\":\"" + strings.Repeat("x", 100) + "\"}}\n"))
	if got := tl.firstNotMessage(); got != "Starting server on stdio" {
		t.Errorf("first line that is not a message: %q", got)
	}
	if got := tl.lastLines(1); len(got) != 1 || !strings.HasSuffix(got[0], "…") || len(got[0]) > 40+len("…") {
		t.Errorf("a long line is cut: %q", got)
	}
	// Output without a newline counts too.
	tl = newTail(4, 40)
	tl.write([]byte("Listening..."))
	if got := tl.firstNotMessage(); got != "Listening..." {
		t.Errorf("unfinished line: %q", got)
	}
}
