package mcp

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// exampleTOML is the example of the MCP section in the README.
const exampleTOML = `
[[mcp.servers]]
name = "files"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "~/projects"]
env = { NODE_OPTIONS = "--max-old-space-size=512" }
cwd = "~"

[[mcp.servers]]
name = "github"
url = "https://api.example.com/mcp"
headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
trusted = true
timeout = 120

[[mcp.servers]]
name = "scratch"
command = "/usr/local/bin/scratch-mcp"
enabled = false
`

func TestDecodeTOML(t *testing.T) {
	var file struct {
		MCP Config `toml:"mcp"`
	}
	md, err := toml.Decode(exampleTOML, &file)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Errorf("keys not decoded: %v", und)
	}
	if err := file.MCP.Validate(); err != nil {
		t.Fatal(err)
	}
	s := file.MCP.Servers
	if len(s) != 3 {
		t.Fatalf("servers: %+v", s)
	}
	files, github, scratch := s[0], s[1], s[2]
	if files.Transport() != TransportStdio || files.Args[2] != "~/projects" || files.Env["NODE_OPTIONS"] == "" || files.Cwd != "~" {
		t.Errorf("files: %+v", files)
	}
	if !files.IsEnabled() || files.Trusted || files.TimeoutSeconds() != 600 {
		t.Errorf("files defaults: enabled %v trusted %v timeout %v", files.IsEnabled(), files.Trusted, files.TimeoutSeconds())
	}
	if github.Transport() != TransportHTTP || !github.Trusted || github.TimeoutSeconds() != 120 || github.Headers["Authorization"] != "Bearer ${GITHUB_TOKEN}" {
		t.Errorf("github: %+v", github)
	}
	if scratch.IsEnabled() {
		t.Errorf("scratch should be disabled")
	}
	if got := files.Target(); got != "npx -y @modelcontextprotocol/server-filesystem ~/projects" {
		t.Errorf("target %q", got)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		sc   ServerConfig
		want string // "" means valid
	}{
		{"stdio", ServerConfig{Name: "a", Command: "x"}, ""},
		{"http", ServerConfig{Name: "a-b_1", URL: "http://127.0.0.1:8080/mcp"}, ""},
		{"no name", ServerConfig{Command: "x"},
			"mcp.servers[0]: name is required (it prefixes the server's tool names, as NAME__TOOL)"},
		{"bad name", ServerConfig{Name: "my server", Command: "x"},
			`mcp.servers[0] ("my server"): name "my server" may contain only letters, digits, '_' and '-' (it becomes part of tool names)`},
		{"separator in name", ServerConfig{Name: "a__b", Command: "x"},
			`mcp.servers[0] ("a__b"): name "a__b" must not contain "__" or end with '_': "__" separates server and tool in tool names`},
		{"long name", ServerConfig{Name: strings.Repeat("n", 33), Command: "x"},
			"is 33 characters long; use at most 32 so tool names stay within 64"},
		{"neither", ServerConfig{Name: "a"},
			`mcp.servers[0] ("a"): set command (a stdio server) or url (a streamable HTTP server)`},
		{"both", ServerConfig{Name: "a", Command: "x", URL: "http://h/"},
			`mcp.servers[0] ("a"): set either command (a stdio server) or url (a streamable HTTP server), not both`},
		{"relative url", ServerConfig{Name: "a", URL: "localhost:8080"},
			`url "localhost:8080" must be an absolute http:// or https:// URL`},
		{"stdio keys on http", ServerConfig{Name: "a", URL: "http://h/", Args: []string{"x"}},
			"args, env and cwd apply to stdio servers (command) only"},
		{"headers on stdio", ServerConfig{Name: "a", Command: "x", Headers: map[string]string{"A": "b"}},
			"headers apply to HTTP servers (url) only"},
		{"negative timeout", ServerConfig{Name: "a", Command: "x", Timeout: -1},
			"timeout must be a positive number of seconds, got -1 (leave it out for 600)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Config{Servers: []ServerConfig{c.sc}}.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := Config{Servers: []ServerConfig{
		{Name: "a", Command: "x"},
		{Name: "a", URL: "http://h/"},
		{Name: "", Command: ""},
	}}
	err := cfg.Validate()
	want := `mcp.servers[1] ("a"): name "a" is already used by mcp.servers[0]; server names must be unique
mcp.servers[2]: name is required (it prefixes the server's tool names, as NAME__TOOL)
mcp.servers[2]: set command (a stdio server) or url (a streamable HTTP server)`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
	if _, err := New(cfg, Options{}); err == nil || !strings.HasPrefix(err.Error(), "invalid MCP configuration:\n") {
		t.Errorf("New: %v", err)
	}
}

func TestConfigServerLookup(t *testing.T) {
	cfg := Config{Servers: []ServerConfig{{Name: "files", Command: "x"}, {Name: "web", URL: "http://h/"}}}
	if s, err := cfg.Server("web"); err != nil || s.URL != "http://h/" {
		t.Errorf("web: %+v %v", s, err)
	}
	if _, err := cfg.Server("nope"); err == nil || err.Error() != `no MCP server named "nope"; configured servers: files, web` {
		t.Errorf("unknown: %v", err)
	}
	if _, err := (Config{}).Server("x"); err == nil || !strings.Contains(err.Error(), "no servers are configured") {
		t.Errorf("empty: %v", err)
	}
}

func TestExpand(t *testing.T) {
	t.Setenv("JARVIS_TEST_A", "alpha")
	if got, err := expand("env X", "pre-${JARVIS_TEST_A}-$HOME-post"); err != nil || got != "pre-alpha-$HOME-post" {
		t.Errorf("expand: %q %v", got, err)
	}
	_, err := expand("env X", "${JARVIS_TEST_UNSET_1}${JARVIS_TEST_UNSET_2}")
	if want := "env X refers to ${JARVIS_TEST_UNSET_1}, ${JARVIS_TEST_UNSET_2}, which is not set in jarvis's environment"; err == nil || err.Error() != want {
		t.Errorf("unset: %v", err)
	}
}

func TestProcessEnvOverrides(t *testing.T) {
	t.Setenv("JARVIS_TEST_SECRET", "s3cret")
	t.Setenv("JARVIS_TEST_OVERRIDE", "old")
	env, err := processEnv(map[string]string{"JARVIS_TEST_OVERRIDE": "new", "TOKEN": "${JARVIS_TEST_SECRET}"})
	if err != nil {
		t.Fatal(err)
	}
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, want := range []string{"\nJARVIS_TEST_OVERRIDE=new\n", "\nTOKEN=s3cret\n"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(joined, "JARVIS_TEST_OVERRIDE=old") {
		t.Error("the overridden value is still there")
	}
}

// Check reports Validate's problems under the key each is about.
func TestCheckNamesTheKey(t *testing.T) {
	cfg := Config{Servers: []ServerConfig{
		{Name: "a", Command: "x", Headers: map[string]string{"A": "b"}},
		{Name: "a", URL: "http://h/", Env: map[string]string{"K": "v"}},
		{Name: "b", URL: "nohost", Timeout: -1},
	}}
	var got []string
	cfg.Check(func(key, problem, fix string) { got = append(got, key) })
	want := "servers[0].headers servers[1].env servers[1].name servers[2].url servers[2].timeout"
	if strings.Join(got, " ") != want {
		t.Fatalf("keys %v, want %s", got, want)
	}
}
