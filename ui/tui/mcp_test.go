package tui

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

func TestToolsPaneShowsMCPToolsUnderTheirServer(t *testing.T) {
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	defer ts.Close()
	mgr, err := mcp.New(mcp.Config{Servers: []mcp.ServerConfig{{Name: "web", URL: ts.URL + "/mcp"}}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	reg := builtin.Registry(builtin.Deps{})
	mgr.Start()
	mgr.Register(reg)

	cfg, _ := config.Load(config.Flags{ConfigPath: writeEmptyConfig(t)})
	cfg.Model = "qwen3:8b"
	cfg.Tools = []string{"calculator", "web__echo"} // web__echo is not listed yet
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: stubEngine{}, Registry: reg, Theme: "dark", Bus: events.New(), MCP: mgr})
	if err != nil {
		t.Fatalf("an MCP tool whose server is starting must not fail the start: %v", err)
	}
	m.now = func() time.Time { return testTime }
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	init := m.Init()
	_ = init
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := mgr.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// Registration follows the manager's signals; wait for the tool.
	for !reg.Has("web__echo") && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	m.Update(mcpChangedMsg{})
	if _, ok := m.executor.Spec("web__echo"); !ok {
		t.Fatalf("the enabled MCP tool did not join the executor: %v", m.executor.AvailableTools())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	m.Update(tea.KeyMsg{Type: tea.KeyTab}) // focus the pane and walk to the end of the list
	for i := 0; i < 40; i++ {
		m.Update(tea.KeyMsg{Type: tea.KeyDown})
	}
	s := screen(t, m)
	for _, want := range []string{"◆ web · ready", "[x] web__echo ⚠", "[ ] web__add", "### web__echo", "Category: mcp"} {
		if !strings.Contains(s, want) {
			t.Errorf("tools pane lacks %q", want)
		}
	}
	// What each tool and the whole server would cost in the prompt.
	for _, re := range []string{`\[x\] web__echo ⚠ \d+ tok`, `◆ web · ready, \d+ tools · [\d.]+k? tok`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("tools pane lacks %s", re)
		}
	}
	if t.Failed() {
		t.Logf("screen:\n%s", s)
	}
}
