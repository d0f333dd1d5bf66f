package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sampleStatuses() []ServerStatus {
	echo := tools.Spec{Name: "files__read", Description: "Read a file.\nReturns its text.", Category: "mcp",
		Parameters: tools.Params(tools.StringParam("path", "Path to read", true))}
	return []ServerStatus{
		{Name: "files", Transport: TransportStdio, Target: "npx -y server-filesystem", State: StateReady, Listed: true,
			ServerInfo: "secure-filesystem-server 0.2.0",
			Tools:      []ToolInfo{{Name: "files__read", Original: "read", Spec: echo}}},
		{Name: "web", Transport: TransportHTTP, Target: "https://h/mcp", State: StateFailed, Trusted: true,
			Reason: "connecting failed: Post \"https://h/mcp\": connection refused", LastError: "connecting failed: Post \"https://h/mcp\": connection refused",
			NextRetry: now.Add(4 * time.Second), Restarts: 2},
		{Name: "slow", Transport: TransportStdio, State: StateStarting},
		{Name: "off", Transport: TransportStdio, State: StateDisabled},
	}
}

func TestRenderStatus(t *testing.T) {
	var b strings.Builder
	if err := RenderStatus(&b, sampleStatuses(), now); err != nil {
		t.Fatal(err)
	}
	want := `SERVER  TRANSPORT  STATUS                TOOLS  CONFIRM       LAST ERROR
files   stdio      ready                 1      yes           -
web     http       failed (retry in 4s)  -      no (trusted)  connecting failed: Post "https://h/mcp": connection refused
slow    stdio      starting              -      yes           -
off     stdio      disabled              -      yes           -
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	RenderStatus(&b, nil, now)
	if !strings.HasPrefix(b.String(), "No MCP servers configured.") {
		t.Errorf("empty: %q", b.String())
	}
}

func TestSummary(t *testing.T) {
	st := sampleStatuses()
	want := []string{
		"ready, 1 tool",
		`failed: connecting failed: Post "https://h/mcp": connection refused; retry in 4s`,
		"starting",
		"disabled",
	}
	for i, s := range st {
		if got := s.Summary(now); got != want[i] {
			t.Errorf("%s: %q, want %q", s.Name, got, want[i])
		}
	}
	restarting := ServerStatus{State: StateStarting, Restarts: 2}
	if got := restarting.Summary(now); got != "restarting (attempt 3)" {
		t.Errorf("restarting: %q", got)
	}
	due := ServerStatus{State: StateFailed, Reason: "x", NextRetry: now.Add(-time.Second)}
	if got := due.Summary(now); got != "failed: x; retrying now" {
		t.Errorf("due: %q", got)
	}
}

func TestRenderTree(t *testing.T) {
	st := sampleStatuses()
	st[1].Tools = []ToolInfo{{Name: "web__search", Spec: tools.Spec{Description: "Search the web for pages about the query and return the best"}}}
	var b strings.Builder
	if err := RenderTree(&b, st, now, 60); err != nil {
		t.Fatal(err)
	}
	want := `files (stdio) ready, 1 tool
  files__read  Read a file. Returns its text.
web (http) failed: connecting failed: Post "https://h/mcp":…
  web__search  (unavailable) Search the web for pages about…
slow (stdio) starting
off (stdio) disabled
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRenderTools(t *testing.T) {
	var b strings.Builder
	if err := RenderTools(&b, sampleStatuses()[0], now); err != nil {
		t.Fatal(err)
	}
	want := `files (stdio: npx -y server-filesystem) ready, 1 tool [secure-filesystem-server 0.2.0]

### files__read
Read a file.
Returns its text.
Category: mcp
Parameters:
  - path (string, required): Path to read
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRoundDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:  "850ms",
		4200 * time.Millisecond: "4s",
		90 * time.Second:        "1m30s",
		2 * time.Minute:         "2m",
	} {
		if got := roundDuration(d); got != want {
			t.Errorf("roundDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		1500 * time.Millisecond: "1.5s",
		300 * time.Millisecond:  "300ms",
		30 * time.Second:        "30s",
		2 * time.Minute:         "2m",
	} {
		if got := limitString(d); got != want {
			t.Errorf("limitString(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	m, err := New(Config{}, Options{RestartMin: time.Second, RestartMax: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for n, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 6: 32 * time.Second} {
		for range 50 {
			d := m.backoff(n)
			if d < base*8/10 || d > base*12/10 {
				t.Fatalf("backoff(%d) = %v, want %v ±20%%", n, d, base)
			}
		}
	}
	for range 50 {
		if d := m.backoff(40); d > 60*time.Second || d < 48*time.Second {
			t.Fatalf("backoff(40) = %v, want at most the cap", d)
		}
	}
}

func TestInspect(t *testing.T) {
	off := false
	cfg := Config{Servers: []ServerConfig{
		stdioServer("test"),
		{Name: "ghost", Command: "/nonexistent/jarvis-mcp-server"},
		{Name: "off", Command: serverBin, Enabled: &off},
	}}
	list, err := Inspect(context.Background(), cfg, InspectOptions{Options: fastOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].State != StateReady || len(list[0].Tools) != 11 ||
		list[1].State != StateFailed || list[1].Reason != "cannot start /nonexistent/jarvis-mcp-server: no such file or directory" ||
		list[2].State != StateDisabled {
		t.Fatalf("statuses: %+v", list)
	}

	// Named servers are started even when disabled.
	list, err = Inspect(context.Background(), cfg, InspectOptions{Only: []string{"off"}, Options: fastOptions()})
	if err != nil || len(list) != 1 || list[0].State != StateReady {
		t.Fatalf("only off: %+v %v", list, err)
	}

	if _, err := Inspect(context.Background(), cfg, InspectOptions{Only: []string{"nope"}}); err == nil ||
		err.Error() != `no MCP server named "nope"; configured servers: test, ghost, off` {
		t.Errorf("unknown server: %v", err)
	}

	// A server that does not come up in time is reported as such, after
	// its own start timeout, and the wait is told about while it lasts
	// (once a second: the timeout leaves room for a late tick).
	slow := Config{Servers: []ServerConfig{stdioServer("slow", "-hang")}}
	var mu sync.Mutex
	var seen []string
	stopped := false
	progress := func(starting []ServerStatus, stopping bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range starting {
			seen = append(seen, st.Name+": "+st.Waiting(st.Since.Add(time.Second)))
		}
		stopped = stopped || stopping
	}
	list, err = Inspect(context.Background(), slow, InspectOptions{StartTimeout: 2500 * time.Millisecond, Options: fastOptions(), Progress: progress})
	want := "the server did not answer the MCP handshake within 2.5s; it may still be installing itself (npx, uvx), be waiting for something, or not be an MCP server: run its command in a terminal to see what it does, or raise start_timeout for this server"
	if err != nil || list[0].State != StateFailed || list[0].Reason != want || !list[0].Failed() {
		t.Errorf("slow: %+v %v", list, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0] != "slow: waiting for its answer to the MCP handshake, 1s of 2.5s" || !stopped {
		t.Errorf("progress: %q, stopping told: %v", seen, stopped)
	}
}

// An inspection's server that failed stays failed: with restarts as fast
// as fastOptions makes them, a retry would otherwise show it as starting
// by the time the status is read.
func TestOneAttemptLeavesAFailedServerFailed(t *testing.T) {
	opts := fastOptions()
	opts.OneAttempt = true
	m, err := New(Config{Servers: []ServerConfig{{Name: "ghost", Command: "/nonexistent/jarvis-mcp-server"}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = m.WaitReady(ctx)
	time.Sleep(10 * opts.RestartMax / 4) // several back-offs' worth
	st := m.Status()
	if len(st) != 1 || st[0].State != StateFailed || !st[0].NextRetry.IsZero() {
		t.Fatalf("status after one attempt: %+v", st)
	}
}
