package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	oat "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// The key the endpoint tests configure; nothing jarvis prints may hold it.
const labKey = "sk-lab-0123456789-secret"

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// calculatorTurns checks the two requests of a calculator round trip as
// the OpenAI API carried them: the tools offered, then the result sent
// back with the call's id.
func calculatorTurns(t *testing.T, chats []oat.ChatRequest) {
	t.Helper()
	if len(chats) != 2 || len(chats[0].Tools) == 0 {
		t.Fatalf("requests: %+v", chats)
	}
	msgs := chats[1].Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_calc" || result.Role != "tool" || result.ToolCallID != "call_calc" || result.Text() != "51.0" {
		t.Fatalf("the tool result did not go back with its call id: %+v / %+v", call, result)
	}
}

func TestAskWithTheOpenAIEngineRunsTheSameToolLoop(t *testing.T) {
	// A llama.cpp-like server at its base URL.
	srv := oat.New(t, oat.LlamaCpp)
	srv.Model("qwen3")
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`).WithID("call_calc").InPieces(3))
	srv.On(et.ToolResult("calculator")).Reply(et.TextChunks("15% of 340 ", "is 51."))
	out, errOut, code := runCLI(t, "", "ask", "--engine", "openai", "--host", srv.BaseURL, "--model", "qwen3", "--tools", "calculator", "What is 15% of 340?")
	if code != ExitOK || out != "15% of 340 is 51.\n" || !strings.Contains(errOut, "✓ calculator") || !strings.Contains(errOut, "→ 51.0") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	calculatorTurns(t, srv.Chats())

	// A real Ollama's /v1, with the script the Ollama engine's test plays.
	ol := fakeOllama(t)
	out, errOut, code = runCLI(t, "", "ask", "--engine", "openai", "--host", ol.URL+"/v1", "--model", "qwen3:8b", "--tools", "calculator", "--json", "What is 15% of 340?")
	res := decodeAsk(t, out)
	if code != ExitOK || res.Content != "15% of 340 is 51." || len(res.ToolResults) != 1 || res.Turns != 2 {
		t.Fatalf("exit %d %+v\n%s", code, res, errOut)
	}
	var second ot.Request
	for _, r := range ol.Requests() {
		if r.Path == "/v1/chat/completions" {
			second = r
		}
	}
	if second.Chat == nil || !strings.Contains(string(second.OpenAIBody), `"role":"tool"`) || !strings.Contains(string(second.OpenAIBody), `"tool_call_id":"call_`) {
		t.Fatalf("the result did not go back over /v1 with its call id: %s", second.OpenAIBody)
	}
	if last := second.Chat.Messages[len(second.Chat.Messages)-1]; last.ToolName != "calculator" || last.Content != "51.0" {
		t.Fatalf("Ollama read the result as %+v", last)
	}
}

func TestModelsWithTheOpenAIEngineListsV1Models(t *testing.T) {
	srv := oat.New(t, oat.VLLM)
	srv.AddModel(oat.ModelSpec{Name: "Qwen/Qwen3-8B", Window: 16384})
	out, errOut, code := runCLI(t, "", "models", "--engine", "openai", "--host", srv.BaseURL)
	// vLLM's list says nothing of what a model can do.
	if code != ExitOK || !strings.Contains(out, "Qwen/Qwen3-8B") || !strings.Contains(out, "unknown") {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "models", "--engine", "openai", "--host", srv.BaseURL, "--json")
	var models []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &models) != nil || len(models) != 1 || models[0]["name"] != "Qwen/Qwen3-8B" {
		t.Fatalf("--json: exit %d %s", code, out)
	}
	// What the OpenAI API cannot do is said plainly, exit 1.
	for _, args := range [][]string{{"models", "ps"}, {"models", "pull", "qwen3"}, {"models", "unload", "Qwen/Qwen3-8B"}} {
		_, errOut, code := runCLI(t, "", append(args, "--engine", "openai", "--host", srv.BaseURL)...)
		if code != ExitFailed || !strings.Contains(errOut, "OpenAI-compatible server at "+srv.BaseURL) {
			t.Errorf("%v: exit %d err %q", args, code, errOut)
		}
	}
	out, errOut, code = runCLI(t, "", "models", "show", "Qwen/Qwen3-8B", "--engine", "openai", "--host", srv.BaseURL)
	if code != ExitOK || !strings.Contains(out, "16,384 tokens (the window the server runs it with, fixed when the server loads the model, from vLLM's max_model_len)") || !strings.Contains(out, "The OpenAI-compatible server shows no chat template or default parameters.") {
		t.Fatalf("show: exit %d out %q err %q", code, out, errOut)
	}
}

// endpointSetup is a default Ollama, and a "lab" endpoint (an
// OpenAI-compatible server wanting labKey, given as ${LAB_KEY}).
func endpointSetup(t *testing.T) (*ot.Server, *oat.Server, string) {
	t.Helper()
	ol := fakeOllama(t)
	lab := oat.New(t, oat.OpenAI)
	lab.RequireKey(labKey)
	lab.Model("qwen3-32b")
	lab.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`).WithID("call_calc"))
	lab.On(et.ToolResult("calculator")).Reply(et.Text("51, from the lab."))
	cfg := writeFile(t, "config.toml", `host = "`+ol.URL+`"

[[endpoints]]
name = "lab"
engine = "openai"
host = "`+lab.BaseURL+`"
api_key = "${LAB_KEY}"
[endpoints.prices."qwen3-32b"]
input = 1000
output = 1000
`)
	t.Setenv("LAB_KEY", labKey)
	return ol, lab, cfg
}

func TestEndpointModelWithKeyFromTheEnvironment(t *testing.T) {
	ol, lab, cfg := endpointSetup(t)
	out, errOut, code := runCLI(t, "", "ask", "--config", cfg, "--model", "lab/qwen3-32b", "--tools", "calculator", "--json", "What is 15% of 340?")
	res := decodeAsk(t, out)
	if code != ExitOK || res.Content != "51, from the lab." || res.Turns != 2 {
		t.Fatalf("exit %d %+v\n%s", code, res, errOut)
	}
	calculatorTurns(t, lab.Chats())
	if len(ol.Chats()) != 0 {
		t.Fatal("the default server was asked")
	}
	for _, r := range lab.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+labKey {
			t.Fatalf("%s went without the key: %q", r.Path, r.Header.Get("Authorization"))
		}
	}
	if res.Usage.CostUSD == 0 {
		t.Fatalf("the endpoint's price was not applied: %+v", res.Usage)
	}
	// The endpoint's models are listed as lab/NAME beside the default's.
	out, _, code = runCLI(t, "", "models", "--config", cfg)
	if code != ExitOK || !strings.Contains(out, "qwen3:8b") || !strings.Contains(out, "lab/qwen3-32b") {
		t.Fatalf("models: exit %d\n%s", code, out)
	}
	// A model name with a slash that names no endpoint is the default
	// server's.
	_, errOut, code = runCLI(t, "", "ask", "--config", cfg, "--model", "hf.co/org/model", "hi")
	if code != ExitFailed || !strings.Contains(errOut, `"hf.co/org/model" is not available`) {
		t.Fatalf("registry path: exit %d %q", code, errOut)
	}
}

// The key never reaches the output: config show (text and JSON), --json
// answers, the errors of a refused or missing key, doctor.
func TestTheKeyIsNeverPrinted(t *testing.T) {
	_, lab, cfg := endpointSetup(t)
	var all strings.Builder
	run := func(args ...string) (string, string, int) {
		out, errOut, code := runCLI(t, "", args...)
		all.WriteString(out + errOut)
		return out, errOut, code
	}
	out, _, code := run("config", "show", "--config", cfg)
	if code != ExitOK || !strings.Contains(out, "from $LAB_KEY (set); hidden") {
		t.Fatalf("config show: %s", out)
	}
	run("config", "show", "--json", "--config", cfg)
	run("ask", "--json", "--config", cfg, "--model", "lab/qwen3-32b", "--tools", "calculator", "What is 15% of 340?")
	run("models", "--json", "--config", cfg)
	run("models", "show", "--json", "lab/qwen3-32b", "--config", cfg)
	run("doctor", "--config", cfg)

	// A refused key: the server's words and where the key is set.
	lab.RequireKey("sk-another-key-entirely")
	_, errOut, code := run("ask", "--config", cfg, "--model", "lab/qwen3-32b", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "refused the API key") || !strings.Contains(errOut, "api_key of endpoint lab (config "+cfg+":3)") {
		t.Fatalf("refused key: exit %d %q", code, errOut)
	}
	out, _, code = run("doctor", "--config", cfg)
	if code != ExitFailed || !strings.Contains(out, "✗ lab") || !strings.Contains(out, "check the key: api_key of endpoint lab (config "+cfg+":3)") {
		t.Fatalf("doctor with a refused key: exit %d\n%s", code, out)
	}
	// A variable that is not set names the variable.
	t.Setenv("LAB_KEY", "")
	os.Unsetenv("LAB_KEY")
	_, errOut, code = run("ask", "--config", cfg, "--model", "lab/qwen3-32b", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "${LAB_KEY}, but LAB_KEY is not set") {
		t.Fatalf("unset variable: exit %d %q", code, errOut)
	}
	out, _, _ = run("doctor", "--config", cfg)
	if !strings.Contains(out, "fix: export LAB_KEY=...") {
		t.Fatalf("doctor with the variable unset:\n%s", out)
	}
	if strings.Contains(all.String(), labKey) || strings.Contains(all.String(), "0123456789-secret") {
		t.Fatalf("the key was printed:\n%s", all.String())
	}
}

func TestDoctorForBothEnginesAndEveryEndpoint(t *testing.T) {
	_, lab, cfg := endpointSetup(t)
	out, _, code := runCLI(t, "", "doctor", "--config", cfg, "--model", "lab/qwen3-32b", "--db", filepath.Join(t.TempDir(), "j.db"))
	for _, want := range []string{"✓ server    Ollama 0.17.4 at", "✓ lab       endpoint: OpenAI at " + lab.BaseURL, "✓ model     lab/qwen3-32b", "✓ tools     the server does not say what qwen3-32b can do: jarvis tries native tool calls"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q", want)
		}
	}
	if code != ExitOK || t.Failed() {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The default engine is an OpenAI-compatible server that is not
	// running: the fix names its start commands, not Ollama's.
	out, _, code = runCLI(t, "", "doctor", "--engine", "openai", "--host", oat.ClosedURL(t)+"/v1")
	if code != ExitFailed || !strings.Contains(out, "✗ server") || !strings.Contains(out, "llama-server") || strings.Contains(out, "ollama serve") {
		t.Fatalf("openai down: exit %d\n%s", code, out)
	}
	// A model the OpenAI-compatible server does not serve: pick one it
	// lists (there is nothing to pull).
	srv := oat.New(t, oat.VLLM)
	srv.Model("served-model")
	out, _, code = runCLI(t, "", "doctor", "--engine", "openai", "--host", srv.BaseURL, "--model", "absent")
	if code != ExitFailed || !strings.Contains(out, "fix: pick one the server serves with --model or model in the config: served-model") || strings.Contains(out, "pull") {
		t.Fatalf("openai missing model: exit %d\n%s", code, out)
	}
	// An endpoint that is down fails with its own fix and line.
	down := writeFile(t, "down.toml", "[[endpoints]]\nname = \"attic\"\nengine = \"ollama\"\nhost = \""+ot.ClosedURL(t)+"\"\n")
	out, _, code = runCLI(t, "", "doctor", "--config", down, "--host", lab.URL)
	if code != ExitFailed || !strings.Contains(out, "✗ attic") || !strings.Contains(out, "start Ollama with 'ollama serve' (or open the Ollama app) on that machine, or correct the host of endpoint attic (config "+down+":1)") {
		t.Fatalf("endpoint down: exit %d\n%s", code, out)
	}
}

func TestBadEndpointIsAConfigError(t *testing.T) {
	cfg := writeFile(t, "config.toml", "[[endpoints]]\nname = \"lab\"\nengine = \"tgi\"\nhost = \"h\"\n")
	_, errOut, code := runCLI(t, "", "models", "--config", cfg)
	if code != ExitUsage || !strings.Contains(errOut, cfg+":3") || !strings.Contains(errOut, `unknown engine "tgi"`) {
		t.Fatalf("exit %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "models", "--engine", "vllm")
	if code != ExitUsage || !strings.Contains(errOut, `unknown engine "vllm"`) || !strings.Contains(errOut, "flag --engine") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

// A task made for an endpoint's model records that server, and runs there
// with the endpoint's key, whatever the running process's own model is.
func TestScheduledTaskRunsOnItsEndpointWithItsKey(t *testing.T) {
	ol, lab, cfg := endpointSetup(t)
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, "", "--db", db, "--config", cfg, "--model", "lab/qwen3-32b", "scheduler", "create", "What is 15% of 340?",
		"--type", "interval", "--value", "1h", "--tools", "calculator")
	m := createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil || m[5] != "openai "+lab.BaseURL+" · qwen3-32b" {
		t.Fatalf("create: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "", "--db", db, "--config", cfg, "scheduler", "run", m[1])
	if code != ExitOK || !strings.Contains(out+errOut, "51, from the lab.") {
		t.Fatalf("run: exit %d %q %q", code, out, errOut)
	}
	calculatorTurns(t, lab.Chats())
	for _, r := range lab.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+labKey {
			t.Fatalf("%s went without the endpoint's key", r.Path)
		}
	}
	if len(ol.Chats()) != 0 {
		t.Fatal("the task ran on the default server")
	}
}
