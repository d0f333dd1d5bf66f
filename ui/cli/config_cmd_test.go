package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// badConfig has five mistakes, on lines 2, 3, 4, 7 and 10.
const badConfig = `model = "qwen3:8b"
theme = "purple"
host = "not a url"
tools = ["calculator", "nosuch"]

[tool.calculator]
timeout = -5

[options]
thinking = true
`

var badConfigProblems = []struct {
	line int
	key  string
}{{2, "theme"}, {3, "host"}, {4, "tools"}, {7, "tool.calculator.timeout"}, {10, "options.thinking"}}

func writeCLIConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantEveryProblem checks that text lists every problem of badConfig
// with its file and line.
func wantEveryProblem(t *testing.T, what, text, path string) {
	t.Helper()
	for _, p := range badConfigProblems {
		loc := path + ":" + strconv.Itoa(p.line) + `: key "` + p.key + `"`
		if !strings.Contains(text, loc) {
			t.Errorf("%s does not list %s:\n%s", what, loc, text)
		}
	}
}

// A bad configuration stops every command before it does anything, with
// every problem and the file, and exit 2; the workbench too, and a
// command that needs no server or database.
func TestBadConfigStopsEveryCommand(t *testing.T) {
	cfg := writeCLIConfig(t, badConfig)
	for _, args := range [][]string{
		{"ask", "hi"},
		{"tools", "list"},
		{"tools", "run", "calculator", `{"expression":"1+1"}`},
		{}, // the workbench
		{"models"},
		{"scheduler", "list"},
		{"memory", "search", "x"},
		{"mcp", "list"},
		{"audit"},
		{"approvals", "list"},
		{"eval", "history"},
	} {
		out, errOut, code := runCLI(t, "", append(args, "--config", cfg)...)
		if code != ExitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
		if !strings.Contains(errOut, "the configuration has 5 problems") {
			t.Errorf("%v: %s", args, errOut)
		}
		wantEveryProblem(t, strings.Join(args, " "), errOut, cfg)
	}
	// version needs no configuration.
	if out, _, code := runCLI(t, "", "version", "--config", cfg); code != ExitOK || out == "" {
		t.Errorf("version: exit %d", code)
	}
}

// One mistake: the message names the file and line, and what to do.
func TestUnknownToolInConfigNamesTheFile(t *testing.T) {
	cfg := writeCLIConfig(t, "model = \"m\"\ntools = [\"nosuch\"]\n")
	_, errOut, code := runCLI(t, "", "ask", "--config", cfg, "hi")
	if code != ExitUsage || !strings.Contains(errOut, "config "+cfg+`:2: key "tools": unknown tool "nosuch"; the tools are: apply_patch, calculator,`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// A flag's mistake names the flag.
	_, errOut, code = runCLI(t, "", "ask", "--tools", "calculater", "hi")
	if code != ExitUsage || !strings.Contains(errOut, `flag --tools: key "tools": unknown tool "calculater" (did you mean "calculator"?)`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestDoctorListsEveryConfigProblem(t *testing.T) {
	cfg := writeCLIConfig(t, badConfig)
	out, _, code := runCLI(t, "", "doctor", "--config", cfg)
	if code != ExitFailed {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
	if n := strings.Count(out, "✗ config"); n != len(badConfigProblems) {
		t.Errorf("%d ✗ config lines, want %d:\n%s", n, len(badConfigProblems), out)
	}
	wantEveryProblem(t, "doctor", out, cfg)
	for _, fix := range []string{
		"fix: choose one of: auto, dark, light",
		"fix: write the Ollama server's address",
		"fix: the tools are: apply_patch, calculator",
		"fix: leave it out to keep the tool's own timeout",
		"fix: the keys in [options] are: num_ctx",
	} {
		if !strings.Contains(out, fix) {
			t.Errorf("doctor lacks %q:\n%s", fix, out)
		}
	}
	// A good file is one ✓ line.
	good := writeCLIConfig(t, "model = \"m\"\n")
	out, _, _ = runCLI(t, "", "doctor", "--config", good, "--host", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "j.db"))
	if !strings.Contains(out, "✓ config    "+good) {
		t.Errorf("doctor with a good file:\n%s", out)
	}
}

func TestConfigShowListsSettingsThenProblems(t *testing.T) {
	cfg := writeCLIConfig(t, badConfig)
	out, errOut, code := runCLI(t, "", "config", "show", "--config", cfg)
	if code != ExitUsage || !strings.Contains(errOut, "the configuration has 5 problems (listed above)") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	settings, problems, ok := strings.Cut(out, "\n5 problems:\n")
	if !ok {
		t.Fatalf("no list of problems after the settings:\n%s", out)
	}
	for _, s := range []string{"theme", "purple", "config " + cfg + ":2", "tool.calculator.timeout", "mcp.servers", "(none)", "code.docker.image", "web.http.allow_hosts", "scheduler.timeout", "images.max_bytes"} {
		if !strings.Contains(settings, s) {
			t.Errorf("settings lack %q:\n%s", s, settings)
		}
	}
	wantEveryProblem(t, "config show", problems, cfg)

	out, _, code = runCLI(t, "", "config", "show", "--json", "--config", cfg)
	var doc struct {
		File     string `json:"file"`
		Settings []struct{ Key, Value, Source string }
		Problems []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Key     string `json:"key"`
			Problem string `json:"problem"`
			Fix     string `json:"fix"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitUsage {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if doc.File != cfg || len(doc.Problems) != len(badConfigProblems) || len(doc.Settings) < 50 {
		t.Fatalf("json: file %q, %d problems, %d settings", doc.File, len(doc.Problems), len(doc.Settings))
	}
	for i, p := range badConfigProblems {
		if got := doc.Problems[i]; got.File != cfg || got.Line != p.line || got.Key != p.key || got.Problem == "" {
			t.Errorf("json problem %d = %+v", i, got)
		}
	}
	// Without problems: exit 0, and an empty list in JSON.
	out, _, code = runCLI(t, "", "config", "show", "--json", "--config", writeCLIConfig(t, "model = \"m\"\n"))
	if code != ExitOK || !strings.Contains(out, `"problems": []`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// No secret of the file or the environment reaches config show, in text
// or JSON, with or without problems.
func TestConfigShowPrintsNoSecret(t *testing.T) {
	secrets := []string{"sk-file-key-0001", "sk-endpoint-key-0002", "brave-file-0003", "slack-path-secret-0004",
		"123456:tg-token-secret-0005", "ntfy-topic-secret-0006", "mcp-env-secret-0007", "mcp-header-secret-0008",
		"mcp-url-secret-0009", "env-openai-0010", "env-tavily-0011", "host-password-0012"}
	t.Setenv("OPENAI_API_KEY", "env-openai-0010")
	t.Setenv("TAVILY_API_KEY", "env-tavily-0011")
	cfg := writeCLIConfig(t, `engine = "openai"
api_key = "sk-file-key-0001"
theme = "purple"

[[endpoints]]
name = "lab"
engine = "openai"
host = "http://user:host-password-0012@gpu box:8000/v1"
api_key = "sk-endpoint-key-0002"

[web.search]
brave_api_key = "brave-file-0003"

[channels.team]
type = "slack"
url = "https://hooks.slack.com/services/T1/B1/slack-path-secret-0004"

[channels.phone]
type = "telegram"
token = "123456:tg-token-secret-0005"

[channels.push]
type = "ntfy"
topic = "ntfy-topic-secret-0006"

[[mcp.servers]]
name = "gh"
command = "gh-mcp"
env = { TOKEN = "mcp-env-secret-0007" }

[[mcp.servers]]
name = "remote"
url = "https://mcp.example.com/mcp?key=mcp-url-secret-0009"
headers = { Authorization = "Bearer mcp-header-secret-0008" }
`)
	var all strings.Builder
	for _, args := range [][]string{{"config", "show"}, {"config", "show", "--json"}, {"doctor"}} {
		out, errOut, code := runCLI(t, "", append(args, "--config", cfg)...)
		if code == ExitOK {
			t.Errorf("%v: the file's problems (theme, the endpoint's host) were not reported", args)
		}
		all.WriteString(out + errOut)
	}
	for _, s := range secrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("%s was printed:\n%s", s, all.String())
		}
	}
	for _, s := range []string{"endpoints[0].host", "<slack webhook>", "(set in the file; hidden)", "env TAVILY_API_KEY"} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("the output lacks %q:\n%s", s, all.String())
		}
	}
}

// The workbench, started on a terminal, stops before it draws anything:
// with every problem of the file, or with the flag that is wrong.
func TestWorkbenchOnATerminalStopsOnABadConfig(t *testing.T) {
	cfg := writeCLIConfig(t, badConfig)
	good := writeCLIConfig(t, "model = \"m\"\n")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--config", cfg}, []string{"the configuration has 5 problems", cfg + ":2: key \"theme\"", cfg + ":10: key \"options.thinking\""}},
		{[]string{"--config", good, "--theme", "drak"}, []string{`flag --theme: key "theme": "drak" is not a theme (did you mean "dark"?)`}},
	} {
		cmd := jarvisCommand(t, tc.args...)
		ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 160, Rows: 30})
		if err != nil {
			t.Skipf("no pseudo-terminal available: %v", err)
		}
		var raw bytes.Buffer
		read := make(chan struct{})
		go func() { io.Copy(&raw, ptmx); close(read) }() // ends with EIO once jarvis has exited
		err = cmd.Wait()
		<-read
		ptmx.Close()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != ExitUsage {
			t.Fatalf("%v: %v\n%s", tc.args, err, raw.String())
		}
		text := strings.ReplaceAll(raw.String(), "\r\n", "\n")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: the terminal lacks %q:\n%s", tc.args, w, text)
			}
		}
		if strings.Contains(text, "\x1b[?1049h") {
			t.Errorf("%v: the workbench took over the screen before stopping", tc.args)
		}
	}
}
