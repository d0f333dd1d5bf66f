package sdk_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The example program is docs/sdk.md's "jarvis plus my tools": built, it is
// the whole jarvis command line with my_tool beside the built-in tools.
func TestAProgramOfAFewLinesIsJarvisWithItsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mytool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jarvis-workbench/jarvis/sdk/examples/mytool").CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("Process this data")).Reply(et.ToolCall("my_tool", `{"input":"this data"}`))
	srv.On(et.ToolResult("my_tool")).Reply(et.Text("All processed."))
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--host", srv.URL, "--engine", "ollama", "--model", "qwen3", "--config", config, "--db", filepath.Join(dir, "jarvis.db")}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	// The spec's command line.
	out, _ := run("ask", "--json", "--agent", "orchestrator", "--tools", "my_tool", "Process this data")
	var res struct {
		Content     string         `json:"content"`
		ToolResults []tools.Result `json:"tool_results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("ask --json printed %q: %v", out, err)
	}
	if len(res.ToolResults) != 1 || res.ToolResults[0].Content != "Processed: this data" || !res.ToolResults[0].Success || res.Content != "All processed." {
		t.Fatalf("%+v", res)
	}

	// Listed and described like a built-in tool.
	out, _ = run("tools", "list")
	if !strings.Contains(out, "my_tool") || !strings.Contains(out, "custom") || !strings.Contains(out, "calculator") {
		t.Fatalf("tools list:\n%s", out)
	}
	out, _ = run("tools", "describe", "my_tool")
	if !strings.Contains(out, "A custom tool that does something useful.") || !strings.Contains(out, "input") {
		t.Fatalf("tools describe:\n%s", out)
	}
	out, _ = run("tools", "run", "--json", "my_tool", `{"input":"by hand"}`)
	if !strings.Contains(out, "Processed: by hand") {
		t.Fatalf("tools run:\n%s", out)
	}
}
