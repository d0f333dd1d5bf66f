package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// secretsTOML sets every kind of secret the configuration holds; each
// value in secretValues must never be shown.
const secretsTOML = `engine = "openai"
api_key = "sk-top-level-secret-0001"

[[endpoints]]
name = "lab"
engine = "openai"
host = "http://gpu-box:8000/v1"
api_key = "sk-endpoint-secret-0002"

[web.search]
searxng_url = "http://searx-user:searx-password-0003@localhost:8888/?token=searx-query-0004"
brave_api_key = "brave-key-secret-0005"

[channels.team]
type = "slack"
url = "https://hooks.slack.com/services/T0SECRET6/B0SECRET7/slackwebhooksecret0008"

[channels.chat]
type = "discord"
url = "https://discord.com/api/webhooks/123456789012345678/discordwebhooksecret0009"

[channels.phone]
type = "telegram"
token = "123456789:telegram-token-secret-0010"
chat_id = -100123

[channels.hook]
type = "webhook"
url = "https://eo1a2b3c4d5secret.m.pipedream.net/webhook-path-secret-0011"
token = "webhook-bearer-secret-0012"

[channels.push]
type = "ntfy"
topic = "ntfy-topic-secret-0013"
token = "tk_ntfytokensecret0014"

[[mcp.servers]]
name = "github"
command = "gh-mcp"
args = ["--token", "mcp-arg-secret-0015", "--api-key=mcp-arg-secret-0016", "--verbose"]
env = { GITHUB_TOKEN = "mcp-env-secret-0017", FROM_ENV = "${MCP_FROM_ENV}" }

[[mcp.servers]]
name = "remote"
url = "https://mcp.example.com/mcp?key=mcp-url-secret-0018"
headers = { Authorization = "Bearer mcp-header-secret-0019" }
`

var secretValues = []string{
	"sk-top-level-secret-0001", "sk-endpoint-secret-0002", "searx-password-0003", "searx-query-0004",
	"brave-key-secret-0005", "slackwebhooksecret0008", "discordwebhooksecret0009",
	"telegram-token-secret-0010", "eo1a2b3c4d5secret", "webhook-path-secret-0011", "webhook-bearer-secret-0012",
	"ntfy-topic-secret-0013", "tk_ntfytokensecret0014", "mcp-arg-secret-0015", "mcp-arg-secret-0016",
	"mcp-env-secret-0017", "mcp-url-secret-0018", "mcp-header-secret-0019",
	"tavily-env-secret-0020", "mcp-from-env-secret-0021",
}

func TestSettingsShowNoSecret(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAVILY_API_KEY", "tavily-env-secret-0020")
	t.Setenv("MCP_FROM_ENV", "mcp-from-env-secret-0021")
	c, problems := Read(Flags{ConfigPath: writeConfig(t, secretsTOML)})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	settings := c.Settings()
	js, _ := json.Marshal(settings)
	all := fmt.Sprintf("%v\n%s", settings, js)
	for _, s := range secretValues {
		if strings.Contains(all, s) {
			t.Errorf("%s is shown:\n%s", s, all)
		}
	}
	got := map[string]Setting{}
	for _, s := range settings {
		got[s.Key] = s
	}
	// What is shown instead says whether each is set, and where from.
	for key, want := range map[string]string{
		"api_key":                                  "(set in the file; hidden)",
		"endpoints.lab.api_key":                    "(set in the file; hidden)",
		"web.search.brave_api_key":                 "(set in the file; hidden)",
		"web.search.tavily_api_key":                "(set; hidden)",
		"web.search.searxng_url":                   "http://localhost:8888/?…",
		"channels.team.url":                        "<slack webhook>",
		"channels.phone.token":                     "(set in the file; hidden)",
		"channels.phone.chat_id":                   "-100123",
		"channels.push.topic":                      "<ntfy topic>",
		"mcp.servers.github.command":               "gh-mcp",
		"mcp.servers.github.args":                  "--token <redacted> --api-key=<redacted> --verbose",
		"mcp.servers.github.env.FROM_ENV":          "from $MCP_FROM_ENV (set); hidden",
		"mcp.servers.github.env.GITHUB_TOKEN":      "(set in the file; hidden)",
		"mcp.servers.remote.url":                   "https://mcp.example.com/mcp?…",
		"mcp.servers.remote.headers.Authorization": "(set in the file; hidden)",
	} {
		if got[key].Value != want {
			t.Errorf("%s = %q, want %q", key, got[key].Value, want)
		}
	}
	if s := got["web.search.tavily_api_key"]; s.Source != "env TAVILY_API_KEY" {
		t.Errorf("tavily key from %q", s.Source)
	}
}

// Every section appears, every value with its source: the default, the
// file and line, the environment, a flag.
func TestSettingsListEverySectionWithSources(t *testing.T) {
	clearEnv(t)
	t.Setenv("JARVIS_AGENT", "react")
	p := writeConfig(t, `model = "m"

[options]
num_ctx = 8192

[prices.qwen3]
input = 0.5

[tool.calculator]
confirm = true
timeout = 5
description = "Exact arithmetic."

[tool.calculator.parameters]
expression = "A Python expression."

[tool.file_read]
allowed_dirs = ["~/notes"]

[tool.think]

[code]
memory_mb = 256

[code.docker]
cpus = 2.5

[memory]
embed_model = "nomic-embed-text"

[context]
compact_at = 0.9

[images]
max_bytes = 1000

[scheduler]
timeout = "5m"

[web.http]
allow_hosts = ["nas.lan"]

[channels.push]
type = "ntfy"
topic = "abcdefgh"

[[mcp.servers]]
name = "files"
command = "npx"

[[endpoints]]
name = "lab"
engine = "ollama"
host = "lab-box"
`)
	c, problems := Read(Flags{ConfigPath: p, Theme: "dark"})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	got := map[string]Setting{}
	for _, s := range c.Settings() {
		got[s.Key] = s
	}
	for key, want := range map[string]Setting{
		"model":                                 {Value: "m", Source: "config " + p + ":1"},
		"agent":                                 {Value: "react", Source: "env JARVIS_AGENT"},
		"theme":                                 {Value: "dark", Source: "flag --theme"},
		"max_turns":                             {Value: "10", Source: "default"},
		"options.num_ctx":                       {Value: "8192", Source: "config " + p + ":4"},
		"prices.qwen3":                          {Value: "$0.5 in / $0 out per million tokens", Source: "config " + p + ":6"},
		"tool.calculator.confirm":               {Value: "true", Source: "config " + p + ":10"},
		"tool.calculator.timeout":               {Value: "5", Source: "config " + p + ":11"},
		"tool.calculator.description":           {Value: "Exact arithmetic.", Source: "config " + p + ":12"},
		"tool.calculator.parameters.expression": {Value: "A Python expression.", Source: "config " + p + ":15"},
		"tool.file_read.allowed_dirs":           {Value: "~/notes", Source: "config " + p + ":18"},
		"tool.think":                            {Value: "(nothing set)", Source: "config " + p + ":20"},
		"code.memory_mb":                        {Value: "256", Source: "config " + p + ":23"},
		"code.timeout":                          {Value: "30", Source: "default"},
		"code.docker.cpus":                      {Value: "2.5", Source: "config " + p + ":26"},
		"code.docker.image":                     {Value: "python:3.12-slim", Source: "default"},
		"memory.embed_model":                    {Value: "nomic-embed-text", Source: "config " + p + ":29"},
		"memory.chunk_size":                     {Value: "512", Source: "default"},
		"context.compact_at":                    {Value: "0.9", Source: "config " + p + ":32"},
		"images.max_bytes":                      {Value: "1000", Source: "config " + p + ":35"},
		"scheduler.timeout":                     {Value: "5m", Source: "config " + p + ":38"},
		"web.http.allow_hosts":                  {Value: "nas.lan", Source: "config " + p + ":41"},
		"web.http.timeout":                      {Value: "30", Source: "default"},
		"web.search.backend":                    {Value: "(the first configured of searxng, brave, tavily)", Source: "default"},
		"channels.push.type":                    {Value: "ntfy", Source: "config " + p + ":44"},
		"channels.push.topic":                   {Value: "<ntfy topic>", Source: "config " + p + ":45"},
		"mcp.servers.files.command":             {Value: "npx", Source: "config " + p + ":49"},
		"endpoints.lab.engine":                  {Value: "ollama", Source: "config " + p + ":53"},
		"endpoints.lab.host":                    {Value: "lab-box", Source: "config " + p + ":54"},
	} {
		if s := got[key]; s.Value != want.Value || s.Source != want.Source {
			t.Errorf("%s = %+v, want %+v", key, s, want)
		}
	}
}

// Every field of every section that is not a table of entries is listed
// even when nothing sets it, so a person sees all there is to set.
func TestSettingsListEveryField(t *testing.T) {
	clearEnv(t)
	c, _ := Read(Flags{})
	shown := map[string]bool{}
	for _, s := range c.Settings() {
		shown[s.Key] = true
	}
	var walk func(t reflect.Type, prefix string)
	walk = func(rt reflect.Type, prefix string) {
		for i := 0; i < rt.NumField(); i++ {
			name, ok := tomlName(rt.Field(i))
			if !ok {
				continue
			}
			key, ft := joinPath(prefix, name), rt.Field(i).Type
			if ft.Kind() == reflect.Struct && ft != secretType {
				walk(ft, key)
				continue
			}
			if !shown[key] {
				t.Errorf("%s is not shown", key)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
}
