package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// askStop is what a script reads of a run that stopped short.
type askStop struct {
	Content  string   `json:"content"`
	Thinking string   `json:"thinking"`
	Stopped  string   `json:"stopped"`
	Notices  []string `json:"notices"`
	Error    string   `json:"error"`
}

func decodeStop(t *testing.T, out string) askStop {
	t.Helper()
	var r askStop
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return r
}

// A run stopped by the turn limit or the loop guard prints no answer:
// jarvis's notice goes to stderr, stdout stays empty of it, the exit
// status is 1, and the JSON says why in "stopped".
func TestAskStoppedRunPrintsNoAnswerAndExitsOne(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	n := 0
	srv.On(et.UserSays("count")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	srv.On(et.ToolResult("calculator")).ReplyWith(func(*et.Call) []et.Step {
		n++
		return []et.Step{et.ToolCall("calculator", fmt.Sprintf(`{"expression":"%d+1"}`, n))}
	})
	base := []string{"ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator"}

	out, errOut, code := runCLI(t, "", append(base, "--max-turns", "2", "count forever")...)
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "Stopped after 2 turns (max_turns)") || strings.Contains(errOut, "Maximum turns") {
		t.Fatalf("max turns: exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "", append(base, "--max-turns", "2", "--json", "count forever")...)
	if r := decodeStop(t, out); code != ExitFailed || r.Stopped != "max_turns" || r.Content != "" || r.Error != "" {
		t.Fatalf("max turns JSON: exit %d %+v", code, r)
	}
	loop := ot.New(t)
	loop.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	loop.Default(et.ToolCall("calculator", `{"expression":"2+2"}`))
	base[2] = loop.URL
	out, errOut, code = runCLI(t, "", append(base, "repeat yourself")...)
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "same arguments 3 times") {
		t.Fatalf("loop: exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "", append(base, "--json", "repeat yourself")...)
	if r := decodeStop(t, out); code != ExitFailed || r.Stopped != "loop" || r.Content != "" {
		t.Fatalf("loop JSON: exit %d %+v", code, r)
	}
	_, errOut, code = runCLI(t, "", append(base, "--max-turns", "0", "hi")...)
	if code != ExitUsage || !strings.Contains(errOut, "--max-turns must be at least 1") {
		t.Fatalf("--max-turns 0: exit %d err %q", code, errOut)
	}
}

// A reply cut at its length limit keeps the model's words on stdout, says
// why on stderr, exits 1, and the JSON has "stopped": "length".
func TestAskReplyCutAtItsLengthSaysSo(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.Default(et.Text("one two three four five six seven eight nine ten"))
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[options]\nnum_predict = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", "ask", "--config", cfg, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "count")
	if code != ExitFailed || out == "" || !strings.Contains(errOut, "num_predict = 3 tokens") {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "ask", "--json", "--config", cfg, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "count")
	if r := decodeStop(t, out); code != ExitFailed || r.Stopped != "length" || r.Content == "" {
		t.Fatalf("JSON: exit %d %+v", code, r)
	}
}

// ask --json's thinking holds every turn's, in order.
func TestAskJSONThinkingOfEveryTurn(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools, engine.CapThinking)
	srv.On(et.UserSays("15% of 340")).Reply(et.Think("A percentage: the calculator."), et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Think("It said 51."), et.Text("51."))
	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator", "What is 15% of 340?")
	r := decodeStop(t, out)
	if code != ExitOK || r.Thinking != "A percentage: the calculator.\n\nIt said 51." {
		t.Fatalf("exit %d thinking %q err %q", code, r.Thinking, errOut)
	}
}

// --temperature, --seed, --think and --max-turns reach the request; a
// level goes as true, and says so, to a model that takes thinking on or
// off only.
func TestAskRunFlagsReachTheServer(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools, engine.CapThinking)
	srv.Default(et.Think("hm"), et.Text("ok"))
	out, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none",
		"--temperature", "0", "--seed", "7", "--think", "high", "hi")
	if code != ExitOK || out != "ok\n" {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	if !strings.Contains(errOut, `qwen3:8b takes thinking on or off, not a level: think "high" was sent as true`) {
		t.Errorf("no note about the level: %q", errOut)
	}
	chats := srv.Chats()
	got := chats[len(chats)-1]
	if got.Options["temperature"] != 0.0 || got.Options["seed"] != 7.0 || got.Think == nil || got.Think.Value != true {
		t.Fatalf("options %v think %+v", got.Options, got.Think)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL, "--think", "maximum", "hi")
	if code != ExitUsage || !strings.Contains(errOut, "flag --think") || !strings.Contains(errOut, `"maximum" is not a thinking setting`) {
		t.Fatalf("--think maximum: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "ask", "--host", srv.URL, "--temperature", "-1", "hi")
	if code != ExitUsage || !strings.Contains(errOut, "flag --temperature") {
		t.Fatalf("--temperature -1: exit %d err %q", code, errOut)
	}
}

// --approve runs the named tools without asking, and nothing else; it
// never reaches a file past the working directory.
func TestAskApproveNamesTools(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("notes.txt", []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "far.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("run code")).Reply(et.ToolCall("code_interpreter", `{"code":"print(6*7)"}`))
	srv.On(et.UserSays("read far")).Reply(et.ToolCall("file_read", fmt.Sprintf(`{"path":%q}`, outside)))
	srv.On(et.ToolResult("")).Reply(et.Text("done"))
	base := []string{"ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "code_interpreter,file_read", "--json"}

	out, _, _ := runCLI(t, "", append(base, "--approve", "file_read", "run code")...)
	var r askResult
	json.Unmarshal([]byte(out), &r)
	if len(r.ToolResults) != 1 || r.ToolResults[0].Success || !strings.Contains(r.ToolResults[0].Content, "requires confirmation") {
		t.Fatalf("code_interpreter ran though only file_read was approved: %+v", r.ToolResults)
	}
	out, _, _ = runCLI(t, "", append(base, "--approve", "file_read", "read far")...)
	json.Unmarshal([]byte(out), &r)
	if len(r.ToolResults) != 1 || r.ToolResults[0].Success || !strings.Contains(r.ToolResults[0].Content, "an approve list never covers") {
		t.Fatalf("file_read read past the working directory: %+v", r.ToolResults)
	}
	_, errOut, code := runCLI(t, "", append(base, "--approve", "file_raed", "hi")...)
	if code != ExitUsage || !strings.Contains(errOut, `did you mean "file_read"`) {
		t.Fatalf("misspelt --approve: exit %d err %q", code, errOut)
	}
}

// The simple agent offers no tools: --tools with it says so.
func TestAskSimpleAgentSaysItOffersNoTools(t *testing.T) {
	srv := fakeOllama(t)
	srv.Default(et.Text("hello"))
	_, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--agent", "simple", "--tools", "calculator", "hi")
	if code != ExitOK || !strings.Contains(errOut, "the simple agent offers the model no tools, so --tools calculator is not used") {
		t.Fatalf("exit %d err %q", code, errOut)
	}
	_, errOut, _ = runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--agent", "simple", "hi")
	if strings.Contains(errOut, "offers the model no tools") {
		t.Fatalf("the default tools are not worth a note: %q", errOut)
	}
}

// jsonKeys returns the top-level keys of a JSON object.
func jsonKeys(t *testing.T, out string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// ask --json prints what docs/headless.md says: content, tool_results,
// usage, model, turns, agent and context always (content "" and
// tool_results [] when there are none), the rest only when set.
func TestAskJSONFieldsAreTheDocumentedOnes(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("hi")).Reply(et.Text("Hello."))
	srv.On(et.UserSays("loop")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.ToolCall("calculator", `{"expression":"2+1"}`))
	base := []string{"ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator"}
	always := "agent content context model tool_results turns usage"

	out, _, code := runCLI(t, "", append(base, "hi")...)
	if got := jsonKeys(t, out); code != ExitOK || got != always {
		t.Fatalf("answered: exit %d keys %q, want %q", code, got, always)
	}
	out, _, code = runCLI(t, "", append(base, "--max-turns", "1", "loop")...)
	want := "agent content context model notices stopped tool_results turns usage"
	if got := jsonKeys(t, out); code != ExitFailed || got != want || !strings.Contains(out, `"content": ""`) {
		t.Fatalf("stopped: exit %d keys %q, want %q\n%s", code, got, want, out)
	}
	out, _, code = runCLI(t, "", append(base, "--save", "--db", filepath.Join(t.TempDir(), "j.db"), "hi")...)
	if got := jsonKeys(t, out); code != ExitOK || got != "agent content context model session tool_results turns usage" {
		t.Fatalf("saved: exit %d keys %q", code, got)
	}
}
