package app

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

func load(t *testing.T, body string) *Env {
	t.Helper()
	for _, k := range []string{"JARVIS_MODEL", "OLLAMA_HOST", "JARVIS_AGENT", "JARVIS_TOOLS", "JARVIS_DB", "JARVIS_CONFIG", "JARVIS_ENGINE", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(config.Flags{ConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	db, err := OpenDB(filepath.Join(dir, "jarvis.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env, err := New(cfg, db, Options{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestTheRegistryHasTheBuiltinsAndTheConfigsCommands(t *testing.T) {
	env := load(t, `
model = "lab/qwen3-32b"

[[endpoints]]
name = "lab"
engine = "openai"
host = "http://127.0.0.1:9/v1"

[[commands]]
name = "today"
description = "Print the date."
argv = ["date", "+%F"]
`)
	for _, name := range []string{"calculator", "file_read", "today"} {
		if !env.Registry.Has(name) {
			t.Errorf("%s missing from %v", name, env.Registry.Names())
		}
	}
	list, err := env.BuildTools([]string{"today"})
	if err != nil || list[0].Spec().Category != "command" || !list[0].Spec().RequiresConfirmation {
		t.Fatalf("%v %v", list, err)
	}
	// The model is on the endpoint it names.
	if env.At.Name != "lab" || env.Model != "qwen3-32b" || env.TaskServer().Engine != "openai" {
		t.Fatalf("at %+v model %q", env.At, env.Model)
	}
	if err := env.ValidateTask("orchestrator", []string{"today", "calculator"}); err != nil {
		t.Fatal(err)
	}
	var unknown *tools.UnknownToolError
	if err := env.ValidateTask("orchestrator", []string{"todya"}); !errors.As(err, &unknown) {
		t.Fatalf("%v", err)
	}
	if err := env.ValidateTask("orchestrator", []string{"calc*"}); err == nil || !strings.Contains(err.Error(), `a task names each of its tools in full: it runs unattended, with exactly the tools it was given; "calc*" is a pattern`) {
		t.Fatalf("a pattern in a task's tools: %v", err)
	}
	if err := env.ValidateTask("planner", nil); err == nil || !strings.Contains(err.Error(), "planner") {
		t.Fatalf("%v", err)
	}
}

func TestPolicyOptionsCarryTheConfigAndTheDatabase(t *testing.T) {
	env := load(t, "[tool.calculator]\nconfirm = true\n")
	o := PolicyOptions(env.Config, env.DB)
	if !o.Overrides["calculator"] || o.Always == nil || o.Audit == nil {
		t.Fatalf("%+v", o)
	}
	if o := PolicyOptions(nil, nil); o.Overrides != nil || o.Always != nil || o.Audit != nil {
		t.Fatalf("without config and database: %+v", o)
	}
}

// A command starts the servers its tools name, and all of them only when
// it cannot tell which it needs.
func TestMCPServersFor(t *testing.T) {
	for names, want := range map[string][]string{
		"calculator":                         {},
		"files__read,calculator,files__list": {"files"},
		"files__*,gh__issue":                 {"files", "gh"},
		"":                                   nil,
		"mcp_adapter":                        nil,
		"*search*":                           nil,
		"f*__read":                           nil,
	} {
		if got := MCPServersFor(tools.ParseList(names)); !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%q: %#v, want %#v", names, got, want)
		}
	}
}

func TestNeedsMCP(t *testing.T) {
	cfg := mcp.Config{Servers: []mcp.ServerConfig{{Name: "files"}}}
	for names, want := range map[string]bool{"": true, "calculator": false, "files__read": true, "mcp_adapter": true} {
		if got := NeedsMCP(cfg, tools.ParseList(names)); got != want {
			t.Errorf("%q: %v", names, got)
		}
	}
	if NeedsMCP(mcp.Config{}, nil) {
		t.Error("no servers, nothing to start")
	}
	if !NeedsMCP(cfg, []string{"*search*"}) {
		t.Error("a pattern may match a server's tools")
	}
	if !slices.Contains(load(t, "").Registry.Names(), mcp.AdapterName) {
		t.Error("the adapter is a built-in tool")
	}
}
