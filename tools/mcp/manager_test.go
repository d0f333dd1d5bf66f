package mcp

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

const wantDescriptions = `### test__add
Add two numbers and return the sum as structured output.
Category: mcp
Parameters:
  - a (number, required): First addend
  - b (number, required): Second addend

### test__echo
Send the text back, optionally repeated.
Category: mcp
Parameters:
  - text (string, required): The text to send back
  - repeat (integer): How many times to repeat it (default 1)

### test__image
Return a small PNG image with a caption.
Category: mcp`

func TestDiscoveryAndDescriptions(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		m := startManager(t, fastOptions(), sc)
		st := waitReady(t, m, "test")

		var names []string
		for _, ti := range st.Tools {
			names = append(names, ti.Name)
		}
		want := "test__add test__add_tool test__crash test__echo test__fail test__freeze test__image test__mixed test__reject test__remove_tool test__sleep"
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("tools:\n got %s\nwant %s", got, want)
		}
		if st.ServerInfo != "mcptest 1.0.0" {
			t.Errorf("server info %q", st.ServerInfo)
		}

		var picked []tools.Tool
		for _, n := range []string{"test__add", "test__echo", "test__image"} {
			tool, ok := m.Tool(n)
			if !ok {
				t.Fatalf("no tool %s", n)
			}
			picked = append(picked, tool)
		}
		if got := tools.BuildToolDescriptions(picked, true, false); got != wantDescriptions {
			t.Fatalf("descriptions:\n%s\n--- want ---\n%s", got, wantDescriptions)
		}

		spec := picked[1].Spec()
		if spec.Category != "mcp" || !spec.RequiresConfirmation || spec.Timeout() != DefaultTimeoutSeconds {
			t.Errorf("spec: category %q, confirm %v, timeout %v", spec.Category, spec.RequiresConfirmation, spec.Timeout())
		}
		if spec.Metadata[MetaServer] != "test" || spec.Metadata[MetaOriginalName] != "echo" {
			t.Errorf("metadata %v", spec.Metadata)
		}
	})
}

func TestCallThroughExecutor(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		bus := &recorder{}
		e := executor(t, m, tools.ExecutorOptions{Bus: bus, Confirmer: tools.AllowAll})

		r := e.Execute(context.Background(), call("test__echo", `{"text":"hi","repeat":3}`))
		if !r.Success || r.Content != "hi hi hi" {
			t.Fatalf("result %+v", r)
		}
		if r.LatencySeconds <= 0 {
			t.Errorf("latency %v", r.LatencySeconds)
		}
		if r.Metadata[MetaServer] != "test" || r.Metadata[MetaOriginalName] != "echo" {
			t.Errorf("metadata %v", r.Metadata)
		}
		starts, ends := bus.ofType(events.ToolCallStart), bus.ofType(events.ToolCallEnd)
		if len(starts) != 1 || len(ends) != 1 {
			t.Fatalf("events: %d start, %d end", len(starts), len(ends))
		}
		if end := ends[0].Tool; end.Tool != "test__echo" || !end.Success || end.LatencySeconds <= 0 || end.Result != "hi hi hi" {
			t.Errorf("tool_call_end %+v", end)
		}

		// The executor checks arguments against the server's schema before
		// anything is sent.
		r = e.Execute(context.Background(), call("test__echo", `{"repeat":2}`))
		if r.Success || r.Content != "Invalid arguments: missing required parameter 'text'." {
			t.Errorf("missing argument: %+v", r)
		}
	})
}

func TestConfirmation(t *testing.T) {
	t.Run("untrusted without confirmer is refused", func(t *testing.T) {
		m := startManager(t, fastOptions(), stdioServer("test"))
		waitReady(t, m, "test")
		bus := &recorder{}
		e := executor(t, m, tools.ExecutorOptions{Bus: bus})
		r := e.Execute(context.Background(), call("test__echo", `{"text":"hi"}`))
		want := "Tool 'test__echo' requires confirmation but no confirmation callback is available."
		if r.Success || r.Content != want || r.Status != tools.StatusDenied {
			t.Fatalf("result %+v", r)
		}
		if n := len(bus.ofType(events.ToolCallStart)); n != 0 {
			t.Errorf("a refused call published %d start events", n)
		}
	})
	t.Run("denied by the person", func(t *testing.T) {
		m := startManager(t, fastOptions(), stdioServer("test"))
		waitReady(t, m, "test")
		e := executor(t, m, tools.ExecutorOptions{Confirmer: tools.DenyAll})
		r := e.Execute(context.Background(), call("test__echo", `{"text":"hi"}`))
		if r.Success || r.Content != "Tool 'test__echo' execution denied by user." {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("trusted server runs without asking", func(t *testing.T) {
		sc := stdioServer("test")
		sc.Trusted = true
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		e := executor(t, m, tools.ExecutorOptions{})
		r := e.Execute(context.Background(), call("test__echo", `{"text":"hi"}`))
		if !r.Success || r.Content != "hi" {
			t.Fatalf("result %+v", r)
		}
	})
}

func TestResultKinds(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Trusted = true
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		e := executor(t, m, tools.ExecutorOptions{})
		ctx := context.Background()

		r := e.Execute(ctx, call("test__add", `{"a":2,"b":3.5}`))
		if !r.Success || r.Content != `{"sum":5.5}` {
			t.Errorf("add: %+v", r)
		}
		if sc, ok := r.Metadata[MetaStructuredContent].(map[string]any); !ok || sc["sum"] != 5.5 {
			t.Errorf("add structured content: %#v", r.Metadata[MetaStructuredContent])
		}

		png := mcptest.TestPNG()
		r = e.Execute(ctx, call("test__image", ""))
		want := "A 16x16 test pattern.\n[image: image/png, " + byteSize(len(png)) + "]"
		if !r.Success || r.Content != want {
			t.Errorf("image: %q, want %q", r.Content, want)
		}
		atts, _ := r.Metadata[MetaAttachments].([]Attachment)
		if len(atts) != 1 || atts[0].Type != "image" || base64.StdEncoding.EncodeToString(atts[0].Data) != base64.StdEncoding.EncodeToString(png) {
			t.Errorf("image attachments: %+v", atts)
		}

		r = e.Execute(ctx, call("test__mixed", ""))
		want = "[audio: audio/wav, 3 KB]\n[resource: file:///notes.txt, text/plain]\nremember the milk\n[resource link: https://example.com/report.pdf (report), application/pdf]"
		if !r.Success || r.Content != want {
			t.Errorf("mixed:\n%s\nwant\n%s", r.Content, want)
		}
		if atts, _ := r.Metadata[MetaAttachments].([]Attachment); len(atts) != 3 {
			t.Errorf("mixed attachments: %+v", atts)
		}

		r = e.Execute(ctx, call("test__fail", `{"message":"the disk is full"}`))
		if r.Success || r.Status != tools.StatusError || r.Content != "the disk is full" {
			t.Errorf("fail: %+v", r)
		}
	})
}

func TestHungCallHitsTimeout(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Trusted = true
		sc.Timeout = 0.3
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		bus := &recorder{}
		e := executor(t, m, tools.ExecutorOptions{Bus: bus})

		r := e.Execute(context.Background(), call("test__sleep", `{"seconds":30}`))
		if r.Success || r.Status != tools.StatusTimeout || r.Content != "Tool 'test__sleep' timed out after 0.3s." {
			t.Fatalf("result %+v", r)
		}
		if len(bus.ofType(events.ToolTimeout)) != 1 {
			t.Errorf("no tool_timeout event")
		}
		// Only the call was slow: the server still answers and is not
		// restarted.
		r = e.Execute(context.Background(), call("test__echo", `{"text":"still here"}`))
		if !r.Success || r.Content != "still here" {
			t.Fatalf("after the timeout: %+v", r)
		}
		time.Sleep(2 * fastOptions().PingTimeout)
		if st, _ := m.Server("test"); st.State != StateReady || st.Restarts != 0 {
			t.Errorf("server after a slow call: %s, %d restarts", st.State, st.Restarts)
		}
	})
}

func TestListChanged(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Trusted = true
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		reg := tools.NewRegistry()
		m.Register(reg)
		if !reg.Has("test__echo") || reg.Has("test__greet") {
			t.Fatalf("registry before the change: %v", reg.Names())
		}
		e := executor(t, m, tools.ExecutorOptions{})

		r := e.Execute(context.Background(), call("test__add_tool", `{"name":"greet","description":"Say hello."}`))
		if !r.Success {
			t.Fatalf("add_tool: %+v", r)
		}
		waitFor(t, m, "test", "greet is listed", func(s ServerStatus) bool { return len(s.Tools) == 12 })
		greet, ok := m.Tool("test__greet")
		if !ok || greet.Spec().Description != "Say hello." {
			t.Fatalf("greet: %v %+v", ok, greet)
		}
		waitUntil(t, "the registry has test__greet", func() bool { return reg.Has("test__greet") })
		built, err := reg.Build("test__greet", tools.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Add(built); err != nil {
			t.Fatal(err)
		}
		if r := e.Execute(context.Background(), call("test__greet", "")); !r.Success || r.Content != "greet called" {
			t.Fatalf("greet call: %+v", r)
		}

		// A tool that goes away is removed from the registry, and a call
		// through an executor that still holds it fails with a reason.
		if r := e.Execute(context.Background(), call("test__remove_tool", `{"name":"greet"}`)); !r.Success {
			t.Fatalf("remove_tool: %+v", r)
		}
		waitFor(t, m, "test", "greet is gone", func(s ServerStatus) bool { return len(s.Tools) == 11 })
		waitUntil(t, "the registry drops test__greet", func() bool { return !reg.Has("test__greet") })
		r = e.Execute(context.Background(), call("test__greet", ""))
		if r.Success || r.Content != "MCP server 'test' no longer offers tool 'greet'." {
			t.Errorf("call to a removed tool: %+v", r)
		}
	})
}

func TestSubscribeSignalsChanges(t *testing.T) {
	m, err := New(Config{Servers: []ServerConfig{stdioServer("test")}}, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	ch, cancel := m.Subscribe()
	defer cancel()
	m.Start()
	waitReady(t, m, "test")
	select {
	case <-ch:
	default:
		t.Fatal("no change signalled while the server came up")
	}
	m.Close()
	for range ch { // Close closes the channel after the final status
	}
	if st, _ := m.Server("test"); st.State != StateStopped {
		t.Errorf("state after Close: %s", st.State)
	}
}

func TestHTTPHeaders(t *testing.T) {
	var auth atomic.Value
	inner := mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the managers (cleanups run last-in first-out)

	t.Setenv("JARVIS_TEST_TOKEN", "s3cret")
	sc := ServerConfig{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer ${JARVIS_TEST_TOKEN}"}}
	m := startManager(t, fastOptions(), sc)
	waitReady(t, m, "web")
	if got, _ := auth.Load().(string); got != "Bearer s3cret" {
		t.Errorf("Authorization header %q", got)
	}

	sc.Headers = map[string]string{"Authorization": "Bearer ${JARVIS_TEST_UNSET_TOKEN}"}
	m = startManager(t, fastOptions(), sc)
	st := waitFor(t, m, "web", "failed", func(s ServerStatus) bool { return s.State == StateFailed })
	if want := "header Authorization refers to ${JARVIS_TEST_UNSET_TOKEN}, which is not set in jarvis's environment"; st.Reason != want {
		t.Errorf("reason %q", st.Reason)
	}
}

// waitUntil polls cond for up to 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProtocolErrorIsAFailedResult(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Trusted = true
		m := startManager(t, fastOptions(), sc)
		waitReady(t, m, "test")
		e := executor(t, m, tools.ExecutorOptions{})
		r := e.Execute(context.Background(), call("test__reject", ""))
		want := "MCP server 'test' returned an error for 'reject': this call is not accepted (code -32602, invalid arguments)"
		if r.Success || r.Content != want {
			t.Fatalf("result %q, want %q", r.Content, want)
		}
		// The server answered: it is not restarted.
		if r := e.Execute(context.Background(), call("test__echo", `{"text":"ok"}`)); r.Content != "ok" {
			t.Errorf("next call: %+v", r)
		}
		if st, _ := m.Server("test"); st.State != StateReady || st.Restarts != 0 {
			t.Errorf("after a refused call: %s, %d restarts", st.State, st.Restarts)
		}
	})
}

// localTool stands for a built-in tool sharing the executor.
type localTool struct{}

func (localTool) Spec() tools.Spec                                 { return tools.Spec{Name: "local", Description: "A local tool."} }
func (localTool) Execute(context.Context, tools.Args) tools.Result { return tools.OK("local") }

func TestSyncExecutor(t *testing.T) {
	m := startManager(t, fastOptions(), stdioServer("test"))
	waitReady(t, m, "test")
	reg := tools.NewRegistry()
	m.Register(reg)
	off := false
	deps := tools.Deps{Settings: map[string]tools.Settings{"test__greet": {RequiresConfirmation: &off}}}
	build := func(name string) (tools.Tool, error) { return reg.Build(name, deps) }

	e, err := tools.NewExecutor([]tools.Tool{localTool{}}, tools.ExecutorOptions{Confirmer: tools.AllowAll})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SyncExecutor(e, build); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Tools()); n != 12 {
		t.Fatalf("after the first sync: %d tools", n)
	}
	if r := e.Execute(context.Background(), call("test__add_tool", `{"name":"greet"}`)); !r.Success {
		t.Fatalf("add_tool: %+v", r)
	}
	waitFor(t, m, "test", "greet is listed", func(s ServerStatus) bool { return len(s.Tools) == 12 })
	waitUntil(t, "the registry has test__greet", func() bool { return reg.Has("test__greet") })
	if err := m.SyncExecutor(e, build); err != nil {
		t.Fatal(err)
	}
	spec, ok := e.Spec("test__greet")
	if !ok || spec.RequiresConfirmation {
		t.Fatalf("greet after sync: %v, per-tool settings applied: %v", ok, !spec.RequiresConfirmation)
	}
	if _, ok := e.Spec("local"); !ok || len(e.Tools()) != 13 {
		t.Fatalf("sync touched other tools: %d tools", len(e.Tools()))
	}

	e.Execute(context.Background(), call("test__remove_tool", `{"name":"greet"}`))
	waitFor(t, m, "test", "greet is gone", func(s ServerStatus) bool { return len(s.Tools) == 11 })
	if err := m.SyncExecutor(e, build); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Spec("test__greet"); ok || len(e.Tools()) != 12 {
		t.Errorf("greet still held after it was removed: %d tools", len(e.Tools()))
	}
}
