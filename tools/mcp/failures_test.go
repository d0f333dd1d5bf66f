//go:build unix

package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

const crashReason = "the server process exited with status 3 (stderr: mcptest: crashing on request)"

func TestCrashMidCallThenRestart(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	sc := stdioServer("test", "-pidfile", pidfile, "-spawn-child")
	sc.Trusted = true
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "test")
	first := readPids(t, pidfile)
	os.Remove(pidfile)
	e := executor(t, m, tools.ExecutorOptions{})

	r := e.Execute(context.Background(), call("test__crash", ""))
	want := "MCP server 'test' failed while 'crash' was running: " + crashReason + "; it is being restarted"
	if r.Success || r.Content != want {
		t.Fatalf("crash result:\n got %q\nwant %q", r.Content, want)
	}
	// The server and the helper it started are gone, not orphaned.
	if left := waitGone(first); len(left) > 0 {
		t.Errorf("processes of the crashed server still running: %v", left)
	}

	st := waitFor(t, m, "test", "restarted", func(s ServerStatus) bool { return s.State == StateReady && s.Restarts >= 1 })
	if st.LastError != crashReason {
		t.Errorf("last error %q", st.LastError)
	}
	r = e.Execute(context.Background(), call("test__echo", `{"text":"back"}`))
	if !r.Success || r.Content != "back" {
		t.Fatalf("after the restart: %+v", r)
	}
}

func TestToolsUnavailableWhileServerIsDown(t *testing.T) {
	opts := fastOptions()
	opts.RestartMin, opts.RestartMax = time.Hour, time.Hour // keep it down
	sc := stdioServer("test")
	sc.Trusted = true
	m := startManager(t, opts, sc)
	waitReady(t, m, "test")
	e := executor(t, m, tools.ExecutorOptions{})
	e.Execute(context.Background(), call("test__crash", ""))

	st := waitFor(t, m, "test", "failed", func(s ServerStatus) bool { return s.State == StateFailed })
	if st.Reason != crashReason || !st.Listed || len(st.Tools) != 11 || st.NextRetry.Before(time.Now().Add(40*time.Minute)) {
		t.Errorf("status %+v", st)
	}
	if len(m.Tools()) != 11 {
		t.Errorf("the tools of a failed server left the list: %d", len(m.Tools()))
	}
	r := e.Execute(context.Background(), call("test__echo", `{"text":"hi"}`))
	want := "MCP server 'test' is unavailable: " + crashReason + "; it is being restarted"
	if r.Success || r.Content != want {
		t.Errorf("call while down:\n got %q\nwant %q", r.Content, want)
	}
}

func TestServerThatCannotStart(t *testing.T) {
	cases := []struct {
		name   string
		sc     ServerConfig
		reason string
	}{
		{"missing program", ServerConfig{Name: "ghost", Command: "/nonexistent/jarvis-mcp-server"},
			"cannot start /nonexistent/jarvis-mcp-server: no such file or directory"},
		{"not on PATH", ServerConfig{Name: "ghost", Command: "jarvis-no-such-mcp-server"},
			"cannot start jarvis-no-such-mcp-server: executable file not found in $PATH"},
		{"exits at once", stdioServer("ghost", "-exit-at-start", "7"),
			"the server process exited with status 7 (stderr: mcptest: exiting at start with status 7 as asked)"},
		{"bad working directory", ServerConfig{Name: "ghost", Command: serverBin, Cwd: "/nonexistent/dir"},
			"cannot start " + serverBin + ": the working directory /nonexistent/dir does not exist or is not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := startManager(t, fastOptions(), c.sc)
			// It keeps being retried, with the reason each time.
			st := waitFor(t, m, "ghost", "retried twice", func(s ServerStatus) bool { return s.State == StateFailed && s.Restarts >= 2 })
			if st.Reason != c.reason {
				t.Errorf("reason:\n got %q\nwant %q", st.Reason, c.reason)
			}
			if !st.NextRetry.After(st.LastErrorAt) || st.Listed || len(m.Tools()) != 0 {
				t.Errorf("status %+v", st)
			}
			if err := m.WaitReady(ctxTimeout(t, time.Second)); err != nil {
				t.Errorf("WaitReady after a failed first attempt: %v", err)
			}
		})
	}
}

func TestServerThatHangsAtStart(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	opts := fastOptions()
	opts.ConnectTimeout = 300 * time.Millisecond
	opts.RestartMin, opts.RestartMax = time.Hour, time.Hour
	m := startManager(t, opts, stdioServer("stuck", "-hang", "-pidfile", pidfile))
	st := waitFor(t, m, "stuck", "failed", func(s ServerStatus) bool { return s.State == StateFailed })
	if want := "the server did not answer the MCP handshake within 300ms; it may still be installing itself (npx, uvx), be waiting for something, or not be an MCP server: run its command in a terminal to see what it does, or raise start_timeout for this server"; st.Reason != want {
		t.Errorf("reason %q, want %q", st.Reason, want)
	}
	// The hung process (which ignores stdin closing) was killed.
	if left := waitGone(readPids(t, pidfile)); len(left) > 0 {
		t.Errorf("hung server still running: %v", left)
	}
}

func TestFrozenServerIsRestarted(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	sc := stdioServer("test", "-pidfile", pidfile)
	sc.Trusted = true
	sc.Timeout = 0.3
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "test")
	first := readPids(t, pidfile)
	e := executor(t, m, tools.ExecutorOptions{})

	r := e.Execute(context.Background(), call("test__freeze", ""))
	if r.Status != tools.StatusTimeout || r.Content != "Tool 'test__freeze' timed out after 0.3s." {
		t.Fatalf("freeze: %+v", r)
	}
	st := waitFor(t, m, "test", "restarted", func(s ServerStatus) bool { return s.State == StateReady && s.Restarts >= 1 })
	if want := "the server stopped answering (a call timed out, then a ping got no reply within 500ms)"; st.LastError != want {
		t.Errorf("last error %q", st.LastError)
	}
	if left := waitGone(first); len(left) > 0 {
		t.Errorf("frozen server still running: %v", left)
	}
	if r := e.Execute(context.Background(), call("test__echo", `{"text":"thawed"}`)); r.Content != "thawed" {
		t.Errorf("after the restart: %+v", r)
	}
}

func TestCloseStopsServersAndCalls(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	sc := stdioServer("test", "-pidfile", pidfile, "-spawn-child")
	sc.Trusted = true
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "test")
	pids := readPids(t, pidfile)
	if len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
	bus := &recorder{}
	e := executor(t, m, tools.ExecutorOptions{Bus: bus})

	done := make(chan tools.Result)
	go func() { done <- e.Execute(context.Background(), call("test__sleep", `{"seconds":60}`)) }()
	waitUntil(t, "the call has started", func() bool { return len(bus.ofType(events.ToolCallStart)) == 1 })
	m.Close()

	// The call fails at once (not after its 60s): while it waits for the
	// server or, when Close won the race to the session, before it is sent.
	r := <-done
	inFlight := "MCP server 'test' was stopped while 'sleep' was running: jarvis is shutting down"
	notSent := "MCP server 'test' is stopped: jarvis is shutting down."
	if r.Success || (r.Content != inFlight && r.Content != notSent) || r.LatencySeconds > 30 {
		t.Errorf("call in flight at Close: %q after %.1fs", r.Content, r.LatencySeconds)
	}
	if left := waitGone(pids); len(left) > 0 {
		t.Errorf("processes left after Close: %v", left)
	}
	r = e.Execute(context.Background(), call("test__echo", `{"text":"hi"}`))
	if want := "MCP server 'test' is stopped: jarvis is shutting down."; r.Content != want {
		t.Errorf("call after Close: %q", r.Content)
	}
}

func TestSlowServerDoesNotDelayOthers(t *testing.T) {
	m := startManager(t, fastOptions(), stdioServer("slow", "-hang"), stdioServer("fast"))
	waitReady(t, m, "fast")
	if st, _ := m.Server("slow"); st.State != StateStarting {
		t.Errorf("slow server: %s", st.State)
	}
	if len(m.Tools()) != 11 {
		t.Errorf("tools of the fast server: %d", len(m.Tools()))
	}
	err := m.WaitReady(ctxTimeout(t, 100*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "MCP server 'slow' is still starting") {
		t.Errorf("WaitReady: %v", err)
	}
}

func TestHTTPServerDown(t *testing.T) {
	addr := freeAddr(t)
	m := startManager(t, fastOptions(), ServerConfig{Name: "web", URL: "http://" + addr + "/mcp"})
	st := waitFor(t, m, "web", "failed", func(s ServerStatus) bool { return s.State == StateFailed })
	want := "nothing is listening at " + addr + " (connection refused); is the server running, and is url right? (detail: Post " + addr + ": dial tcp " + addr + ": connect: connection refused)"
	if st.Reason != want {
		t.Errorf("reason %q", st.Reason)
	}
}

func TestHTTPServerCrashAndReturn(t *testing.T) {
	addr := freeAddr(t)
	startHTTPBinary(t, addr)
	sc := ServerConfig{Name: "web", URL: "http://" + addr + "/mcp", Trusted: true}
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "web")
	e := executor(t, m, tools.ExecutorOptions{})

	r := e.Execute(context.Background(), call("web__crash", ""))
	if r.Success || !strings.HasPrefix(r.Content, "MCP server 'web' failed while 'crash' was running: ") ||
		!strings.HasSuffix(r.Content, "; it is being restarted") {
		t.Fatalf("crash result %q", r.Content)
	}
	waitFor(t, m, "web", "failed", func(s ServerStatus) bool { return s.State == StateFailed })

	startHTTPBinary(t, addr) // the server comes back on the same address
	waitFor(t, m, "web", "reconnected", func(s ServerStatus) bool { return s.State == StateReady && s.Restarts >= 1 })
	if r := e.Execute(context.Background(), call("web__echo", `{"text":"again"}`)); r.Content != "again" {
		t.Errorf("after reconnecting: %+v", r)
	}
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startHTTPBinary runs the test server program over HTTP on addr until the
// test ends (or it crashes).
func startHTTPBinary(t *testing.T, addr string) {
	t.Helper()
	cmd := exec.Command(serverBin, "-http", addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "http://"+addr+"/mcp" {
		t.Fatalf("server said %q, %v", line, err)
	}
}

// readPids reads the pidfile the test server writes.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	var data []byte
	for range 200 {
		var err error
		if data, err = os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pidfile %s: %q", path, data)
		}
		pids = append(pids, n)
	}
	if len(pids) == 0 {
		t.Fatalf("pidfile %s is empty", path)
	}
	return pids
}

// alive reports whether pid is a running process; a zombie (killed, not yet
// reaped by its new parent) counts as gone.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc here: trust kill(2)
	}
	s := string(stat) // the state follows the command name in parentheses
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// waitGone waits up to 5s for pids to end and returns those still running.
func waitGone(pids []int) []int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A call through mcp_adapter that times out on a server that no longer
// answers gets the server checked and restarted, as a direct call does.
func TestAdapterTimeoutChecksServerHealth(t *testing.T) {
	sc := stdioServer("test")
	sc.Timeout = 0.3
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "test")
	a := NewAdapter(func() *Manager { return m })

	r := a.Execute(ctxTimeout(t, 20*time.Second), tools.Args{"server": "test", "tool": "freeze"})
	if r.Status != tools.StatusTimeout || r.Content != "Tool 'test__freeze' timed out after 0.3s." {
		t.Fatalf("freeze: %+v", r)
	}
	st := waitFor(t, m, "test", "restarted", func(s ServerStatus) bool { return s.State == StateReady && s.Restarts >= 1 })
	if want := "the server stopped answering (a call timed out, then a ping got no reply within 500ms)"; st.LastError != want {
		t.Errorf("last error %q", st.LastError)
	}
}
