package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/themes"
)

// dozenMistakes has one mistake on each line listed in its want.
const dozenMistakes = `modle = "qwen3"
theme = "purple"
host = "not a url"
tools = ["calculator", "nosuch"]
max_turns = "ten"

[options]
num_ctx = 100
keep_alive = "5"

[tool.calculator]
timeout = -5

[tool.fileread]
confirm = true

[context]
compact_at = 1.5

[scheduler]
timeout = "soon"

[channels.team]
type = "slack"

[[mcp.servers]]
name = "files"
comand = "npx"

[[endpoints]]
name = "lab"
engine = "openai"
host = "http://gpu:8000/v1"

[[endpoints]]
name = "lab"
engine = "ollama"
host = "attic"

[images]
max_bytes = -1
`

func TestADozenMistakesGiveADozenProblems(t *testing.T) {
	clearEnv(t)
	p := writeConfig(t, dozenMistakes)
	want := []struct {
		line      int
		key, text string
	}{
		{1, "modle", `unknown setting (did you mean "model"?)`},
		{2, "theme", `"purple" is not a theme`},
		{3, "host", `"not a url" is not a host name`},
		{4, "tools", `unknown tool "nosuch"`},
		{5, "max_turns", "must be a whole number"},
		{8, "options.num_ctx", "must be between 256"},
		{9, "options.keep_alive", `"5" is not a duration`},
		{12, "tool.calculator.timeout", "must be a positive number of seconds, got -5"},
		{14, "tool.fileread", `unknown tool "fileread" (did you mean "file_read"?)`},
		{18, "context.compact_at", "between 0 and 1, got 1.5"},
		{21, "scheduler.timeout", `"soon" is not a time limit`},
		{23, "channels.team.url", "url (the incoming webhook URL) is missing"},
		{26, "mcp.servers[0].command", "set command (a stdio server) or url"},
		{28, "mcp.servers[0].comand", `unknown setting (did you mean "command"?)`},
		{36, "endpoints[1].name", `the name "lab" is already used by the endpoint at line 30`},
		{41, "images.max_bytes", "must be a size in bytes, got -1"},
	}
	c, problems := Read(Flags{ConfigPath: p, ThemeNames: themes.Names()})
	if len(problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(problems), len(want), problems)
	}
	for i, w := range want {
		got := problems[i]
		if got.Path != p || got.Line != w.line || got.Key != w.key || !strings.Contains(got.Msg, w.text) {
			t.Errorf("problem %d = %+v, want line %d key %q with %q", i, got, w.line, w.key, w.text)
		}
	}
	// The values after a mistake are read all the same.
	if c.Theme != "purple" || c.Images.MaxBytes != -1 || len(c.Endpoints) != 2 {
		t.Errorf("the values after the first mistake were not read: %+v", c)
	}

	_, err := Load(Flags{ConfigPath: p, ThemeNames: themes.Names()})
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != len(want) {
		t.Fatalf("Load: %v", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want)+1 || !strings.Contains(lines[0], fmt.Sprintf("%d problems", len(want))) {
		t.Fatalf("the message is not one problem a line:\n%s", err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i+1], fmt.Sprintf("  config %s:%d: key %q: ", p, w.line, w.key)) {
			t.Errorf("line %d of the message: %q", i+1, lines[i+1])
		}
	}
}

// Values from the environment and flags are checked too, and located
// where they came from.
func TestProblemsFromTheEnvironmentAndFlags(t *testing.T) {
	clearEnv(t)
	t.Setenv("JARVIS_THEME", "drak")
	t.Setenv("JARVIS_AGENT", "smart")
	tools := "calculator,thnik"
	_, err := Load(Flags{ConfigPath: writeConfig(t, "max_turns = 0\n"), Tools: &tools, NumCtx: 10, Host: "http://h:99999", ThemeNames: themes.Names()})
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	got := map[string]Problem{}
	for _, p := range ps {
		got[p.Key] = p
	}
	for key, src := range map[string]string{
		"theme": "env JARVIS_THEME", "agent": "env JARVIS_AGENT", "tools": "flag --tools",
		"options.num_ctx": "flag --num-ctx", "host": "flag --host",
	} {
		if p := got[key]; p.Source != src || p.Path != "" || !strings.HasPrefix(p.Error(), src+": ") {
			t.Errorf("%s: %+v, want it located at %s", key, p, src)
		}
	}
	if !strings.Contains(got["theme"].Msg, `"drak" is not a theme (did you mean "dark"?)`) {
		t.Errorf("theme: %+v", got["theme"])
	}
	if !strings.Contains(got["tools"].Msg, `did you mean "think"?`) {
		t.Errorf("tools: %+v", got["tools"])
	}
	if p := got["max_turns"]; p.Line != 1 || p.Path == "" {
		t.Errorf("the file's problem is not located: %+v", p)
	}
	// Those of the file come first, by line.
	if ps[0].Key != "max_turns" {
		t.Errorf("order: %v", ps)
	}
}

// Each section's own rules, one mistake at a time: the key and what the
// problem says.
func TestEverySectionIsChecked(t *testing.T) {
	clearEnv(t)
	os.Unsetenv("NO_SUCH_KEY_VAR")
	cases := []struct {
		body, key, text string
	}{
		{`agent = "smart"`, "agent", `unknown agent "smart"`},
		{`engine = "vllm"`, "engine", `unknown engine "vllm"`},
		{"engine = \"openai\"\nhost = \"ftp://box/v1\"", "host", "scheme must be http or https"},
		{"engine = \"openai\"\napi_key = \"${NO_SUCH_KEY_VAR}\"", "api_key", "NO_SUCH_KEY_VAR is not set"},
		{`tools = ["calculater"]`, "tools", `did you mean "calculator"?`},
		{"tools = [\"gh__issue\"]\n[[mcp.servers]]\nname = \"gh\"\ncommand = \"x\"\nenabled = false", "tools", "disabled (enabled = false)"},
		{"[tool.think]\ntimeout = 0", "tool.think.timeout", "must be a positive number of seconds, got 0"},
		{"[tool.calculator]\nallowed_dirs = [\"/srv\"]", "tool.calculator.allowed_dirs", "calculator does not read allowed_dirs"},
		{"[tool.calculator]\ndescription = \" \"", "tool.calculator.description", "is empty"},
		{"[tool.calculator.parameters]\nexpresion = \"x\"", "tool.calculator.parameters.expresion", `did you mean "expression"?`},
		{"[options]\nnum_predict = -3", "options.num_predict", "-1 (no limit)"},
		{"[options]\ntemperature = -0.5", "options.temperature", "must be 0 or more"},
		{"[options]\nthink = \"maybe\"", "options.think", `"maybe" is not a thinking setting`},
		{"[prices.qwen3]\ninput = -1", "prices.qwen3.input", "0 or more"},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"openai\"\nhost = \"h:1/v1\"\n[endpoints.prices.m]\noutput = -2", "endpoints[0].prices.m.output", "0 or more"},
		{"[web.http]\nmax_bytes = -1", "web.http.max_bytes", "must be a positive number of bytes"},
		{"[web.http]\ntimeout = 200", "web.http.timeout", "larger than max_timeout (120s)"},
		{"[web.http]\nallow_hosts = [\"nas.lan:8080\"]", "web.http.allow_hosts", "not a URL"},
		{"[web.search]\nbackend = \"bing\"", "web.search.backend", `"bing" is not a search backend`},
		{"[web.search]\nsearxng_url = \"localhost:8888\"", "web.search.searxng_url", "is not an http:// or https:// URL"},
		{"[web.search]\ntimeout = -1", "web.search.timeout", "must be a positive number of seconds"},
		{"[channels.phone]\ntype = \"telegram\"\nchat_id = 1", "channels.phone.token", "token (the bot token from @BotFather) is missing"},
		{"[channels.phone]\ntype = \"ntfy\"", "channels.phone.topic", "topic is missing"},
		{"[channels.x]\ntype = \"sms\"", "channels.x.type", `type "sms" is not one of`},
		{"[channels.x]\ntype = \"ntfy\"\ntopic = \"t\"\nmax_length = -1", "channels.x.max_length", "max_length must be positive"},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp.servers]]\nname = \"a\"\ncommand = \"y\"", "mcp.servers[1].name", "already used by mcp.servers[0]"},
		{"[[mcp.servers]]\nname = \"a\"\nurl = \"localhost:1\"", "mcp.servers[0].url", "must be an absolute http:// or https:// URL"},
		{"[code]\ntimeout = -1", "code.timeout", "must be a positive number"},
		{"[code.docker]\ncpus = nan", "code.docker.cpus", "must be a positive number, got NaN"},
		{"[memory]\nchunk_size = 100\nchunk_overlap = 100", "memory.chunk_overlap", "must be smaller than the chunk size"},
		{"[memory]\nchunk_size = 100000", "memory.chunk_size", "too large"},
		{"[memory]\nsemantic_weight = 2", "memory.semantic_weight", "between 0 and 1"},
		{"[memory]\nmax_file_bytes = -3", "memory.max_file_bytes", "between 1 byte"},
		{"[context]\ntool_result_share = -0.1", "context.tool_result_share", "between 0 and 1"},
		{"[scheduler]\ntimeout = \"1ms\"", "scheduler.timeout", "at least 1s"},
		{"[endpoints]\nname = \"x\"", "endpoints", "must be a list of tables"},
		{"[channels.x]\ntype = \"telegram\"\ntoken = \"123456:abcdef\"\nchat_id = true", "channels.x.chat_id", "chat_id must be a number or a string"},
	}
	for _, tc := range cases {
		_, problems := Read(Flags{ConfigPath: writeConfig(t, tc.body+"\n")})
		found := false
		for _, p := range problems {
			found = found || p.Key == tc.key && strings.Contains(p.Msg, tc.text)
		}
		if !found {
			t.Errorf("%q: want %s: %q; got %v", tc.body, tc.key, tc.text, problems)
		}
	}
}

// A configuration that is right has no problems: the example in docs/config.md,
// and an MCP tool of a configured server in tools.
func TestTheDocumentedExampleHasNoProblems(t *testing.T) {
	clearEnv(t)
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)# Configuration\n.*?```toml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no TOML example in docs/config.md")
	}
	if _, problems := Read(Flags{ConfigPath: writeConfig(t, string(m[1]))}); len(problems) > 0 {
		t.Fatalf("the example in docs/config.md:\n%v", problems)
	}
	p := writeConfig(t, "tools = [\"calculator\", \"files__read_file\"]\n[[mcp.servers]]\nname = \"files\"\ncommand = \"npx\"\n")
	if _, err := Load(Flags{ConfigPath: p, ThemeNames: themes.Names()}); err != nil {
		t.Fatal(err)
	}
}

// A file that is not TOML is one problem at its line; nothing of it is
// read, and the rest of the configuration is still checked.
func TestSyntaxErrorIsOneProblem(t *testing.T) {
	clearEnv(t)
	t.Setenv("JARVIS_THEME", "purple")
	p := writeConfig(t, "model = \"m\"\nagent = \n")
	c, problems := Read(Flags{ConfigPath: p, ThemeNames: themes.Names()})
	if len(problems) != 2 || problems[0].Line != 2 || problems[0].Path != p || !strings.Contains(problems[0].Fix, "not valid TOML") {
		t.Fatalf("problems: %v", problems)
	}
	if problems[1].Source != "env JARVIS_THEME" || c.Model != "" {
		t.Fatalf("problems %v, model %q", problems, c.Model)
	}
}

// Settings for the tool of a disabled MCP server wait for it; naming
// that tool in tools is a problem, since no command could give it.
func TestDisabledServerTools(t *testing.T) {
	clearEnv(t)
	servers := "\n[[mcp.servers]]\nname = \"gh\"\ncommand = \"x\"\nenabled = false\n"
	if _, err := Load(Flags{ConfigPath: writeConfig(t, "[tool.gh__issue]\nconfirm = true\n"+servers)}); err != nil {
		t.Fatalf("settings of a disabled server's tool: %v", err)
	}
	if _, err := Load(Flags{ConfigPath: writeConfig(t, "tools = [\"gh__issue\"]\n"+servers)}); err == nil || !strings.Contains(err.Error(), "disabled (enabled = false)") {
		t.Fatalf("a disabled server's tool in tools: %v", err)
	}
}

// Every command reads and checks the configuration before it runs; this
// is what that costs for a file that sets a little of everything.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	p := dir + "/config.toml"
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile("(?s)# Configuration\n.*?```toml\n(.*?)```").FindSubmatch(doc)
	if err := os.WriteFile(p, m[1], 0o600); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := Read(Flags{ConfigPath: p, ThemeNames: themes.Names()}); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// tools may select a server's tools with a pattern, known only once the
// server runs; a pattern is checked for what it can be checked for now.
func TestToolPatterns(t *testing.T) {
	clearEnv(t)
	servers := "\n[[mcp.servers]]\nname = \"fs\"\ncommand = \"x\"\n\n[[mcp.servers]]\nname = \"gh\"\ncommand = \"x\"\nenabled = false\n"
	c, err := Load(Flags{ConfigPath: writeConfig(t, "tools = [\"calculator\", \"fs__*\", \"file_*\"]\n"+servers)})
	if err != nil {
		t.Fatalf("a server's pattern and one of built-in tools: %v", err)
	}
	if want := []string{"calculator", "fs__*", "file_*"}; !slices.Equal(c.Tools, want) {
		t.Errorf("tools = %v, want %v", c.Tools, want)
	}
	for doc, want := range map[string]string{
		"tools = [\"web__*\"]\n" + servers:             `"web__*" selects the tools of an MCP server (SERVER__*), but`,
		"tools = [\"gh__*\"]\n" + servers:              `"gh__*" selects the tools of the MCP server "gh", which is disabled`,
		"tools = [\"fs__[x\"]\n" + servers:             `"fs__[x" is not a valid tool pattern`,
		"tools = [\"zz*\"]\n":                          `no tool matches "zz*"`,
		"[tool.\"fs__*\"]\nconfirm = true\n" + servers: `"fs__*" is a pattern; settings apply to one tool, named in full`,
	} {
		if _, err := Load(Flags{ConfigPath: writeConfig(t, doc)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}
