package mcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

func TestAdapterListsAndCalls(t *testing.T) {
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	defer ts.Close()
	m, err := New(Config{Servers: []ServerConfig{{Name: "web", URL: ts.URL + "/mcp"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	a := NewAdapter(func() *Manager { return m })
	if s := a.Spec(); !s.RequiresConfirmation || s.Name != AdapterName {
		t.Fatalf("spec = %+v", s)
	}
	r := a.Execute(ctx, tools.Args{"server": "web"})
	if !r.Success || !strings.Contains(r.Content, "### web__echo") || !strings.Contains(r.Content, "offers") {
		t.Fatalf("list: %+v", r)
	}
	r = a.Execute(ctx, tools.Args{"server": "web", "tool": "echo", "arguments": map[string]any{"text": "hi"}})
	if !r.Success || !strings.Contains(r.Content, "hi") {
		t.Fatalf("call: %+v", r)
	}
	for args, want := range map[string]tools.Args{
		`Unknown MCP server "nope". Configured servers: web.`: {"server": "nope"},
		`has no tool "missing"`:                               {"server": "web", "tool": "missing"},
		"'arguments' must be a JSON object":                   {"server": "web", "tool": "echo", "arguments": "hi"},
	} {
		if r := a.Execute(ctx, want); r.Success || !strings.Contains(r.Content, args) {
			t.Errorf("got %q, want %q", r.Content, args)
		}
	}
	if r := NewAdapter(func() *Manager { return nil }).Execute(ctx, tools.Args{"server": "x"}); r.Success || !strings.Contains(r.Content, "[[mcp.servers]]") {
		t.Fatalf("no servers: %q", r.Content)
	}
}
