//go:build real

package ollamatest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/internal/realollama"
)

// These run against a real Ollama (make test-real): the stand-in's
// renderings and its parsing of raw model text must be the real server's.
// With UPDATE=1 they record testdata/real, which the hermetic tests in
// real_cases_test.go check the stand-in against.

// updating says to record testdata/real again from the real server
// (make test-real UPDATE=1).
func updating() bool { return os.Getenv("JARVIS_REAL_UPDATE") != "" }

// modelfile is the family's model on the real server.
func (f family) modelfile(t *testing.T) string {
	t.Helper()
	mf := "FROM ./scripted.gguf\n"
	if f.renderer != "" {
		return mf + "RENDERER " + f.renderer + "\nPARSER " + f.renderer + "\n"
	}
	tmpl, err := ollamatest.ShippedTemplate(f.template)
	if err != nil {
		t.Fatal(err)
	}
	return mf + `TEMPLATE """` + tmpl + `"""` + "\n"
}

func TestRealRenderingsAreTheStandIns(t *testing.T) {
	files := map[string]string{}
	for _, f := range families {
		files["render-"+f.name] = f.modelfile(t)
	}
	srv := realollama.Start(t, realollama.Options{Models: []string{"scripted"}, Modelfiles: files})
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			real := renderOn(t, srv.URL, f.conversation())
			if got := standInRendering(t, f); got != real {
				t.Errorf("the stand-in renders\n%s\nthe real server renders\n%s", got, real)
			}
			if caps := showCapabilities(t, srv.URL, "render-"+f.name); !slices.Equal(caps, f.spec().Capabilities) {
				t.Errorf("the real server says the model can %v; the stand-in's model %v", caps, f.spec().Capabilities)
			}
			record(t, renderingFile(f), []byte(real))
		})
	}
}

// record writes a recording with -update, and otherwise checks that the
// recording is still what the real server says.
func record(t *testing.T, file string, got []byte) {
	t.Helper()
	if updating() {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old, err := os.ReadFile(file); err != nil || string(old) != string(got) {
		t.Errorf("%s is not what the real server says now (make test-real UPDATE=1 records it)", file)
	}
}

func showCapabilities(t *testing.T, url, model string) []string {
	t.Helper()
	status, body := postJSON(t, url+"/api/show", api.ShowRequest{Model: model})
	var shown api.ShowResponse
	if err := json.Unmarshal(body, &shown); err != nil || status != 200 {
		t.Fatalf("show %s: %d %s", model, status, body)
	}
	caps := make([]string, len(shown.Capabilities))
	for i, c := range shown.Capabilities {
		caps[i] = string(c)
	}
	return caps
}

// rawScenarios are replies the scripted models write as they are: the
// markup of tool calls and thinking that the server's parsers read.
var rawScenarios = []struct{ id, reply string }{
	{"call", "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}\n</tool_call>"},
	{"call-then-text", "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"3*3\"}}\n</tool_call>\nThat should do it."},
	{"text-then-call", "Let me work it out. <tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"7-1\"}}\n</tool_call>"},
	{"unknown-tool", "<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
	{"two-calls", "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2*5\"}}\n</tool_call>"},
	{"two-args", "<tool_call>\n{\"name\": \"convert\", \"arguments\": {\"value\": 5, \"unit\": \"km\"}}\n</tool_call>"},
	{"coder-call", "<tool_call>\n<function=calculator>\n<parameter=expression>\n2+2\n</parameter>\n</function>\n</tool_call>"},
	{"plain", "Just an answer, no calls."},
}

// rawModels are the scripted models that write them: the generic parsers
// (the tool-call tag of the template, the thinking tags it implies) and
// built-in ones.
var rawModels = []struct {
	suffix, parser string
	think          bool
}{
	{"-generic", "", false},
	{"-qwen3", "qwen3", false},
	{"-coder", "qwen3-coder", false},
	{"-think", "", true},
	{"-think-qwen3", "qwen3-thinking", true},
}

// rawCases pair them: which model writes which reply, offered tools or not.
var rawCases = []struct {
	model, scenario string
	tools, think    bool
}{
	{"-generic", "call", true, false},
	{"-generic", "call", false, false},
	{"-generic", "call-then-text", true, false},
	{"-generic", "text-then-call", true, false},
	{"-generic", "unknown-tool", true, false},
	{"-generic", "two-calls", true, false},
	{"-generic", "two-args", true, false},
	{"-generic", "plain", true, false},
	{"-qwen3", "call", true, false},
	{"-qwen3", "call", false, false},
	{"-qwen3", "call-then-text", true, false},
	{"-qwen3", "text-then-call", true, false},
	{"-qwen3", "unknown-tool", true, false},
	{"-qwen3", "two-calls", true, false},
	{"-coder", "coder-call", true, false},
	{"-coder", "plain", true, false},
	{"-think", "call", true, true},
	{"-think", "plain", false, true},
	{"-think-qwen3", "call", true, true},
}

func rawSpec() map[string]any {
	var scenarios, models []map[string]any
	for _, s := range rawScenarios {
		scenarios = append(scenarios, map[string]any{"id": s.id, "triggers": []string{"<<" + s.id + ">>"}, "reply": s.reply,
			"think_reply": "Thinking about " + s.id + " first."})
	}
	for _, m := range rawModels {
		entry := map[string]any{"suffix": m.suffix, "default": "plain", "think": m.think}
		if m.parser != "" {
			entry["parser"] = m.parser
		}
		models = append(models, entry)
	}
	return map[string]any{"scenarios": scenarios, "models": models}
}

func convertTool() api.Tool {
	props := api.NewToolPropertiesMap()
	props.Set("value", api.ToolProperty{Type: api.PropertyType{"number"}})
	props.Set("unit", api.ToolProperty{Type: api.PropertyType{"string"}})
	return api.Tool{Type: "function", Function: api.ToolFunction{Name: "convert", Description: "Converts a length.",
		Parameters: api.ToolFunctionParameters{Type: "object", Required: []string{"value", "unit"}, Properties: props}}}
}

func TestRealRawTextParsesAsOnTheStandIn(t *testing.T) {
	var names []string
	for _, m := range rawModels {
		names = append(names, "scripted"+m.suffix)
	}
	srv := realollama.Start(t, realollama.Options{Spec: rawSpec(), Models: names})
	if updating() {
		old, _ := filepath.Glob(filepath.Join("testdata", "real", "parse-*.json"))
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	for _, rc := range rawCases {
		model := "scripted" + rc.model
		name := strings.TrimPrefix(rc.model, "-") + "-" + rc.scenario
		if !rc.tools {
			name += "-no-tools"
		}
		t.Run(name, func(t *testing.T) {
			think := rc.think
			req := api.ChatRequest{Model: model, Think: &api.ThinkValue{Value: think},
				Messages: []api.Message{{Role: "user", Content: "Please answer <<" + rc.scenario + ">>."}}}
			if rc.tools {
				req.Tools = []api.Tool{calculatorTool(), convertTool()}
			}
			state := rc.scenario + ".reply"
			if think {
				state += ".think"
			}
			c := parseCase{Name: name, Template: srv.Template(t, model), Capabilities: showCapabilities(t, srv.URL, model),
				Request: req, Raw: rawPieces(t, srv.URL, model, state)}
			for _, m := range rawModels {
				if "scripted"+m.suffix == model {
					c.Parser = m.parser
				}
			}
			c.Stream, c.Whole = chatChunks(t, srv.URL, req)
			stream, whole := standInAnswers(t, c)
			if !slices.EqualFunc(stream, c.Stream, sameChunk) {
				t.Errorf("raw %q\nstreamed, the stand-in sent\n%s\nthe real server sent\n%s", c.Raw, show(stream), show(c.Stream))
			}
			if !sameChunk(whole, c.Whole) {
				t.Errorf("raw %q\nwhole, the stand-in answered\n%s\nthe real server answered\n%s", c.Raw, show([]chunk{whole}), show([]chunk{c.Whole}))
			}
			b, _ := json.MarshalIndent(c, "", "  ")
			record(t, filepath.Join("testdata", "real", "parse-"+name+".json"), append(b, '\n'))
		})
	}
}

// rawPieces is what the model writes after the scripted state token, as
// the server streams it unparsed: a raw /api/generate whose prompt is
// that token.
func rawPieces(t *testing.T, url, model, state string) []string {
	t.Helper()
	off := false
	status, body := postJSON(t, url+"/api/generate", api.GenerateRequest{Model: model, Raw: true, Prompt: "<|s:" + state + "|>", Think: &api.ThinkValue{Value: off}})
	if status != 200 {
		t.Fatalf("raw generate: %d %s", status, body)
	}
	var pieces []string
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r api.GenerateResponse
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Response != "" {
			pieces = append(pieces, r.Response)
		}
	}
	if len(pieces) == 0 {
		t.Fatalf("the model wrote nothing after %s: %s", state, body)
	}
	return pieces
}
