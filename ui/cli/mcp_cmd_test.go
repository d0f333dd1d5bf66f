package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

// mcpConfigFile writes a config with an in-process HTTP test server, a
// server that cannot start and a disabled one, and returns its path.
func mcpConfigFile(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	t.Cleanup(ts.Close)
	path := filepath.Join(t.TempDir(), "config.toml")
	cfg := `
[[mcp.servers]]
name = "web"
url = "` + ts.URL + `/mcp"
trusted = true

[[mcp.servers]]
name = "ghost"
command = "/nonexistent/jarvis-mcp-server"

[[mcp.servers]]
name = "off"
command = "/nonexistent/jarvis-mcp-server"
enabled = false
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMCPList(t *testing.T) {
	cfg := mcpConfigFile(t)
	out, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "list")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := [][]string{
		{"SERVER", "TRANSPORT", "STATUS", "TOOLS", "CONFIRM", "LAST", "ERROR"},
		{"web", "http", "ready", "11", "no", "(trusted)", "-"},
		{"ghost", "stdio", "failed", "-", "yes", "cannot", "start", "/nonexistent/jarvis-mcp-server:", "no", "such", "file", "or", "directory"},
		{"off", "stdio", "disabled", "-", "yes", "-"},
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out)
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d: %q, want %q", i, lines[i], strings.Join(w, " "))
		}
	}

	out, _, code = runCLI(t, "", "--config", cfg, "mcp", "list", "--json")
	var list []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || list[0]["state"] != "ready" {
		t.Errorf("--json: exit %d, %s", code, out)
	}
}

func TestMCPTools(t *testing.T) {
	cfg := mcpConfigFile(t)
	out, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "tools", "web")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	echo := `### web__echo
Send the text back, optionally repeated.
Category: mcp
Parameters:
  - text (string, required): The text to send back
  - repeat (integer): How many times to repeat it (default 1)
`
	if !strings.HasPrefix(out, "web (http: ") || !strings.Contains(out, "ready, 11 tools [mcptest 1.0.0]\n") || !strings.Contains(out, echo) {
		t.Errorf("output:\n%s", out)
	}

	// A disabled server is started when asked for by name.
	if out, _, code := runCLI(t, "", "--config", cfg, "mcp", "tools", "off"); code != ExitFailed ||
		!strings.Contains(out, "off (stdio: /nonexistent/jarvis-mcp-server) failed: cannot start /nonexistent/jarvis-mcp-server: no such file or directory") {
		t.Errorf("off: exit %d, %q", code, out)
	}
	if _, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "tools", "nope"); code != ExitUsage ||
		!strings.Contains(errOut, `no MCP server named "nope"; configured servers: web, ghost, off`) {
		t.Errorf("unknown server: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "", "--config", cfg, "mcp", "tools"); code != ExitUsage {
		t.Errorf("no server named: exit %d", code)
	}
}

func TestMCPListWithoutServers(t *testing.T) {
	out, errOut, code := runCLI(t, "", "mcp", "list")
	if code != ExitOK || !strings.HasPrefix(out, "No MCP servers configured.") {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
}
