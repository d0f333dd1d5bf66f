package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func clearEnv(t *testing.T) {
	for _, k := range []string{"JARVIS_MODEL", "OLLAMA_HOST", "JARVIS_AGENT", "JARVIS_TOOLS", "JARVIS_THEME", "JARVIS_DB", "JARVIS_CONFIG", "JARVIS_ENGINE", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func TestPrecedenceDefaultsFileEnvFlags(t *testing.T) {
	clearEnv(t)
	p := writeConfig(t, `
model = "file-model"
host = "http://file:11434"
agent = "react"
tools = ["calculator"]
max_turns = 4

[options]
num_ctx = 8192
temperature = 0.2
keep_alive = "10m"

[prices.qwen3]
input = 0.5
output = 1.5

[tool.file_read]
allowed_dirs = ["/srv"]
confirm = true
timeout = 12
`)
	c, err := Load(Flags{ConfigPath: p})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "file-model" || c.Agent != "react" || c.MaxTurns != 4 || c.Source("model") != "config "+p+":2" || c.Source("theme") != "default" {
		t.Fatalf("file level: %+v sources %v", c, c.sources)
	}
	if c.Tool["file_read"].AllowedDirs[0] != "/srv" || *c.Tool["file_read"].RequiresConfirmation != true || *c.Tool["file_read"].TimeoutSeconds != 12 {
		t.Fatalf("tool settings: %+v", c.Tool["file_read"])
	}
	if got := c.PriceFor("qwen3:8b").Cost(1_000_000, 1_000_000); got != 2.0 {
		t.Fatalf("price for a tag of a priced model: %v", got)
	}
	if c.PriceFor("llama3").Cost(1000, 1000) != 0 {
		t.Fatal("unpriced model must be free")
	}
	o, _ := c.EngineOptions()
	if o.NumCtx != 8192 || *o.Temperature != 0.2 || o.KeepAlive.Minutes() != 10 {
		t.Fatalf("options: %+v", o)
	}

	t.Setenv("JARVIS_MODEL", "env-model")
	t.Setenv("JARVIS_TOOLS", "think, calculator")
	c, _ = Load(Flags{ConfigPath: p})
	if c.Model != "env-model" || c.Source("model") != "env JARVIS_MODEL" || strings.Join(c.Tools, ",") != "think,calculator" {
		t.Fatalf("env level: model %q from %s, tools %v", c.Model, c.Source("model"), c.Tools)
	}

	none := "none"
	c, _ = Load(Flags{ConfigPath: p, Model: "flag-model", Agent: "simple", Tools: &none})
	if c.Model != "flag-model" || c.Source("model") != "flag --model" || c.Agent != "simple" || len(c.Tools) != 0 || c.Source("tools") != "flag --tools" {
		t.Fatalf("flag level: %+v", c)
	}
}

func TestDefaultsWithoutFile(t *testing.T) {
	clearEnv(t)
	c, err := Load(Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Path() != "" || c.Agent != DefaultAgent || c.MaxTurns != DefaultMaxTurns || strings.Join(c.Tools, ",") != "calculator,think" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.HostOrDefault() != "http://127.0.0.1:11434" {
		t.Fatal(c.HostOrDefault())
	}
}

func TestFileErrorsNameFileLineAndKey(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		body string
		want []string
	}{
		{"model = \"a\"\nagent = \n", []string{":2", "config "}},
		{"model = \"a\"\nmax_turns = \"ten\"\n", []string{":2", "max_turns"}},
		{"model = \"a\"\n\nmodle = \"typo\"\n", []string{":3", `key "modle"`, "unknown setting"}},
		{"[options]\nnum_ctx = 4096\nthinking = true\n", []string{":3", `"options.thinking"`}},
	}
	for _, c := range cases {
		p := writeConfig(t, c.body)
		_, err := Load(Flags{ConfigPath: p})
		if err == nil {
			t.Errorf("%q: no error", c.body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.body, err, w)
			}
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func TestInvalidValues(t *testing.T) {
	clearEnv(t)
	for body, want := range map[string]string{
		`agent = "smart"`:                `unknown agent "smart"`,
		`max_turns = 0`:                  `key "max_turns": must be at least 1`,
		"[options]\nkeep_alive = \"5\"":  "not a duration",
		"[options]\nthink = \"maybe\"":   `key "options.think": "maybe" is not`,
		"[scheduler]\ntimeout = \"10\"":  "scheduler.timeout",
		"[scheduler]\ntimeout = \"1ms\"": "at least 1s",
	} {
		_, err := Load(Flags{ConfigPath: writeConfig(t, body)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
	}
}

func TestSchedulerTimeout(t *testing.T) {
	clearEnv(t)
	c, err := Load(Flags{ConfigPath: writeConfig(t, "[scheduler]\ntimeout = \"25m\"\n")})
	if err != nil || c.TaskTimeout() != 25*time.Minute {
		t.Fatalf("timeout %v, %v", c.TaskTimeout(), err)
	}
	if c, _ := Load(Flags{ConfigPath: writeConfig(t, "")}); c.TaskTimeout() != 0 {
		t.Errorf("unset timeout is %v, want 0 (the scheduler's default)", c.TaskTimeout())
	}
}

func TestExplicitMissingFileIsAnError(t *testing.T) {
	clearEnv(t)
	if _, err := Load(Flags{ConfigPath: "/nope/config.toml"}); err == nil || !strings.Contains(err.Error(), "/nope/config.toml") {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("JARVIS_CONFIG", "/nope/env.toml")
	if _, err := Load(Flags{}); err == nil || !strings.Contains(err.Error(), "/nope/env.toml") {
		t.Fatalf("err = %v", err)
	}
}

func TestSettingsListsSources(t *testing.T) {
	clearEnv(t)
	p := writeConfig(t, "model = \"m\"\n[tool.code_interpreter]\nconfirm = false\n")
	c, _ := Load(Flags{ConfigPath: p, Host: "http://h:1"})
	got := map[string]Setting{}
	for _, s := range c.Settings() {
		got[s.Key] = s
	}
	if got["model"].Source != "config "+p+":1" || got["host"].Source != "flag --host" || got["host"].Value != "http://h:1" {
		t.Fatalf("settings: %+v", got)
	}
	if got["tool.code_interpreter.confirm"].Value != "false" {
		t.Fatalf("tool override missing: %+v", got)
	}
}

func TestWebAndChannelSectionsDecode(t *testing.T) {
	clearEnv(t)
	p := writeConfig(t, `
[web.http]
allow_hosts = ["localhost"]
max_bytes = 2048

[web.search]
backend = "searxng"
searxng_url = "http://localhost:8888"

[channels.team]
type = "slack"
url = "https://hooks.slack.com/services/T/B/X"

[channels.ops]
type = "telegram"
token = "123:abc"
chat_id = -100123
`)
	c, err := Load(Flags{ConfigPath: p})
	if err != nil {
		t.Fatal(err)
	}
	if c.Web.HTTP.MaxBytes != 2048 || c.Web.Search.Backend != "searxng" || len(c.Web.HTTP.AllowHosts) != 1 {
		t.Fatalf("web = %+v", c.Web)
	}
	if c.Channels["team"].Type != "slack" || c.Channels["ops"].Token != "123:abc" {
		t.Fatalf("channels = %+v", c.Channels)
	}
}

func TestMisspelledToolSectionIsAnError(t *testing.T) {
	clearEnv(t)
	p := writeConfig(t, "model = \"m\"\n\n[tool.fileread]\nallowed_dirs = [\"/srv\"]\n")
	_, err := Load(Flags{ConfigPath: p})
	if err == nil || !strings.Contains(err.Error(), p+":3") || !strings.Contains(err.Error(), `"tool.fileread"`) || !strings.Contains(err.Error(), `did you mean "file_read"?`) {
		t.Fatalf("err = %v", err)
	}
	// An MCP tool's name is known once its server runs: only the server
	// is checked.
	p = writeConfig(t, "[tool.github__create_issue]\nconfirm = true\n\n[[mcp.servers]]\nname = \"github\"\ncommand = \"gh-mcp\"\n")
	if _, err := Load(Flags{ConfigPath: p}); err != nil {
		t.Fatal(err)
	}
	p = writeConfig(t, "[tool.gitlab__create_issue]\nconfirm = true\n\n[[mcp.servers]]\nname = \"github\"\ncommand = \"gh-mcp\"\n")
	if _, err := Load(Flags{ConfigPath: p}); err == nil || !strings.Contains(err.Error(), `no MCP server named "gitlab"; configured servers: github`) {
		t.Fatalf("unconfigured server: %v", err)
	}
}
