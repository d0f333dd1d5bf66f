package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

func fakeOllama(t *testing.T) *ot.Server {
	t.Helper()
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.TextChunks("15% of 340 ", "is 51."))
	return srv
}

func TestAskStreamsAnswerAndToolLines(t *testing.T) {
	srv := fakeOllama(t)
	out, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--agent", "orchestrator", "--tools", "calculator", "What is 15% of 340?")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if out != "15% of 340 is 51.\n" {
		t.Fatalf("stdout = %q", out)
	}
	if !strings.Contains(errOut, `→ calculator {"expression":"15/100*340"}`) || !strings.Contains(errOut, "✓ calculator") || !strings.Contains(errOut, "→ 51.0") {
		t.Fatalf("stderr lacks the tool lines: %q", errOut)
	}
}

func TestAskJSON(t *testing.T) {
	srv := fakeOllama(t)
	out, errOut, code := runCLI(t, "", "--host", srv.URL, "ask", "--json", "--model", "qwen3:8b", "--tools", "calculator", "What is 15% of 340?")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Content     string `json:"content"`
		ToolResults []struct {
			ToolName       string  `json:"tool_name"`
			Content        string  `json:"content"`
			Success        bool    `json:"success"`
			LatencySeconds float64 `json:"latency_seconds"`
			CostUSD        float64 `json:"cost_usd"`
		} `json:"tool_results"`
		Usage map[string]any `json:"usage"`
		Model string         `json:"model"`
		Turns int            `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Content != "15% of 340 is 51." || res.Turns != 2 || res.Model != "qwen3:8b" || len(res.ToolResults) != 1 ||
		res.ToolResults[0].Content != "51.0" || !res.ToolResults[0].Success || res.ToolResults[0].LatencySeconds <= 0 {
		t.Fatalf("result = %+v", res)
	}
	if _, ok := res.Usage["output_tokens"]; !ok {
		t.Fatalf("usage = %v", res.Usage)
	}
}

func TestAskReadsQuestionFromStdinAndPicksModel(t *testing.T) {
	srv := fakeOllama(t)
	out, errOut, code := runCLI(t, "What is 15% of 340?\n", "ask", "--host", srv.URL, "--tools", "calculator")
	if code != ExitOK || out != "15% of 340 is 51.\n" {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "no model set; using qwen3:8b") {
		t.Fatalf("no note about the chosen model: %q", errOut)
	}
}

func TestAskFailuresAndUsage(t *testing.T) {
	srv := fakeOllama(t)
	_, errOut, code := runCLI(t, "", "ask", "--host", ot.ClosedURL(t), "--model", "m", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "ollama serve") {
		t.Fatalf("unreachable: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL, "--model", "missing:1b", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "jarvis models pull missing:1b") {
		t.Fatalf("missing model: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL, "--tools", "calculater", "hi")
	if code != ExitUsage || !strings.Contains(errOut, `did you mean "calculator"`) {
		t.Fatalf("unknown tool: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL, "--agent", "genius", "hi")
	if code != ExitUsage || !strings.Contains(errOut, "unknown agent") {
		t.Fatalf("unknown agent: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL)
	if code != ExitUsage || !strings.Contains(errOut, "no question") {
		t.Fatalf("no question: exit %d err %q", code, errOut)
	}
}

func TestModelsAndDoctorAgainstFakeServer(t *testing.T) {
	srv := fakeOllama(t)
	srv.Model("tiny", engine.CapCompletion)
	out, errOut, code := runCLI(t, "", "models", "--host", srv.URL)
	if code != ExitOK || !strings.Contains(out, "qwen3:8b") || !strings.Contains(out, "completion, tools") {
		t.Fatalf("models: exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "doctor", "--host", srv.URL, "--model", "tiny", "--db", t.TempDir()+"/j.db")
	if code != ExitOK || !strings.Contains(out, "✓ server") || !strings.Contains(out, "no native tool support") {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "doctor", "--host", srv.URL, "--model", "absent")
	if code != ExitFailed || !strings.Contains(out, "fix: jarvis models pull absent") {
		t.Fatalf("doctor missing model: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "doctor", "--host", ot.ClosedURL(t))
	if code != ExitFailed || !strings.Contains(out, "✗ server") || !strings.Contains(out, "ollama serve") {
		t.Fatalf("doctor unreachable: exit %d\n%s", code, out)
	}
}

func TestConfigShowSources(t *testing.T) {
	out, _, code := runCLI(t, "", "config", "show", "--model", "m1")
	if code != ExitOK || !strings.Contains(out, "flag --model") || !strings.Contains(out, "calculator,think") {
		t.Fatalf("config show: %d\n%s", code, out)
	}
}
