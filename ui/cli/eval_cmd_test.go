package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// builtinScript serves the scripted answers of app/eval's tests for the
// built-in suite, its paths in scratch.
func builtinScript(t *testing.T, file, scratch string) *ot.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "app", "eval", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ot.ParseScript([]byte(strings.ReplaceAll(string(data), "{root}", scratch)))
	if err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Use(sc)
	srv.Model("othermodel", engine.CapCompletion, engine.CapTools)
	return srv
}

type evalJSON struct {
	Suite   string `json:"suite"`
	Results []struct {
		ID     string `json:"id"`
		Model  string `json:"model"`
		Agent  string `json:"agent"`
		Engine string `json:"engine"`
		Passed int    `json:"passed"`
		Total  int    `json:"total"`
		Cases  []struct {
			ID      string  `json:"id"`
			Passed  bool    `json:"passed"`
			Reason  string  `json:"reason"`
			Seconds float64 `json:"seconds"`
			Calls   []struct {
				Tool string         `json:"tool"`
				Args map[string]any `json:"args"`
			} `json:"calls"`
		} `json:"cases"`
	} `json:"results"`
}

func TestEvalBuiltinSuiteJSONWithTwoModels(t *testing.T) {
	scratch := t.TempDir()
	srv := builtinScript(t, "builtin-right.json", scratch)
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, "", "eval", "--host", srv.URL, "--db", db, "--model", "evalbot,othermodel", "--scratch", scratch, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Suite != "builtin" || len(rep.Results) != 2 {
		t.Fatalf("suite %q, %d results", rep.Suite, len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Agent != "orchestrator" || r.Engine != "ollama" || r.ID == "" || r.Total < 15 || r.Passed != r.Total {
			t.Errorf("%s: %d/%d passed, id %q", r.Model, r.Passed, r.Total, r.ID)
		}
		for _, c := range r.Cases {
			if !c.Passed || c.Seconds <= 0 || c.Calls == nil {
				t.Errorf("%s %s: %+v", r.Model, c.ID, c)
			}
		}
	}
	// The progress went to stderr, a line per case into a pipe; the runs
	// were saved.
	if n := len(regexp.MustCompile(`(?m)^\[\d/2\] .* ✓ `).FindAllString(errOut, -1)); n != 2*len(rep.Results[0].Cases) {
		t.Errorf("%d progress lines on stderr, want one per case run:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "saved as "+rep.Results[0].ID+", "+rep.Results[1].ID) {
		t.Errorf("stderr does not say where the results were saved:\n%s", errOut)
	}
	// The sandboxes were kept where --scratch said.
	if _, err := os.Stat(filepath.Join(scratch, "read-file", "ship.txt")); err != nil {
		t.Errorf("the scratch directory was not kept: %v", err)
	}
}

func TestEvalTableHistoryAndCompare(t *testing.T) {
	scratch := t.TempDir()
	right := builtinScript(t, "builtin-right.json", scratch)
	wrong := builtinScript(t, "builtin-wrong.json", scratch)
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, "", "eval", "--host", right.URL, "--db", db, "--model", "evalbot", "--scratch", scratch)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"Suite builtin (built-in) · 19 cases", "evalbot · orchestrator · ollama " + right.URL, "passed 19/19 (100%)", "✓ every case passed", "Pass rate by category", "multistep 100% │"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// The wrong answers: exit 0 (the evaluation ran), each failure with
	// its reason; --fail-under turns it into exit 1.
	out, errOut, code = runCLI(t, "", "eval", "--host", wrong.URL, "--db", db, "--model", "evalbot", "--scratch", scratch, "--fail-under", "50%")
	if code != ExitFailed || !strings.Contains(errOut, "under --fail-under 50%: evalbot · orchestrator passed 0%") {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "✗ percent           called think, expected calculator") || !strings.Contains(out, "passed 0/19 (0%)") {
		t.Errorf("the failures are not listed with their reasons:\n%s", out)
	}
	out, errOut, code = runCLI(t, "", "eval", "history", "--db", db)
	if code != ExitOK {
		t.Fatalf("history: exit %d %s", code, errOut)
	}
	ids := regexp.MustCompile(`(?m)^(\d{8}-\d{6}-\w{4})`).FindAllString(out, -1)
	if len(ids) != 2 || !strings.Contains(out, "0/19") || !strings.Contains(out, "19/19") {
		t.Fatalf("history:\n%s", out)
	}
	newest, oldest := ids[0], ids[1]
	out, _, code = runCLI(t, "", "eval", "history", "--db", db, "--compare", oldest, newest[len(newest)-4:])
	if code != ExitOK || !strings.Contains(out, "19 cases flipped: 0 fixed, 19 broken") ||
		!regexp.MustCompile(`percent\s+single\s+✓\s+✗\s+broken\s+called think, expected calculator`).MatchString(out) {
		t.Errorf("compare (exit %d):\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "eval", "history", "--db", db, newest)
	if code != ExitOK || !regexp.MustCompile(`capital\s+nocall\s+✗\s+\S+\s+answer lacks "Paris"`).MatchString(out) {
		t.Errorf("show (exit %d):\n%s", code, out)
	}
	var listed []map[string]any
	out, _, _ = runCLI(t, "", "eval", "history", "--db", db, "--json")
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 2 {
		t.Errorf("history --json: %v\n%s", err, out)
	}
	_, errOut, code = runCLI(t, "", "eval", "history", "--db", db, "--compare", oldest)
	if code != ExitUsage || !strings.Contains(errOut, "--compare needs two run ids") {
		t.Errorf("compare with one id: exit %d %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "eval", "history", "--db", db, "nosuchid")
	if code != ExitFailed || !strings.Contains(errOut, `no evaluation run has the id "nosuchid"`) {
		t.Errorf("unknown id: exit %d %s", code, errOut)
	}
}

const stdinSuite = `{"name": "mini", "cases": [
 {"id": "pct", "category": "math", "prompt": "What is 15% of 340?", "tools": ["calculator"],
  "expect": {"calls": [{"tool": "calculator", "args": {"expression": "15/100*340"}}], "answer_contains": "51"}},
 {"id": "hello", "category": "chat", "prompt": "hello there", "tools": ["calculator"], "expect": {"calls": []}}]}`

func TestEvalSuiteOnStdinAgentsAndEngines(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	// react reads its tools in the system prompt and answers in text.
	srv.On(et.UserSays("Observation:")).Reply(et.Text("Final Answer: 51"))
	srv.On(et.UserSays("15% of 340"), et.NoTools()).Reply(et.Text("Action: calculator\nAction Input: {\"expression\": \"15/100*340\"}"))
	srv.On(et.UserSays("hello there"), et.NoTools()).Reply(et.Text("Final Answer: Hi!"))
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator"), et.QuestionContains("15% of 340")).Reply(et.Text("51"))
	srv.On(et.UserSays("hello there")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("Hi!"))
	oai := openaitest.New(t, openaitest.LlamaCpp)
	oai.Model("qwen3:8b")
	oai.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"0.15*340"}`))
	oai.On(et.ToolResult("calculator")).Reply(et.Text("51"))
	oai.On(et.UserSays("hello there")).Reply(et.Text("Hi!"))
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, stdinSuite, "eval", "--suite", "-", "--host", srv.URL, "--db", db, "--model", "qwen3:8b",
		"--agent", "orchestrator,react", "--engine", "ollama,openai="+oai.BaseURL, "--json", "--no-save")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rep.Results {
		for _, c := range r.Cases {
			got[r.Engine+" "+r.Agent+" "+c.ID] = c.Reason
		}
	}
	want := map[string]string{
		"ollama orchestrator pct":   "",
		"ollama orchestrator hello": "called calculator, expected no tool call",
		"ollama react pct":          "",
		"ollama react hello":        "",
		"openai orchestrator pct":   "argument expression: got 0.15*340, expected 15/100*340",
		"openai orchestrator hello": "",
	}
	for k, w := range want {
		if r, ok := got[k]; !ok || r != w {
			t.Errorf("%s: reason %q, want %q", k, r, w)
		}
	}
	if len(rep.Results) != 4 || rep.Suite != "mini" {
		t.Errorf("%d results for 2 engines × 2 agents, suite %q", len(rep.Results), rep.Suite)
	}
	if strings.Contains(errOut, "saved as") {
		t.Errorf("--no-save saved: %s", errOut)
	}
}

func TestEvalWrongUse(t *testing.T) {
	srv := fakeOllama(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"cases": [{"id": "pct", "prompt": "x", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculater"}]}}]}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", bad}, `suite ` + bad + `: case "pct": expect.calls[0].tool: unknown tool "calculater" (did you mean "calculator"?)`},
		{[]string{"--suite", filepath.Join(dir, "missing.json")}, "missing.json: open"},
		{[]string{"--agent", "smart"}, `--agent "smart": choose among simple, orchestrator, react`},
		{[]string{"--engine", "vllm"}, `--engine "vllm": the engines are ollama and openai`},
		{[]string{"--engine", "openai"}, "--engine openai needs the server's URL"},
		{[]string{"--repeat", "0"}, "--repeat must be at least 1"},
		{[]string{"--fail-under", "lots"}, `--fail-under "lots" is not a rate`},
	} {
		args := append([]string{"eval", "--host", srv.URL, "--model", "qwen3:8b", "--db", filepath.Join(dir, "j.db")}, tc.args...)
		_, errOut, code := runCLI(t, "", args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	// A model the server lacks stops the run before it starts.
	_, errOut, code := runCLI(t, stdinSuite, "eval", "--suite", "-", "--host", srv.URL, "--model", "nosuch", "--db", filepath.Join(dir, "j.db"))
	if code != ExitFailed || !strings.Contains(errOut, "nosuch") {
		t.Errorf("unknown model: exit %d %s", code, errOut)
	}
}

// A description set in the config reaches the model the suite measures.
func TestEvalAppliesConfiguredDescriptions(t *testing.T) {
	srv := fakeOllama(t)
	srv.On(et.UserSays("hello there")).Reply(et.Text("Hi!"))
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgPath, []byte("[tool.calculator]\ndescription = \"CONFIGURED WORDS\"\n[tool.calculator.parameters]\nexpression = \"CONFIGURED PARAM\"\n"), 0o600)
	_, errOut, code := runCLI(t, stdinSuite, "eval", "--suite", "-", "--config", cfgPath, "--host", srv.URL, "--model", "qwen3:8b", "--db", filepath.Join(t.TempDir(), "j.db"), "--json")
	if code != ExitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	calc := srv.Chats()[0].Tools[0].Function
	if p, _ := calc.Parameters.Properties.Get("expression"); calc.Description != "CONFIGURED WORDS" || p.Description != "CONFIGURED PARAM" {
		t.Errorf("sent %q / %q", calc.Description, p.Description)
	}
}

// An evaluation decides its confirmations with the one policy and writes
// them to the audit log: a tool the suite did not approve is denied (and
// nothing runs), one it approved runs, and both decisions are logged with
// the eval as their source.
func TestEvalFollowsThePolicyAndWritesTheAuditLog(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("fetch it")).Reply(et.ToolCall("http_request", `{"url":"http://127.0.0.1:9/x?token=s3cret"}`))
	srv.On(et.ToolResult("http_request")).Reply(et.Text("done"))
	suite := `{"name": "policy", "cases": [
	 {"id": "denied", "prompt": "fetch it", "tools": ["http_request"], "expect": {"calls": [{"tool": "http_request"}]}},
	 {"id": "approved", "prompt": "fetch it please", "tools": ["http_request"], "approve": ["http_request"], "expect": {"calls": [{"tool": "http_request"}]}}]}`
	db := filepath.Join(t.TempDir(), "jarvis.db")
	if _, errOut, code := runCLI(t, suite, "eval", "--suite", "-", "--host", srv.URL, "--db", db, "--model", "qwen3:8b", "--no-save"); code != ExitOK {
		t.Fatalf("eval: exit %d %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "", "audit", "--json", "--db", db)
	if code != ExitOK {
		t.Fatalf("audit: %s", errOut)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	decisions := map[string]int{}
	for _, e := range entries {
		if e["source"] != "eval" || e["tool"] != "http_request" {
			t.Fatalf("entry %v", e)
		}
		decisions[fmt.Sprint(e["decision"], " by ", e["by"])]++
		if strings.Contains(fmt.Sprint(e["args"]), "s3cret") {
			t.Fatalf("a secret reached the audit log: %v", e["args"])
		}
	}
	if decisions["denied by task approve list"] != 1 || decisions["allowed by task approve list"] != 1 {
		t.Fatalf("decisions %v", decisions)
	}
}

// A case run the server could not make is marked and counted apart, and
// the evaluation exits 1: its measure is incomplete.
func TestEvalSaysWhatCouldNotRun(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("add two and two")).Reply(et.Error(500, "model runner crashed"))
	srv.Default(et.Text("Hello."))
	suite := `{"name": "two", "cases": [
 {"id": "add", "prompt": "add two and two", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "args": {"expression": "2+2"}}]}},
 {"id": "hello", "prompt": "say hello", "tools": ["calculator"], "expect": {"calls": []}}]}`
	out, errOut, code := runCLI(t, suite, "eval", "--suite", "-", "--host", srv.URL, "--model", "qwen3:8b", "--db", filepath.Join(t.TempDir(), "j.db"))
	if code != ExitFailed || !strings.Contains(out, "passed 1/1 (100%), 1 could not run") || !strings.Contains(out, "! add") ||
		!strings.Contains(errOut, "1 case run could not be made") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	bad := `{"name": "typo", "cases": [{"id": "add", "prompt": "add", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "args": {"expr": "2"}}]}}]}`
	_, errOut, code = runCLI(t, bad, "eval", "--suite", "-", "--host", srv.URL, "--model", "qwen3:8b", "--db", filepath.Join(t.TempDir(), "j.db"))
	if code != ExitUsage || !strings.Contains(errOut, `calculator takes no argument "expr"`) {
		t.Fatalf("an argument the tool does not take: exit %d %q", code, errOut)
	}
}
