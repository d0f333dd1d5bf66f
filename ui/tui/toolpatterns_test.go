package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// /tools takes a whole list, or changes to the current one.
func TestEditTools(t *testing.T) {
	reg := tools.NewRegistry()
	for _, n := range []string{"calculator", "think", "web__add", "web__echo"} {
		reg.Register(n, func(tools.Deps) (tools.Tool, error) { return nil, nil })
	}
	cur := []string{"calculator", "web__*"}
	for _, c := range []struct {
		arg  string
		want []string
		err  string
	}{
		{arg: "think, file_read", want: []string{"think", "file_read"}},
		{arg: "+think", want: []string{"calculator", "web__*", "think"}},
		{arg: "+calculator", want: []string{"calculator", "web__*"}},
		{arg: "-calculator,+think", want: []string{"web__*", "think"}},
		// Taking away one tool a pattern covers names the others.
		{arg: "-web__add", want: []string{"calculator", "web__echo"}},
		{arg: "-web__*", want: []string{"calculator"}},
		{arg: "think,+calculator", err: "mixes a list with + and -"},
		{arg: "+", err: "needs a tool name after it"},
	} {
		got, err := editTools(reg, cur, c.arg)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("/tools %s: err %v, want %q", c.arg, err, c.err)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("/tools %s = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
}

// SERVER__* in the tools offers every tool of a server, those it lists
// after jarvis started included; turning one off names the rest.
func TestAServerPatternOffersItsToolsWhenTheyArrive(t *testing.T) {
	m, mgr, reg := mcpWorkbench(t, testServer(t, "web"), mcp.Options{}, []string{"calculator", "web__*"}, 160, 50)
	waitForTool(t, m, mgr, reg, "web__echo")
	var web []string
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, "web__") {
			web = append(web, n)
		}
	}
	if len(web) < 2 {
		t.Fatalf("the test server lists %v", web)
	}
	for _, n := range append([]string{"calculator"}, web...) {
		if _, ok := m.executor.Spec(n); !ok {
			t.Errorf("%s is not offered: %v", n, m.executor.AvailableTools())
		}
	}
	if got, want := len(m.executor.AvailableTools()), 1+len(web); got != want {
		t.Errorf("%d tools offered, want %d", got, want)
	}
	if s := screen(t, m); !strings.Contains(s, "· "+format.Count(1+len(web), "tool")+" ·") {
		t.Errorf("the header does not count the tools the pattern stands for:\n%s", strings.SplitN(s, "\n", 2)[0])
	}
	m.toggleTool("web__echo")
	if slices.Contains(m.enabled, "web__*") || slices.Contains(m.enabled, "web__echo") || !slices.Contains(m.enabled, web[0]) {
		t.Errorf("after turning web__echo off the list is %v", m.enabled)
	}
	if _, ok := m.executor.Spec("web__echo"); ok {
		t.Error("web__echo is still offered after it was turned off")
	}
	// Space on the server's row in the Tools tab: all of its tools on,
	// then, all being on, all off.
	m.toggleTool("web__*")
	if got := len(m.executor.AvailableTools()); got != 1+len(web) {
		t.Errorf("after turning the server on: %d tools offered, want %d (%v)", got, 1+len(web), m.enabled)
	}
	m.toggleTool("web__*")
	if got := m.executor.AvailableTools(); len(got) != 1 || !slices.Equal(m.enabled, []string{"calculator"}) {
		t.Errorf("after turning the server off: offered %v, list %v", got, m.enabled)
	}
}

// When the model calls a tool that exists but is off, the person is told
// how to turn it on, once a run; a name that is no tool gets no such note.
func TestATurnedOffToolTheModelCallsSaysHowToTurnItOn(t *testing.T) {
	m := newTestModel(t, 140, 40)
	run := fakeRun(m, "fix the typo")
	off := func(id, name string) events.Event {
		return events.Event{Type: events.ToolCallError, Run: run, Tool: &events.ToolPayload{Tool: name, CallID: id,
			Status: string(tools.StatusError), Result: "Unknown tool: " + name + " (available: calculator, think)"}}
	}
	feed(m, off("c1", "file_edit"), off("c2", "file_edit"), off("c3", "no_such_tool"))
	s := screen(t, m)
	const note = "file_edit is off in this session, so the model was told it does not exist: /tools +file_edit turns it on"
	if n := strings.Count(strings.Join(strings.Fields(s), " "), note); n != 1 {
		t.Errorf("the note is shown %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, "no_such_tool is off") {
		t.Errorf("a tool that does not exist is said to be off:\n%s", s)
	}
}

// A server that comes up with all its tools off, before the conversation
// starts, is said once, with how to offer its tools; one with a tool on
// is not.
func TestAServerWithItsToolsOffIsSaidOnce(t *testing.T) {
	m, mgr, reg := mcpWorkbench(t, testServer(t, "web"), mcp.Options{}, nil, 200, 50)
	waitForTool(t, m, mgr, reg, "web__echo")
	m.Update(mcpChangedMsg{})
	const note = "MCP server 'web' is ready with its"
	s := strings.Join(strings.Fields(screen(t, m)), " ")
	if n := strings.Count(s, note); n != 1 || !strings.Contains(s, "tools off: /tools +web__* offers them to the model") {
		t.Errorf("the note is there %d times, want once:\n%s", n, s)
	}
	m2, mgr2, reg2 := mcpWorkbench(t, testServer(t, "web"), mcp.Options{}, []string{"web__echo"}, 200, 50)
	waitForTool(t, m2, mgr2, reg2, "web__echo")
	if s := screen(t, m2); strings.Contains(s, note) {
		t.Errorf("a server with a tool on is said to have them off:\n%s", s)
	}
}
