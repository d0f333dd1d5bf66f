package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// TestAskCallsMCPToolEndToEnd runs `jarvis ask --tools test__echo` against
// the fake Ollama server, with the MCP test server started over stdio from
// the config: the model calls the MCP tool, the result goes back, and the
// answer and the tool lines come out.
func TestAskCallsMCPToolEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the MCP test server")
	}
	bin := filepath.Join(t.TempDir(), "mcptest")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jarvis-workbench/jarvis/tools/mcp/mcptest/cmd").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgPath, []byte("[[mcp.servers]]\nname = \"test\"\ncommand = \""+bin+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("echo")).Reply(et.ToolCall("test__echo", `{"text":"hello from mcp"}`))
	srv.On(et.ToolResult("test__echo")).Reply(et.Text("The server said: hello from mcp."))

	// Not trusted and no terminal: refused unless --yes.
	_, errOut, code := runCLI(t, "", "ask", "--config", cfgPath, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "test__echo", "please echo")
	if code != ExitOK || !strings.Contains(errOut, "requires confirmation") {
		t.Fatalf("without --yes: exit %d, stderr %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "", "ask", "--yes", "--config", cfgPath, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "test__echo", "please echo")
	if code != ExitOK || out != "The server said: hello from mcp.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, `→ test__echo {"text":"hello from mcp"}`) || !strings.Contains(errOut, "✓ test__echo") {
		t.Fatalf("tool lines missing: %q", errOut)
	}
	// The model was offered the MCP tool with its schema, and got its result.
	chats := srv.Chats()
	if len(chats[0].Tools) != 1 || chats[0].Tools[0].Function.Name != "test__echo" {
		t.Fatalf("tools offered: %+v", chats[0].Tools)
	}
	last := chats[len(chats)-1].Messages
	if tm := last[len(last)-1]; tm.Role != "tool" || !strings.Contains(tm.Content, "hello from mcp") {
		t.Fatalf("tool result sent back: %+v", tm)
	}
	// describe shows the MCP tool the way the model reads it.
	out, _, code = runCLI(t, "", "tools", "describe", "test__echo", "--config", cfgPath)
	if code != ExitOK || !strings.HasPrefix(out, "### test__echo\n") || !strings.Contains(out, "Category: mcp") {
		t.Fatalf("describe: exit %d\n%s", code, out)
	}
}
