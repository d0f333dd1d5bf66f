package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
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
	// ghost failed: the command fails too, and says which server did.
	if code != ExitFailed || errOut != "jarvis: 1 of 3 MCP server failed: ghost (the LAST ERROR column says why; jarvis mcp tools NAME shows one in full).\n" {
		t.Fatalf("exit %d: %q", code, errOut)
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

	out, errOut, code = runCLI(t, "", "--config", cfg, "mcp", "list", "--json")
	var list []map[string]any
	if code != ExitFailed || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || list[0]["state"] != "ready" ||
		!strings.Contains(errOut, `failed: ghost (their "reason" says why`) {
		t.Errorf("--json: exit %d, %s\n%s", code, out, errOut)
	}
}

func TestMCPListAllReady(t *testing.T) {
	ts := httptest.NewServer(mcptest.HTTPHandler(mcptest.NewServer(mcptest.Options{})))
	defer ts.Close()
	cfg := writeConfig(t, "[[mcp.servers]]\nname = \"web\"\nurl = \""+ts.URL+"/mcp\"\n")
	if out, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "list"); code != ExitOK || errOut != "" || !strings.Contains(out, "ready") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// A server that never answers fails after its start timeout (start_timeout
// in the config, or --wait for all), not after a fixed wait, and is named.
func TestMCPListHungServer(t *testing.T) {
	bin := mcpTestServer(t)
	cfg := writeConfig(t, "[[mcp.servers]]\nname = \"stuck\"\ncommand = \""+bin+"\"\nargs = [\"-hang\"]\nstart_timeout = 0.5\n")
	out, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "list")
	if code != ExitFailed || !strings.Contains(out, "the server did not answer the MCP handshake within 500ms") ||
		!strings.Contains(errOut, "1 of 1 MCP server failed: stuck") {
		t.Errorf("start_timeout: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "--config", cfg, "mcp", "tools", "stuck", "--wait", "300ms")
	if code != ExitFailed || !strings.Contains(out, "the server did not answer the MCP handshake within 300ms") {
		t.Errorf("--wait: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "", "--config", cfg, "mcp", "list", "--wait", "-1s"); code != ExitUsage || !strings.Contains(errOut, "--wait must be a positive duration") {
		t.Errorf("negative --wait: exit %d, %q", code, errOut)
	}
}

// On a terminal, the command says what it waits for while it waits, and
// clears that line before the table.
func TestMCPListSaysWhatItWaitsFor(t *testing.T) {
	bin := mcpTestServer(t)
	cfg := writeConfig(t, "[[mcp.servers]]\nname = \"stuck\"\ncommand = \""+bin+"\"\nargs = [\"-hang\"]\n")
	run := runInTerminal(t, "--config", cfg, "mcp", "list", "--wait", "2500ms")
	if !regexp.MustCompile(`Waiting for MCP server stuck \(` + regexp.QuoteMeta(bin) + ` -hang\): waiting for its answer to the MCP handshake, [12]s of 2.5s`).Match(run.raw) {
		t.Errorf("no status line while waiting:\n%q", run.raw)
	}
	if strings.Contains(run.screen, "Waiting for") || !strings.Contains(run.screen, "stuck   stdio      failed") {
		t.Errorf("screen:\n%s", run.screen)
	}
}

// Commands that use MCP tools wait for the servers too, and say so.
func TestToolsRunSaysWhichServerItWaitsFor(t *testing.T) {
	bin := mcpTestServer(t)
	cfg := writeConfig(t, "[[mcp.servers]]\nname = \"stuck\"\ncommand = \""+bin+"\"\nargs = [\"-hang\"]\nstart_timeout = 2.5\n")
	run := runInTerminal(t, "--config", cfg, "tools", "run", "stuck__echo", `{"text":"hi"}`)
	if !regexp.MustCompile(`Waiting for MCP server stuck \(` + regexp.QuoteMeta(bin) + ` -hang\): waiting for its answer to the MCP handshake, [12]s of 2.5s`).Match(run.raw) {
		t.Errorf("no status line while waiting:\n%q", run.raw)
	}
	if !strings.Contains(run.screen, "note: MCP server stuck is not available, so its tools are left out: the server did not answer the MCP handshake within 2.5s") {
		t.Errorf("screen:\n%s", run.screen)
	}
}

func TestMCPProgressLine(t *testing.T) {
	var b strings.Builder
	p := &mcpProgress{w: &b, width: func() int { return 60 }}
	now := time.Now()
	p.update([]mcp.ServerStatus{{Name: "a", Target: "npx -y pkg", Since: now, StartTimeout: 30, Step: "waiting for its answer to the MCP handshake"}}, false)
	p.update([]mcp.ServerStatus{{Name: "a\x1b[31m", Since: now, StartTimeout: 30}, {Name: "b", Since: now, StartTimeout: 90, Step: "listing its tools"}}, false)
	p.update(nil, true)
	p.update(nil, false)
	// 59 columns (one left free so the line never wraps), the escape
	// sequence a name held gone.
	want := "\r\x1b[KWaiting for MCP server a (npx -y pkg): waiting for its ans…" +
		"\r\x1b[KWaiting for 2 MCP servers: a (starting, 0s of 30s); b (lis…" +
		"\r\x1b[KStopping the MCP servers…" +
		"\r\x1b[K"
	if b.String() != want {
		t.Errorf("progress:\n got %q\nwant %q", b.String(), want)
	}
}

// mcpTestServer builds the MCP test server program once per test.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the MCP test server")
	}
	bin := filepath.Join(t.TempDir(), "mcptest")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jarvis-workbench/jarvis/tools/mcp/mcptest/cmd").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return bin
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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

// A failing server's retries say one note on stderr, no raw log lines;
// tools list still lists the other tools.
func TestToolsListWithAFailingServerSaysSoOnce(t *testing.T) {
	cfg := mcpConfigFile(t)
	out, errOut, code := runCLI(t, "", "--config", cfg, "tools", "list")
	if code != ExitOK || !strings.Contains(out, "web__echo") || !strings.Contains(out, "calculator") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(errOut, "level=") || strings.Count(errOut, "MCP server ghost") != 1 || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("stderr %q", errOut)
	}
}

// A command that uses one server's tools starts that server alone: the
// failing one is never started, so never reported.
func TestACommandStartsOnlyTheServersItsToolsName(t *testing.T) {
	cfg := mcpConfigFile(t)
	out, errOut, code := runCLI(t, "", "--config", cfg, "tools", "run", "web__echo", `{"text":"hi"}`)
	if code != ExitOK || !strings.Contains(out, "hi") || strings.Contains(errOut, "ghost") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if _, errOut, _ := runCLI(t, "", "--config", cfg, "tools", "describe"); !strings.Contains(errOut, "MCP server ghost") {
		t.Fatalf("describing every tool starts every server; stderr %q", errOut)
	}
}

// doctor checks the MCP servers as mcp list does: each one's state (and
// for a ready one how many of its tools the model is offered), and for a
// failed one why and what to do.
func TestDoctorChecksTheMCPServers(t *testing.T) {
	srv := fakeOllama(t)
	cfg := mcpConfigFile(t)
	out, _, code := runCLI(t, "", "--config", cfg, "doctor", "--host", srv.URL, "--model", "qwen3:8b", "--db", filepath.Join(t.TempDir(), "j.db"))
	if code != ExitFailed || !strings.Contains(out, "✓ mcp       server web (") ||
		!strings.Contains(out, `ready, 11 tools; none offered to the model (add "web__*" to tools in the config, or /tools +web__* in the workbench)`) ||
		!strings.Contains(out, "✗ mcp       server ghost (/nonexistent/jarvis-mcp-server): failed: cannot start") ||
		!strings.Contains(out, "fix: 'jarvis mcp tools ghost' shows it in full") || !strings.Contains(out, "server off (/nonexistent/jarvis-mcp-server): disabled") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
