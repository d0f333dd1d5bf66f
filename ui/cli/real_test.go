//go:build real

package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/internal/realollama"
)

// jarvis against a real Ollama with scripted models (make test-real): the
// tool calls and thinking come from the server's own parsers.

func TestRealAskOnBothEngines(t *testing.T) {
	srv := realollama.Start(t, realollama.Options{Models: []string{"scripted", "scripted-parallel", "scripted-think-qwen3"}})
	for _, c := range []struct {
		name   string
		args   []string
		answer string
		calls  []string
	}{
		{"ollama", []string{"--host", srv.URL, "--model", "scripted", "What is 15% of 340?"}, "15% of 340 is 51.", []string{`calculator {"expression":"15/100*340"}`}},
		{"openai", []string{"--engine", "openai", "--host", srv.URL + "/v1", "--model", "scripted", "What is 15% of 340?"}, "15% of 340 is 51.", []string{`calculator {"expression":"15/100*340"}`}},
		{"ollama parallel", []string{"--host", srv.URL, "--model", "scripted-parallel", "Do two sums"}, "2+2 is 4 and 3*7 is 21.",
			[]string{`calculator {"expression":"2+2"}`, `calculator {"expression":"3*7"}`}},
		{"openai parallel", []string{"--engine", "openai", "--host", srv.URL + "/v1", "--model", "scripted-parallel", "Do two sums"}, "2+2 is 4 and 3*7 is 21.",
			[]string{`calculator {"expression":"2+2"}`, `calculator {"expression":"3*7"}`}},
		{"ollama qwen3-thinking", []string{"--host", srv.URL, "--model", "scripted-think-qwen3", "What is 15% of 340?"}, "15% of 340 is 51.", []string{`calculator {"expression":"15/100*340"}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"ask", "--tools", "calculator", "--agent", "orchestrator"}, c.args...)
			out, errOut, code := runCLI(t, "", args...)
			if code != ExitOK || strings.TrimSpace(out) != c.answer {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
			}
			for _, call := range c.calls {
				if !strings.Contains(errOut, "→ "+call) {
					t.Errorf("stderr lacks the call %s: %q", call, errOut)
				}
			}
		})
	}
	// The thinking the server's qwen3-thinking parser found arrives too,
	// every turn's in order.
	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "scripted-think-qwen3", "--tools", "calculator", "What is 15% of 340?")
	var res struct{ Content, Thinking string }
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || res.Thinking != "The user wants 15% of 340. I will use the calculator tool.\n\nThe calculator returned the result, so I can answer now." {
		t.Errorf("exit %d, thinking %q\n%s\n%s", code, res.Thinking, out, errOut)
	}
}

const realSuite = `{"name": "real", "cases": [
 {"id": "pct", "category": "math", "prompt": "What is 15% of 340?", "tools": ["calculator"],
  "expect": {"calls": [{"tool": "calculator", "args": {"expression": "15/100*340"}}], "answer_contains": "51"}},
 {"id": "sums", "category": "math", "prompt": "Please do two sums", "tools": ["calculator"],
  "expect": {"calls": [{"tool": "calculator", "args": {"expression": "2+2"}}, {"tool": "calculator", "args": {"expression": "3*7"}}], "answer_contains": "21"}},
 {"id": "hello", "category": "chat", "prompt": "hello scripted", "tools": ["calculator"], "expect": {"calls": []}}]}`

func TestRealEvalOnBothEngines(t *testing.T) {
	srv := realollama.Start(t, realollama.Options{Models: []string{"scripted"}})
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, realSuite, "eval", "--suite", "-", "--host", srv.URL, "--db", db, "--model", "scripted",
		"--agent", "orchestrator", "--engine", "ollama,openai="+srv.URL+"/v1", "--json", "--no-save")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want one per engine:\n%s", len(rep.Results), out)
	}
	for _, r := range rep.Results {
		if r.Passed != 3 || r.Total != 3 {
			for _, c := range r.Cases {
				t.Logf("%s %s: passed %v %s", r.Engine, c.ID, c.Passed, c.Reason)
			}
			t.Errorf("%s: %d of %d cases passed", r.Engine, r.Passed, r.Total)
		}
	}
}
