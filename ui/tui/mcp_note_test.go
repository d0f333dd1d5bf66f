package tui

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

// A server that fails is told in the transcript once, with the reason and
// where to look, however often it is retried; when it comes back, that is
// told too.
func TestMCPServerFailureIsNotedOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there until the server "comes back"

	m, mgr, _ := mcpWorkbench(t, mcp.ServerConfig{Name: "web", URL: "http://" + addr + "/mcp"},
		mcp.Options{RestartMin: 20 * time.Millisecond, RestartMax: 50 * time.Millisecond}, nil, 200, 50)

	waitState := func(want mcp.State, retries int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, _ := mgr.Server("web")
			if st.State == want && st.Restarts >= retries {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("server never %s: %+v", want, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitState(mcp.StateFailed, 0)
	m.Update(mcpChangedMsg{})
	waitState(mcp.StateFailed, 3) // retried, failed again: no new note
	m.Update(mcpChangedMsg{})

	s := screen(t, m)
	note := "MCP server 'web' failed: nothing is listening at " + addr + " (connection refused)"
	if strings.Count(s, note) != 1 || !strings.Contains(s, "the Tools tab (F3) shows its state, and `jarvis mcp tools web` in a shell") {
		t.Fatalf("want the failure noted once:\n%s", s)
	}

	// The server comes up on that address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{}))}}
	srv.Start()
	defer srv.Close()
	defer mgr.Close() // first: its open event stream would hold up srv.Close
	waitState(mcp.StateReady, 0)
	m.Update(mcpChangedMsg{})
	if s := screen(t, m); !strings.Contains(s, "MCP server 'web' is back, with 11 tools.") {
		t.Fatalf("want the recovery noted:\n%s", s)
	}
}
