package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/tools"
)

// runCLI runs jarvis with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	code := run(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return out.String(), errb.String(), code
}

func TestToolsRunSpecExamples(t *testing.T) {
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"tools", "run", "calculator", `{"expression":"sqrt(144) + 3**2"}`}, "21.0\n"},
		{[]string{"tools", "run", "calculator", `{"expression":"2+2"}`}, "4\n"},
		{[]string{"tools", "run", "think", `{"thought":"Let me break this problem into steps..."}`}, "Let me break this problem into steps...\n"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, "", c.args...)
		if code != ExitOK || out != c.out {
			t.Errorf("%v: code %d out %q err %q", c.args, code, out, errOut)
		}
		if !strings.Contains(errOut, "→ "+c.args[2]) || !strings.Contains(errOut, "✓ "+c.args[2]) {
			t.Errorf("%v: tool events missing from stderr: %q", c.args, errOut)
		}
	}
}

func TestToolsRunFailuresExitOne(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"tools", "run", "calculator", `{"expression":`}, "Invalid arguments JSON:"},
		{[]string{"tools", "run", "calculator", `{}`}, "Invalid arguments: missing required parameter 'expression'."},
		{[]string{"tools", "run", "calculator", `{"expression":"1/0"}`}, "Error: division by zero"},
		{[]string{"tools", "run", "calculator", `{"expression":"__import__('os')"}`}, "Error: Unknown function: __import__"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, "", c.args...)
		if code != ExitFailed || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: code %d out %q err %q, want exit 1 and %q", c.args, code, out, errOut, c.msg)
		}
	}
}

func TestToolsRunUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"tools", "run"},
		{"tools", "run", "calculator", "{}", "extra"},
		{"tools", "run", "calculator", "--bogus"},
		{"tools", "list", "extra"},
		{"tools", "run", "nope", `{}`},
		{"nosuchcommand"},
	} {
		_, errOut, code := runCLI(t, "", args...)
		if code != ExitUsage || errOut == "" {
			t.Errorf("%v: code %d err %q, want exit 2 with a message", args, code, errOut)
		}
	}
}

func TestToolsRunJSONPrintsWholeResult(t *testing.T) {
	out, _, code := runCLI(t, "", "tools", "run", "calculator", `{"expression":"2+2"}`, "--json")
	if code != ExitOK {
		t.Fatalf("code %d", code)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"tool_name", "content", "success", "usage", "cost_usd", "latency_seconds", "metadata"} {
		if _, ok := r[key]; !ok {
			t.Errorf("result JSON lacks %q: %s", key, out)
		}
	}
	if r["content"] != "4" || r["success"] != true {
		t.Errorf("result = %v", r)
	}
	// A failed result is still printed whole, and still exits 1.
	out, _, code = runCLI(t, "", "tools", "run", "calculator", `{"expression":"1/0"}`, "--json")
	if code != ExitFailed || !strings.Contains(out, `"success": false`) {
		t.Errorf("failed --json: code %d out %s", code, out)
	}
}

func TestToolsDescribePrintsExactFormat(t *testing.T) {
	out, _, code := runCLI(t, "", "tools", "describe", "calculator,think")
	if code != ExitOK {
		t.Fatalf("code %d", code)
	}
	if !strings.HasPrefix(out, "### calculator\nEvaluate a mathematical expression safely.\nCategory: math\nParameters:\n  - expression (string, required): ") {
		t.Errorf("calculator block:\n%s", out)
	}
	if !strings.Contains(out, "\n\n### think\n") || !strings.Contains(out, "Category: reasoning\nParameters:\n  - thought (string, required): The reasoning or thought process\n") {
		t.Errorf("think block:\n%s", out)
	}
	// Separate arguments mean the same as a comma list; --no-category drops the lines.
	out2, _, _ := runCLI(t, "", "tools", "describe", "calculator", "think", "--no-category")
	if strings.Contains(out2, "Category:") || !strings.Contains(out2, "### think") {
		t.Errorf("--no-category:\n%s", out2)
	}
	_, errOut, code := runCLI(t, "", "tools", "describe", "calculater")
	if code != ExitUsage || !strings.Contains(errOut, `did you mean "calculator"`) {
		t.Errorf("unknown name: code %d err %q", code, errOut)
	}
}

func TestToolsListAndOpenAI(t *testing.T) {
	out, _, code := runCLI(t, "", "tools", "list")
	if code != ExitOK || !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "calculator") || !strings.Contains(out, "file_read") {
		t.Fatalf("list: code %d\n%s", code, out)
	}
	// A tool that asks only for some arguments must not be listed as
	// never asking.
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 3 && fields[0] == "file_read" && (fields[2] != "per" || fields[3] != "call") {
			t.Errorf("file_read confirm column: %q", line)
		}
		if len(fields) > 2 && fields[0] == "calculator" && fields[2] != "no" {
			t.Errorf("calculator confirm column: %q", line)
		}
	}
	out, _, _ = runCLI(t, "", "tools", "list", "--json")
	var specs []map[string]any
	if err := json.Unmarshal([]byte(out), &specs); err != nil || len(specs) < 3 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if _, ok := specs[0]["requires_confirmation"]; !ok {
		t.Errorf("spec JSON lacks requires_confirmation: %v", specs[0])
	}
	out, _, _ = runCLI(t, "", "tools", "openai", "calculator")
	var defs []map[string]any
	if err := json.Unmarshal([]byte(out), &defs); err != nil || len(defs) != 1 || defs[0]["type"] != "function" {
		t.Fatalf("openai: %v\n%s", err, out)
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := runCLI(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(out, "jarvis ") {
		t.Errorf("version: %d %q", code, out)
	}
	for _, args := range [][]string{{"--help"}, {"tools", "--help"}, {"tools", "run", "--help"}, {"tools", "describe", "-h"}} {
		out, _, code := runCLI(t, "", args...)
		if code != ExitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}

func TestGlobalFlagsBeforeOrAfterCommand(t *testing.T) {
	for _, args := range [][]string{
		{"--host", "http://127.0.0.1:1", "tools", "list"},
		{"tools", "list", "--host", "http://127.0.0.1:1", "--model", "m", "--db", "x.db", "--config", "none.toml"},
	} {
		if _, errOut, code := runCLI(t, "", args...); code != ExitOK && !strings.Contains(errOut, "config") {
			t.Errorf("%v: code %d err %q", args, code, errOut)
		}
	}
}

func TestConfirmationNeededToolsRefusedWithoutTerminal(t *testing.T) {
	for _, name := range []string{"code_interpreter", "http_request", "channel_send", "schedule_task"} {
		_, errOut, code := runCLI(t, "", "tools", "run", name, `{}`)
		if code != ExitFailed {
			t.Errorf("%s: exit %d, want 1; stderr %q", name, code, errOut)
		}
	}
	_, errOut, code := runCLI(t, "", "tools", "run", "code_interpreter", `{"code":"print(6*7)"}`)
	if code != ExitFailed || !strings.Contains(errOut, "requires confirmation but no confirmation callback is available") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("code_interpreter without a terminal: exit %d err %q", code, errOut)
	}
}

func TestYesApprovesConfirmationTools(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	out, errOut, code := runCLI(t, "", "tools", "run", "code_interpreter", `{"code":"print(6*7)"}`, "--yes")
	if code != ExitOK || !strings.Contains(out, "42") {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
}

func TestPromptConfirmerAnswers(t *testing.T) {
	out, in := newAnswering("a", "y", "nope")
	p := newPromptConfirmer(in, out)
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "code_interpreter", Description: "Runs code."}, Arguments: tools.Args{"code": "print(1)"}}
	for _, want := range []tools.Decision{tools.AllowSession, tools.AllowOnce, tools.Deny} {
		if d, err := p.Confirm(context.Background(), req); d != want || err != nil {
			t.Fatalf("decision %v %v, want %v", d, err, want)
		}
	}
	// A cancelled question returns at once and leaves the reader for the next.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := p.Confirm(ctx, req); d != tools.Deny || err == nil {
		t.Fatalf("cancelled: %v %v", d, err)
	}
	out.answers = []string{"y"}
	if d, _ := p.Confirm(context.Background(), req); d != tools.AllowOnce {
		t.Fatalf("after a cancel: %v", d)
	}
	out.w.Close()
	if d, _ := p.Confirm(context.Background(), req); d != tools.Deny {
		t.Fatalf("at end of input: %v", d)
	}
	if !strings.Contains(out.String(), "[y/N]") || !strings.Contains(out.String(), "print(1)") {
		t.Fatalf("prompt: %q", out.String())
	}
}

func TestAskAppendsPipedInputAndPrintsOnce(t *testing.T) {
	srv := fakeOllama(t)
	srv.On(et.UserSays("diff --git")).Reply(et.Text("Add the thing."))
	out, errOut, code := runCLI(t, "diff --git a/x b/x\n+thing\n", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "Write a commit message")
	if code != ExitOK || out != "Add the thing.\n" {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	last := srv.Chats()[len(srv.Chats())-1].Messages
	if q := last[len(last)-1].Content; !strings.HasPrefix(q, "Write a commit message\n\ndiff --git") {
		t.Fatalf("question sent: %q", q)
	}
}
