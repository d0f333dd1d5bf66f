package mcp

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A server that printed something other than MCP messages and keeps
// running is stopped without the grace period a clean shutdown gets: a
// command that found it broken does not wait that long on the way out.
// The grace here is an hour; the bound is far below it.
func TestBrokenServerIsNotGivenTheGracePeriod(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a POSIX shell runs the broken server")
	}
	opts := fastOptions()
	opts.StopGrace = time.Hour
	m, err := New(Config{Servers: []ServerConfig{{Name: "banner", Command: "sh", Args: []string{"-c", "echo banner; exec sleep 600"}}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.WaitReady(ctx)
	if st := m.Status()[0]; st.State == StateReady {
		t.Fatalf("a server that prints a banner came up: %+v", st)
	}
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waited for the grace period of a server that never spoke MCP")
	}
}
