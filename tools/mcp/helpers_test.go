package mcp

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

// serverBin is the mcptest program, built once for the whole test run.
var serverBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "jarvis-mcptest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "mcptest")
	if runtime.GOOS == "windows" {
		serverBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", serverBin, "./mcptest/cmd")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// fastOptions make restarts and timeouts short enough for tests.
func fastOptions() Options {
	return Options{
		ConnectTimeout: 10 * time.Second,
		StopGrace:      500 * time.Millisecond,
		RestartMin:     20 * time.Millisecond,
		RestartMax:     200 * time.Millisecond,
		PingTimeout:    500 * time.Millisecond,
	}
}

// stdioServer is a config entry that runs the test server over stdio.
func stdioServer(name string, args ...string) ServerConfig {
	return ServerConfig{Name: name, Command: serverBin, Args: args}
}

// httpServer runs the test server in-process on a loopback port and returns
// a config entry for it.
func httpServer(t testing.TB, name string) ServerConfig {
	t.Helper()
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	t.Cleanup(ts.Close)
	return ServerConfig{Name: name, URL: ts.URL + "/mcp"}
}

// transports runs a subtest for each way of reaching the test server.
func transports(t *testing.T, f func(t *testing.T, sc ServerConfig)) {
	t.Run("stdio", func(t *testing.T) { f(t, stdioServer("test")) })
	t.Run("http", func(t *testing.T) { f(t, httpServer(t, "test")) })
}

// startManager starts a manager that the test closes when it ends.
func startManager(t *testing.T, opts Options, servers ...ServerConfig) *Manager {
	t.Helper()
	m, err := New(Config{Servers: servers}, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	return m
}

// waitFor waits until cond holds for the status of server name, failing the
// test (with the status) after 20s.
func waitFor(t *testing.T, m *Manager, name, what string, cond func(ServerStatus) bool) ServerStatus {
	t.Helper()
	ch, cancel := m.Subscribe()
	defer cancel()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st, ok := m.Server(name)
		if !ok {
			t.Fatalf("no server %q", name)
		}
		if cond(st) {
			return st
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("server %q: timed out waiting until %s; status: %+v", name, what, st)
		}
	}
}

func waitReady(t *testing.T, m *Manager, name string) ServerStatus {
	t.Helper()
	return waitFor(t, m, name, "ready", func(s ServerStatus) bool { return s.State == StateReady })
}

// executor builds an executor over the manager's tools.
func executor(t *testing.T, m *Manager, opts tools.ExecutorOptions) *tools.Executor {
	t.Helper()
	e, err := tools.NewExecutor(m.Tools(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// recorder is an events.Publisher that keeps what it receives.
type recorder struct {
	mu  sync.Mutex
	evs []events.Event
}

func (r *recorder) Publish(e events.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) ofType(typ events.Type) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, e := range r.evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func call(name, args string) tools.Call { return tools.Call{ID: "c1", Name: name, Arguments: args} }

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
