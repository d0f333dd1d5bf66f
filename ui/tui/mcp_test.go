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
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

// mcpWorkbench is a workbench with an MCP manager for server (started,
// its tools registered as they come) and the tools enabled, which must
// not fail the start while the server's are not listed yet. The test
// closes the manager when it ends.
func mcpWorkbench(t *testing.T, server mcp.ServerConfig, opts mcp.Options, enabled []string, width, height int) (*model, *mcp.Manager, *tools.Registry) {
	t.Helper()
	mgr, err := mcp.New(mcp.Config{Servers: []mcp.ServerConfig{server}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close() })
	reg := builtin.Registry(builtin.Deps{})
	mgr.Start()
	mgr.Register(reg)
	cfg, _ := config.Load(config.Flags{ConfigPath: writeEmptyConfig(t)})
	cfg.Model = "qwen3:8b"
	if enabled != nil {
		cfg.Tools = enabled
	}
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: stubEngine{}, Registry: reg, Theme: "dark", Bus: events.New(), MCP: mgr})
	if err != nil {
		t.Fatalf("the workbench did not start: %v", err)
	}
	m.now = func() time.Time { return testTime }
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return m, mgr, reg
}

// testServer is the MCP test server on a loopback port, named name.
func testServer(t *testing.T, name string) mcp.ServerConfig {
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	t.Cleanup(ts.Close)
	return mcp.ServerConfig{Name: name, URL: ts.URL + "/mcp"}
}

// waitForTool waits until the server is ready and its tool registered
// (registration follows the manager's signals), then tells the workbench.
func waitForTool(t *testing.T, m *model, mgr *mcp.Manager, reg *tools.Registry, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := mgr.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	for !reg.Has(name) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	m.Update(mcpChangedMsg{})
}

func TestToolsPaneShowsMCPToolsUnderTheirServer(t *testing.T) {
	// web__echo is not listed yet when the workbench starts.
	m, mgr, reg := mcpWorkbench(t, testServer(t, "web"), mcp.Options{}, []string{"calculator", "web__echo"}, 160, 50)
	waitForTool(t, m, mgr, reg, "web__echo")
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
