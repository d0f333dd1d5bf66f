package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// askResult is ask --json's output as a script reads it.
type askResult struct {
	Error       string         `json:"error"`
	Content     string         `json:"content"`
	ToolResults []tools.Result `json:"tool_results"`
	Usage       events.Usage   `json:"usage"`
	Model       string         `json:"model"`
	Turns       int            `json:"turns"`
	Agent       string         `json:"agent"`
	Context     struct {
		Window       int  `json:"window"`
		PromptTokens int  `json:"prompt_tokens"`
		Compacted    bool `json:"compacted"`
		CutResults   int  `json:"cut_results"`
	} `json:"context"`
}

func decodeAsk(t *testing.T, out string) askResult {
	t.Helper()
	var res askResult
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("not ask's JSON: %v\n%s", err, out)
	}
	return res
}

func TestAskJSONFailureCarriesTheErrorAndWhatArrived(t *testing.T) {
	srv := fakeOllama(t)
	srv.On(et.UserSays("break midway")).Reply(et.TextChunks("The answer ", "starts "), et.Error(500, "model runner crashed"))

	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "break midway")
	res := decodeAsk(t, out)
	if code != ExitFailed || !strings.Contains(res.Error, "model runner crashed") || res.Content != "The answer starts " ||
		res.Turns != 1 || res.Model != "qwen3:8b" || res.Usage.WallSeconds <= 0 {
		t.Fatalf("exit %d, result %+v", code, res)
	}
	if !strings.Contains(errOut, "model runner crashed") {
		t.Fatalf("stderr lacks the error: %q", errOut)
	}

	toolSrv := ot.New(t)
	toolSrv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	toolSrv.On(et.UserSays("break after a tool")).Reply(et.ToolCall("calculator", `{"expression":"6*7"}`))
	toolSrv.On(et.ToolResult("calculator")).Reply(et.Error(500, "out of memory"))
	out, _, code = runCLI(t, "", "ask", "--json", "--host", toolSrv.URL, "--model", "qwen3:8b", "--tools", "calculator", "break after a tool")
	res = decodeAsk(t, out)
	if code != ExitFailed || !strings.Contains(res.Error, "out of memory") || len(res.ToolResults) != 1 ||
		res.ToolResults[0].Content != "42" || res.Turns != 2 {
		t.Fatalf("exit %d, result %+v", code, res)
	}

	// A run that cannot start still answers in JSON, with what is known.
	out, _, code = runCLI(t, "", "ask", "--json", "--host", ot.ClosedURL(t), "--model", "m", "--agent", "simple", "hi")
	res = decodeAsk(t, out)
	if code != ExitFailed || !strings.Contains(res.Error, "ollama serve") || res.Model != "m" || res.Agent != "simple" || res.ToolResults == nil {
		t.Fatalf("unreachable: exit %d, result %+v\n%s", code, res, out)
	}

	// A wrong command line is not a run: no JSON, exit 2.
	out, errOut, code = runCLI(t, "", "ask", "--json", "--host", srv.URL, "--tools", "calculater", "hi")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "calculator") {
		t.Fatalf("unknown tool: exit %d out %q err %q", code, out, errOut)
	}
}

func TestAskJSONToolResultsCarryUsageAndMetadata(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.Endpoint("/api/generate")).Reply(et.Text("A short summary."))
	srv.On(et.UserSays("summarise")).Reply(et.ToolCall("llm", `{"prompt":"Summarise this."}`))
	srv.On(et.ToolResult("llm")).Reply(et.Text("Done."))
	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "llm", "summarise")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	res := decodeAsk(t, out)
	if res.Error != "" || len(res.ToolResults) != 1 {
		t.Fatalf("result %+v", res)
	}
	r := res.ToolResults[0]
	if r.ToolName != "llm" || r.Content != "A short summary." || r.Status != tools.StatusOK || r.Metadata["model"] != "qwen3:8b" {
		t.Fatalf("tool result %+v", r)
	}
	for _, key := range []string{"prompt_tokens", "completion_tokens", "total_tokens", "tokens_per_second"} {
		if _, ok := r.Usage[key]; !ok {
			t.Errorf("the llm result's usage lacks %s: %v", key, r.Usage)
		}
	}
	if args, _ := r.Metadata["arguments"].(map[string]any); args["prompt"] != "Summarise this." {
		t.Errorf("the result does not say which call it answers: %v", r.Metadata)
	}
}

func TestAskPrintsNoUsageLineWithoutATerminal(t *testing.T) {
	srv := fakeOllama(t)
	_, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator", "What is 15% of 340?")
	if code != ExitOK || strings.Contains(errOut, "Σ") || strings.Contains(errOut, "tok/s") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestAskErrorMessagesAreStripped(t *testing.T) {
	srv := fakeOllama(t)
	srv.On(et.UserSays("hi")).Reply(et.Error(500, "boom\x1b]0;pwned\x07 \x1b[2Jgone"))
	_, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "boom gone") || strings.ContainsAny(errOut, "\x1b\a") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestToolsRunPrintsAFailureOnceAndWhole(t *testing.T) {
	_, errOut, code := runCLI(t, "", "tools", "run", "calculator", `{"expression":"1/0"}`)
	if code != ExitFailed || strings.Count(errOut, "division by zero") != 1 || !strings.Contains(errOut, "✗ calculator ") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// An unknown tool is a wrong use, as for tools describe: the whole
	// list of tools, once.
	_, errOut, code = runCLI(t, "", "tools", "run", "calculater", `{}`)
	if code != ExitUsage || strings.Count(errOut, `unknown tool "calculater" (did you mean "calculator"?)`) != 1 || !strings.Contains(errOut, "think") {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	_, errOut, _ = runCLI(t, "", "tools", "run", "calculator", `{}`)
	if strings.Count(errOut, "missing required parameter") != 1 {
		t.Fatalf("stderr %q", errOut)
	}
	_, errOut, _ = runCLI(t, "", "tools", "run", "code_interpreter", `{"code":"1"}`)
	if strings.Count(errOut, "requires confirmation") != 1 || !strings.Contains(errOut, "⊘ code_interpreter not run: ") {
		t.Fatalf("stderr %q", errOut)
	}
}

func TestToolsRunReadsArgumentsFromStdinAndFiles(t *testing.T) {
	out, errOut, code := runCLI(t, `{"expression":"2+3"}`, "tools", "run", "calculator", "-")
	if code != ExitOK || out != "5\n" {
		t.Fatalf("from stdin: exit %d out %q err %q", code, out, errOut)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	// Larger than any command line can carry.
	big := strings.Repeat("word ", 60_000)
	args, _ := json.Marshal(map[string]string{"thought": big})
	if err := os.WriteFile(filepath.Join(home, "call.json"), args, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "", "tools", "run", "think", "@~/call.json")
	if code != ExitOK || out != big+"\n" {
		t.Fatalf("from ~/call.json: exit %d, %d bytes out, err %q", code, len(out), errOut)
	}
	for _, c := range []struct {
		stdin, arg, msg string
	}{
		{"", "@" + filepath.Join(home, "absent.json"), "no such file"},
		{"", "@" + home, "is a directory"},
		{"", "@", "@ needs a file name"},
		{strings.Repeat("x", maxToolArgs+1), "-", "larger than 4 MiB"},
	} {
		out, errOut, code := runCLI(t, c.stdin, "tools", "run", "think", c.arg)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d out %q err %q, want exit 2 and %q", c.arg, code, out, errOut, c.msg)
		}
	}
}

func TestJSONEscapesEveryControl(t *testing.T) {
	in := map[string]string{"text": "esc \x1b[2J c1 \u009b31m del \x7f st \u009c é"}
	var b bytes.Buffer
	if err := writeJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexAny(b.Bytes(), "\x1b\x7f\u0080\u009b\u009c\u009f"); i >= 0 {
		t.Fatalf("raw control at %d: %q", i, b.String())
	}
	for _, want := range []string{`\u001b[2J`, `\u009b31m`, `\u007f`, `\u009c`, "é"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s: %s", want, b.String())
		}
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["text"] != in["text"] {
		t.Fatalf("the JSON is not the same data: %v %q", err, back["text"])
	}
}

// hostileText is what a model or a tool may send: a clear, a title, a
// clipboard write, an 8-bit CSI, a carriage return.
const hostileText = "ok\x1b[2J\x1b]0;t\x07\x1b]52;c;Zm9v\x07 c1\u009b31m cr\rX"

// assertPlain fails when s holds anything but text and newlines.
func assertPlain(t *testing.T, s string) {
	t.Helper()
	for i, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f) {
			t.Fatalf("control %U at %d: %q", r, i, s)
		}
	}
}

func TestEventLinesStripToolText(t *testing.T) {
	var b bytes.Buffer
	p := newEventPrinter(&b, false)
	tool := &events.ToolPayload{Tool: "evil\x1b[2J", Arguments: map[string]any{"k\u009b": hostileText}, Result: hostileText, Success: true}
	for _, typ := range []events.Type{events.ToolCallStart, events.ToolCallEnd, events.ToolCallDenied, events.ToolCallError, events.ToolTimeout} {
		p.Publish(events.Event{Type: typ, Tool: tool})
	}
	p.println(p.failure(tools.Result{ToolName: "evil\x1b[2J", Content: hostileText + "\nsecond line", Status: tools.StatusError, LatencySeconds: 0.01}))
	assertPlain(t, b.String())
	for _, want := range []string{"→ evil {", "✓ evil ", "→ ok c131m crX", "⊘ evil not run: ok", "✗ evil ok", "⏱ evil timed out", "→ ok c131m crX\n  second line"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lines lack %q:\n%s", want, b.String())
		}
	}
}

func TestConfirmationPromptIsStripped(t *testing.T) {
	out, in := newAnswering("n")
	defer out.w.Close()
	p := newPromptConfirmer(in, out)
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "srv__run\x1b[2J", Description: "Runs " + hostileText},
		Arguments: tools.Args{"cmd": hostileText}}
	if d, err := p.Confirm(context.Background(), req); d != tools.Deny || err != nil {
		t.Fatalf("decision %v %v", d, err)
	}
	assertPlain(t, out.String())
	if !strings.Contains(out.String(), "Tool 'srv__run' needs your approval") || !strings.Contains(out.String(), `"cmd": "ok\u001b[2J`) {
		t.Fatalf("prompt: %q", out.String())
	}
}

func TestSchedulerLinesAreStripped(t *testing.T) {
	var b bytes.Buffer
	p := newSchedPrinter(&b)
	now := time.Now()
	p.Publish(events.Event{Type: events.SchedulerTaskStart, Time: now, Task: &events.TaskPayload{TaskID: "t1", Prompt: hostileText}})
	p.Publish(events.Event{Type: events.SchedulerTaskEnd, Time: now, Task: &events.TaskPayload{TaskID: "t1", Success: true, Result: hostileText}})
	p.Publish(events.Event{Type: events.SchedulerTaskEnd, Time: now, Task: &events.TaskPayload{TaskID: "t1", Error: hostileText}})
	assertPlain(t, b.String())
	if strings.Count(b.String(), "ok c131m cr X") != 3 {
		t.Fatalf("lines:\n%s", b.String())
	}
}

func TestAgoCountsInTheSingular(t *testing.T) {
	now := time.Now()
	for d, want := range map[time.Duration]string{
		90 * time.Second: "1 minute ago", 5 * time.Minute: "5 minutes ago",
		61 * time.Minute: "1 hour ago", 50 * time.Hour: "2 days ago", 30 * time.Hour: "30 hours ago",
	} {
		if got := ago(now.Add(-d)); got != want {
			t.Errorf("ago(%v) = %q, want %q", d, got, want)
		}
	}
}

// cancelOn cancels a context once something containing mark is written.
type cancelOn struct {
	bytes.Buffer
	mark   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.mark) {
		c.cancel()
	}
	return c.Buffer.Write(p)
}

func TestAskJSONWhenInterrupted(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("slow")).Reply(et.ToolCall("calculator", `{"expression":"6*7"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Hang())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errw := &cancelOn{mark: "✓ calculator", cancel: cancel} // interrupted once the tool has run
	code := run(ctx, []string{"ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator", "slow"},
		IO{In: strings.NewReader(""), Out: &out, Err: errw})
	var res struct {
		askResult
		Stopped string `json:"stopped"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if code != exitSignal || res.Error != "interrupted" || res.Stopped != "cancelled" || len(res.ToolResults) != 1 || res.ToolResults[0].Content != "42" {
		t.Fatalf("exit %d, result %+v\nstderr %s", code, res, errw.String())
	}
}

// TestDataOnATerminalIsStripped runs a command that only prints data
// (config show) with stdout on a pseudo-terminal: a value read from the
// config file reaches it without its sequences, and the same command into a
// buffer prints the value as it is.
func TestDataOnATerminalIsStripped(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal available: %v", err)
	}
	defer ptmx.Close()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(`system = "Be brief.\u001b]0;pwned\u0007 \u001b[2JReally."`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	var got bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&got, ptmx); close(read) }() // ends once the terminal is closed
	var errb bytes.Buffer
	code := run(context.Background(), []string{"config", "show", "--config", cfg}, IO{In: strings.NewReader(""), Out: tty, Err: &errb})
	tty.Close()
	<-read
	if code != ExitOK || !strings.Contains(got.String(), "Be brief. Really.") || strings.ContainsAny(got.String(), "\x1b\a") {
		t.Fatalf("exit %d, terminal got %q, stderr %q", code, got.String(), errb.String())
	}
	out, _, _ := runCLI(t, "", "config", "show", "--config", cfg)
	if !strings.Contains(out, "Be brief.\x1b]0;pwned\a \x1b[2JReally.") {
		t.Fatalf("into a buffer the value changed: %q", out)
	}
}
