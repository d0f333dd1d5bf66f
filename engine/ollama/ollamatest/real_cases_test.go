package ollamatest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// The stand-in is held to what a real Ollama does with the same model and
// the same request. testdata/real holds what a real server (0.17.4, with
// the scripted models of ../shared/real-ollama) answered; the tests here
// check the stand-in against it without a server, and the real tier
// (real_test.go, make test-real) checks it against a live one and, with
// -update, records the files again.

// family is a model whose prompt Ollama's own code makes: a template it
// ships (TEMPLATE) or a built-in renderer (RENDERER, with its PARSER).
type family struct {
	name     string
	template string // a shipped template's name
	renderer string
	tools    bool // the template renders tools (the server accepts them)
}

// families are the models whose renderings are compared, five with tools.
var families = []family{
	{name: "command-r", template: "command-r", tools: true},
	{name: "qwen3-coder", renderer: "qwen3-coder", tools: true},
	{name: "qwen3-vl-instruct", renderer: "qwen3-vl-instruct", tools: true},
	{name: "olmo3", renderer: "olmo3", tools: true},
	{name: "lfm2", renderer: "lfm2", tools: true},
	{name: "llama3-instruct", template: "llama3-instruct"},
	{name: "gemma3-instruct", template: "gemma3-instruct"},
	{name: "mistral-instruct", template: "mistral-instruct"},
}

// spec is the family's model on the stand-in. The scripted GGUF is a
// llama, so the family the server knows it by is "llama".
func (f family) spec() ollamatest.ModelSpec {
	caps := []string{"completion"}
	if f.tools {
		caps = append(caps, "tools")
	}
	return ollamatest.ModelSpec{Name: "render-" + f.name, Family: "llama", Capabilities: caps,
		Template: f.template, Renderer: f.renderer, Parser: f.renderer}
}

// conversation is what each family renders: a system prompt, a question,
// a tool call and its result, an answer and a follow-up; the tool-less
// families get it without the tool messages.
func (f family) conversation() api.ChatRequest {
	args := api.NewToolCallFunctionArguments()
	args.Set("expression", "15/100*340")
	msgs := []api.Message{
		{Role: "system", Content: "You are a careful assistant. Use the calculator for arithmetic."},
		{Role: "user", Content: "What is 15% of 340?"},
	}
	if f.tools {
		msgs = append(msgs,
			api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "call_1", Function: api.ToolCallFunction{Name: "calculator", Arguments: args}}}},
			api.Message{Role: "tool", ToolName: "calculator", ToolCallID: "call_1", Content: "51.0"})
	}
	msgs = append(msgs,
		api.Message{Role: "assistant", Content: "15% of 340 is 51."},
		api.Message{Role: "user", Content: "And 20%?"})
	req := api.ChatRequest{Model: "render-" + f.name, Messages: msgs, DebugRenderOnly: true}
	if f.tools {
		req.Tools = []api.Tool{calculatorTool()}
	}
	return req
}

func calculatorTool() api.Tool {
	props := api.NewToolPropertiesMap()
	props.Set("expression", api.ToolProperty{Type: api.PropertyType{"string"}, Description: "An arithmetic expression, e.g. 2+2"})
	return api.Tool{Type: "function", Function: api.ToolFunction{
		Name: "calculator", Description: "Evaluates an arithmetic expression exactly.",
		Parameters: api.ToolFunctionParameters{Type: "object", Required: []string{"expression"}, Properties: props},
	}}
}

func renderingFile(f family) string {
	return filepath.Join("testdata", "real", "render-"+f.name+".txt")
}

// standInRendering is the prompt the stand-in renders for the family's
// conversation, through its HTTP API as a client would ask for it.
func standInRendering(t *testing.T, f family) string {
	t.Helper()
	srv := ollamatest.New(t)
	srv.AddModel(f.spec())
	return renderOn(t, srv.URL, f.conversation())
}

// renderOn asks a server for the rendering of req (_debug_render_only).
func renderOn(t *testing.T, url string, req api.ChatRequest) string {
	t.Helper()
	status, body := postJSON(t, url+"/api/chat", req)
	var resp api.ChatResponse
	if err := json.Unmarshal(body, &resp); err != nil || status != 200 || resp.DebugInfo == nil {
		t.Fatalf("%s: %d %s", req.Model, status, body)
	}
	return resp.DebugInfo.RenderedTemplate
}

func TestRenderingsAreTheRealServers(t *testing.T) {
	withTools := 0
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			want, err := os.ReadFile(renderingFile(f))
			if err != nil {
				t.Fatalf("%v (record it with make test-real UPDATE=1)", err)
			}
			if got := standInRendering(t, f); got != string(want) {
				t.Errorf("the stand-in renders\n%s\nthe real server rendered\n%s", got, want)
			}
		})
		if f.tools {
			withTools++
		}
	}
	if withTools < 3 {
		t.Errorf("only %d families render tools", withTools)
	}
}

// A parse case is a reply a real scripted model wrote, raw, and what the
// real server sent for it.
type parseCase struct {
	Name string `json:"name"`
	// The model: its template and parser (as in its Modelfile) and its
	// capabilities as the real server reported them.
	Template     string   `json:"template"`
	Parser       string   `json:"parser,omitempty"`
	Capabilities []string `json:"capabilities"`
	// Request is the chat request sent, streamed; Raw the model's output
	// as the real server streamed it with no parsing (/api/generate,
	// "raw": true).
	Request api.ChatRequest `json:"request"`
	Raw     []string        `json:"raw"`
	// Stream is what the real server streamed for the request, Whole
	// what it answered with "stream": false.
	Stream []chunk `json:"stream"`
	Whole  chunk   `json:"whole"`
}

// chunk is a chat answer's part the comparison looks at: not its time,
// metrics or tool-call ids, which differ from run to run.
type chunk struct {
	Content    string     `json:"content,omitempty"`
	Thinking   string     `json:"thinking,omitempty"`
	Calls      []callSeen `json:"tool_calls,omitempty"`
	Done       bool       `json:"done,omitempty"`
	DoneReason string     `json:"done_reason,omitempty"`
}

type callSeen struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func chunkOf(r api.ChatResponse) chunk {
	c := chunk{Content: r.Message.Content, Thinking: r.Message.Thinking, Done: r.Done, DoneReason: r.DoneReason}
	for _, tc := range r.Message.ToolCalls {
		// As a map, so keys compare in one order: Ollama's parsers fill
		// arguments from a Go map, in no fixed order.
		args, _ := json.Marshal(tc.Function.Arguments.ToMap())
		c.Calls = append(c.Calls, callSeen{Index: tc.Function.Index, Name: tc.Function.Name, Arguments: args})
	}
	return c
}

func parseFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "real", "parse-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded parse cases (record them with make test-real UPDATE=1): %v", err)
	}
	return files
}

func readParseCase(t *testing.T, file string) parseCase {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c parseCase
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

// standInAnswers plays a parse case on the stand-in: the same model
// (template, parser, capabilities) writing the same raw pieces, asked the
// same request streamed and whole.
func standInAnswers(t *testing.T, c parseCase) (stream []chunk, whole chunk) {
	t.Helper()
	srv := ollamatest.New(t)
	srv.AddModel(ollamatest.ModelSpec{Name: c.Request.Model, Family: "llama", Capabilities: c.Capabilities, Template: c.Template, Parser: c.Parser})
	srv.Default(et.RawChunks(c.Raw...))
	return chatChunks(t, srv.URL, c.Request)
}

// chatChunks sends req streamed and whole and returns the answers' chunks.
func chatChunks(t *testing.T, url string, req api.ChatRequest) (stream []chunk, whole chunk) {
	t.Helper()
	on, off := true, false
	req.Stream = &on
	status, body := postJSON(t, url+"/api/chat", req)
	if status != 200 {
		t.Fatalf("streamed: %d %s", status, body)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r api.ChatResponse
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		stream = append(stream, chunkOf(r))
	}
	req.Stream = &off
	status, body = postJSON(t, url+"/api/chat", req)
	var r api.ChatResponse
	if err := json.Unmarshal(body, &r); err != nil || status != 200 {
		t.Fatalf("whole: %d %s", status, body)
	}
	return stream, chunkOf(r)
}

func TestRawTextParsesAsTheRealServerParsedIt(t *testing.T) {
	calls := 0
	for _, file := range parseFiles(t) {
		c := readParseCase(t, file)
		t.Run(c.Name, func(t *testing.T) {
			stream, whole := standInAnswers(t, c)
			if !slices.EqualFunc(stream, c.Stream, sameChunk) {
				t.Errorf("streamed, the stand-in sent\n%s\nthe real server sent\n%s", show(stream), show(c.Stream))
			}
			if !sameChunk(whole, c.Whole) {
				t.Errorf("whole, the stand-in answered\n%s\nthe real server answered\n%s", show([]chunk{whole}), show([]chunk{c.Whole}))
			}
		})
		for _, ch := range c.Stream {
			calls += len(ch.Calls)
		}
	}
	if calls == 0 {
		t.Error("no recorded case has a tool call")
	}
}

func sameChunk(a, b chunk) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func show(cs []chunk) string {
	var b strings.Builder
	for _, c := range cs {
		j, _ := json.Marshal(c)
		b.WriteString("  " + string(j) + "\n")
	}
	return b.String()
}

func postJSON(t *testing.T, url string, v any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
