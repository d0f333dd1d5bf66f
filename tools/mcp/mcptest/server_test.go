package mcptest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs the server in-process and returns a client session to it.
func connect(t *testing.T, onListChanged func()) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(Options{}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{}
	if onListChanged != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { onListChanged() }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return text, res.IsError
}

func TestTools(t *testing.T) {
	cs := connect(t, nil)
	want := []string{ToolAdd, ToolAddTool, ToolCrash, ToolEcho, ToolFail, ToolFreeze, ToolImage, ToolMixed, ToolReject, ToolRemoveTool, ToolSleep}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	if text, isErr := callText(t, cs, ToolEcho, map[string]any{"text": "ab", "repeat": 2}); isErr || text != "ab ab" {
		t.Errorf("echo: %q %v", text, isErr)
	}
	if text, isErr := callText(t, cs, ToolFail, map[string]any{"message": "boom"}); !isErr || text != "boom" {
		t.Errorf("fail: %q %v", text, isErr)
	}
	// In-process, the tools that act on the process refuse.
	for _, name := range []string{ToolCrash, ToolFreeze} {
		if _, isErr := callText(t, cs, name, nil); !isErr {
			t.Errorf("%s ran in-process", name)
		}
	}
}

func TestSleepHonoursCancellation(t *testing.T) {
	cs := connect(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSleep, Arguments: map[string]any{"seconds": 30}}); err == nil {
		t.Fatal("a cancelled sleep returned a result")
	}
	// The server is still responsive.
	if text, _ := callText(t, cs, ToolEcho, map[string]any{"text": "x"}); text != "x" {
		t.Errorf("echo after a cancelled sleep: %q", text)
	}
}

func TestAddAndRemoveTool(t *testing.T) {
	changed := make(chan struct{}, 10)
	cs := connect(t, func() { changed <- struct{}{} })
	if text, _ := callText(t, cs, ToolAddTool, map[string]any{"name": "greet"}); text != "added greet" {
		t.Fatalf("add_tool: %q", text)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed notification")
	}
	if !slices.Contains(toolNames(t, cs), "greet") {
		t.Fatal("greet not listed")
	}
	if text, _ := callText(t, cs, "greet", nil); text != "greet called" {
		t.Errorf("greet: %q", text)
	}
	callText(t, cs, ToolRemoveTool, map[string]any{"name": "greet"})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed notification after remove")
	}
	if slices.Contains(toolNames(t, cs), "greet") {
		t.Error("greet still listed")
	}
}
