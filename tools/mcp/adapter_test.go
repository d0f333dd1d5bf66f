package mcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
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

// Two tools whose names sanitise alike: the adapter must run the one the
// call names (and the user approved), never the one that happens to own
// the plain jarvis name.
func TestAdapterRunsTheNamedToolWhenNamesCollide(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Trusted = true
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		e := executor(t, m, tools.ExecutorOptions{})
		for _, name := range []string{"a.b", "a_b"} {
			if r := e.Execute(context.Background(), call("test__add_tool", `{"name":"`+name+`"}`)); !r.Success {
				t.Fatalf("add_tool %s: %+v", name, r)
			}
		}
		st := waitFor(t, m, "test", "both tools are listed", func(s ServerStatus) bool { return len(s.Tools) == 13 })
		jarvisName := map[string]string{}
		for _, ti := range st.Tools {
			jarvisName[ti.Original] = ti.Name
		}
		if jarvisName["a_b"] != "test__a_b" || !strings.HasPrefix(jarvisName["a.b"], "test__a_b_") {
			t.Fatalf("names: %v", jarvisName)
		}

		a := NewAdapter(func() *Manager { return m })
		ctx := ctxTimeout(t, 20*time.Second)
		for _, tool := range []string{"a.b", "a_b", jarvisName["a.b"]} {
			r := a.Execute(ctx, tools.Args{"server": "test", "tool": tool})
			want := tool
			if strings.HasPrefix(tool, "test__") {
				want = "a.b"
			}
			if !r.Success || r.Content != want+" called" || r.Metadata[MetaOriginalName] != want {
				t.Errorf("tool %q ran %q (%v), want %q", tool, r.Content, r.Metadata[MetaOriginalName], want)
			}
		}
		if r := a.Execute(ctx, tools.Args{"server": "test", "tool": "a b"}); r.Success || !strings.Contains(r.Content, `has no tool "a b"`) {
			t.Errorf("a name that is neither an original nor a jarvis name: %+v", r)
		}
		if tool, ok := m.ToolByOriginal("test", "a.b"); !ok || tool.Spec().Name != jarvisName["a.b"] {
			t.Errorf("ToolByOriginal(a.b) = %v, %v", tool, ok)
		}
		if _, ok := m.ToolByOriginal("nope", "echo"); ok {
			t.Error("ToolByOriginal found a tool on an unknown server")
		}
	})
}

// A call through the adapter is bounded by the server's timeout, not by the
// adapter's own (600 s), and ends the way a direct call does.
func TestAdapterAppliesServerTimeout(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Timeout = 0.3
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		bus := &recorder{}
		a := NewAdapter(func() *Manager { return m })
		e, err := tools.NewExecutor([]tools.Tool{a}, tools.ExecutorOptions{Bus: bus, Confirmer: tools.AllowAll})
		if err != nil {
			t.Fatal(err)
		}
		// Without the server's timeout the call would run until this
		// context ends and fail as cancelled.
		ctx := ctxTimeout(t, 20*time.Second)
		r := e.Execute(ctx, call(AdapterName, `{"server":"test","tool":"sleep","arguments":{"seconds":60}}`))
		if r.Success || r.Status != tools.StatusTimeout || r.Content != "Tool 'test__sleep' timed out after 0.3s." {
			t.Fatalf("result %+v", r)
		}
		if r.Metadata[MetaServer] != "test" || r.Metadata[MetaOriginalName] != "sleep" {
			t.Errorf("metadata %v", r.Metadata)
		}
		if len(bus.ofType(events.ToolTimeout)) != 1 {
			t.Error("no tool_timeout event")
		}
		r = e.Execute(ctx, call(AdapterName, `{"server":"test","tool":"echo","arguments":{"text":"fast"}}`))
		if !r.Success || r.Content != "fast" {
			t.Fatalf("a call within the timeout: %+v", r)
		}
	})
}

func TestAdapterSpecCoversLongestServerTimeout(t *testing.T) {
	m, err := New(Config{Servers: []ServerConfig{{Name: "a", Command: "x", Timeout: 5}, {Name: "b", Command: "x", Timeout: 1800}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := NewAdapter(func() *Manager { return m }).Spec().TimeoutSeconds; got != 1800 {
		t.Errorf("adapter timeout %v, want 1800", got)
	}
	if got := NewAdapter(nil).Spec().TimeoutSeconds; got != DefaultTimeoutSeconds {
		t.Errorf("adapter timeout without servers %v", got)
	}
}
