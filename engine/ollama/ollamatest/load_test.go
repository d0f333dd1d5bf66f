package ollamatest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

func TestDemoScriptPlaysTheCalculatorRoundTrip(t *testing.T) {
	sc, err := LoadScript("testdata/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(t)
	srv.Use(sc)
	for _, r := range sc.Rules {
		r.ChunkDelay(0) // the demo is paced for people; the test need not wait
	}
	sc.Fallback.ChunkDelay(0)

	calc := `[{"type":"function","function":{"name":"calculator","parameters":{"type":"object","properties":{"expression":{"type":"string"}}}}}]`
	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"qwen3:8b","messages":[{"role":"user","content":"What is 15% of 340?"}],"tools":`+calc+`}`)
	var call *api.ToolCall
	var thinking strings.Builder
	for _, l := range lines(body) {
		var r api.ChatResponse
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		thinking.WriteString(r.Message.Thinking)
		if len(r.Message.ToolCalls) > 0 {
			call = &r.Message.ToolCalls[0]
		}
	}
	if call == nil || call.Function.Name != "calculator" || call.Function.Arguments.String() != `{"expression":"15/100*340"}` || thinking.Len() == 0 {
		t.Fatalf("first turn:\n%s", body)
	}

	second := `{"model":"qwen3:8b","tools":` + calc + `,"messages":[{"role":"user","content":"What is 15% of 340?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"` + call.ID + `","function":{"name":"calculator","arguments":{"expression":"15/100*340"}}}]},` +
		`{"role":"tool","tool_name":"calculator","tool_call_id":"` + call.ID + `","content":"51"}]}`
	_, _, body = post(t, srv.URL, "/api/chat", second)
	if !strings.Contains(body, `"content":" **51**."`) {
		t.Errorf("second turn:\n%s", body)
	}

	// The coder model writes its call in its own markup, which Ollama's
	// qwen3-coder parser reads; the text before it stays content.
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"qwen3-coder:30b","messages":[{"role":"user","content":"What is 15% of 340?"}],"tools":`+calc+`}`)
	if !strings.Contains(body, `"tool_calls":[{"id":"call_`) || !strings.Contains(body, `"name":"calculator","arguments":{"expression":"15/100*340"}}}]`) ||
		!strings.Contains(body, `"content":" calculator."`) || strings.Contains(body, "<function=") {
		t.Errorf("coder turn:\n%s", body)
	}

	// A model without native tools gets the text protocol's version.
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"gemma2:2b","messages":[{"role":"user","content":"What is 15% of 340?"}]}`)
	if !strings.Contains(body, `"content":"\nAction:"`) {
		t.Errorf("react turn:\n%s", body)
	}
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"gemma2:2b","messages":[{"role":"user","content":"tell me a joke"}]}`)
	if !strings.Contains(body, `"content":"This"`) {
		t.Errorf("default reply:\n%s", body)
	}
}

func TestParseScriptFeatures(t *testing.T) {
	sc, err := ParseScript([]byte(`{
  "version": "1.2.3",
  "models": [{"name": "m", "capabilities": ["completion", "tools"]}],
  "rules": [
    {"when": {"user_says": "ids", "offers_tool": "f"},
     "reply": [{"tool_calls": [
        {"name": "f", "arguments": "{\"z\": 1, \"a\": 2}", "id": ""},
        {"name": "f", "arguments": {"b": true}, "id": "call_mine"}]}]},
    {"when": {"user_says": "numbers"}, "times": 1, "finish_reason": "length",
     "usage": {"prompt_tokens": 7, "completion_tokens": 2, "eval_duration": "2ms"},
     "reply": [{"chunks": ["a", "b"]}]},
    {"when": {"user_says": "proxy"}, "reply": [{"error": {"status": 502, "body": "<h1>Bad Gateway</h1>"}}]},
    {"when": {"endpoint": "/api/generate", "system_contains": "terse"},
     "reply": [{"delay": "1ms"}, {"text": "gen"}]}
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(t)
	srv.Use(sc)
	tools := `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]`

	_, _, body := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"ids"}]`+tools+`}`)
	if !strings.Contains(body, `"tool_calls":[{"function":{"index":0,"name":"f","arguments":{"z":1,"a":2}}},{"id":"call_mine","function":{"index":1,"name":"f","arguments":{"b":true}}}]`) {
		t.Errorf("tool calls:\n%s", body)
	}
	_, _, body = post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"numbers"}]}`)
	last := lines(body)[2]
	if !strings.Contains(last, `"done_reason":"length","prompt_eval_count":7,"eval_count":2,"eval_duration":2000000}`) {
		t.Errorf("final chunk %s", last)
	}
	// times: 1 — the rule is used up, and nothing else matches.
	if status, _, _ := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"numbers"}]}`); status != 500 {
		t.Errorf("used-up rule answered again: %d", status)
	}
	if status, ctype, body := post(t, srv.URL, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"proxy"}]}`); status != 502 || ctype != "text/plain; charset=utf-8" || body != "<h1>Bad Gateway</h1>" {
		t.Errorf("raw error: %d %q %s", status, ctype, body)
	}
	_, _, body = post(t, srv.URL, "/api/generate", `{"model":"m","system":"be terse","prompt":"x"}`)
	if !strings.Contains(body, `"response":"gen"`) {
		t.Errorf("generate:\n%s", body)
	}
	if status, _, body := post(t, srv.URL, "/api/chat", `{"model":"m","system":"be terse","messages":[{"role":"user","content":"x"}]}`); status != 500 {
		t.Errorf("endpoint matcher let a chat through: %d %s", status, body)
	}
}

func TestParseScriptErrorsSayWhere(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"syntax", "{\n  \"rules\": [\n    {\"reply\": [{\"text\": \"a\"}]},\n  ]\n}", "line 4: invalid character ']'"},
		{"unknown key", "{\n\"rules\": [{\"when\": {\"user_say\": \"x\"}, \"reply\": [{\"text\": \"a\"}]}]}", `line 2: unknown field "user_say"`},
		{"wrong type", "{\"models\": [{\"name\": \"m\", \"size\": \"big\"}]}", "line 1: cannot unmarshal string"},
		{"two keys in a step", `{"rules": [{"reply": [{"text": "a", "think": "b"}]}]}`, "rule 1: reply step 1: a step has exactly one of"},
		{"empty step", `{"rules": [{"reply": [{}]}]}`, "(this one has 0)"},
		{"no reply", `{"rules": [{"when": {"turn": 2}}]}`, `rule 1: "reply" needs at least one step`},
		{"bad regexp", `{"rules": [{"when": {"user_matches": "("}, "reply": [{"text": "a"}]}]}`, "rule 1: user_matches: error parsing regexp"},
		{"arguments not an object", `{"rules": [{"reply": [{"tool_call": {"name": "f", "arguments": [1]}}]}]}`, "tool_call: arguments must be a JSON object"},
		{"call without a name", `{"rules": [{"reply": [{"tool_call": {"arguments": {}}}]}]}`, `tool_call: "name" is required`},
		{"bad duration", `{"rules": [{"chunk_delay": "fast", "reply": [{"text": "a"}]}]}`, `invalid duration "fast"`},
		{"bad status", `{"rules": [{"reply": [{"error": {"status": 200, "message": "x"}}]}]}`, "error status must be from 400 to 599"},
		{"message and body", `{"rules": [{"reply": [{"error": {"status": 500, "message": "x", "body": "y"}}]}]}`, `not both`},
		{"bad endpoint", `{"rules": [{"when": {"endpoint": "api/embed"}, "reply": [{"text": "a"}]}]}`, `endpoint must be a path such as "/api/chat"`},
		{"nameless model", `{"models": [{"size": 1}]}`, "model 1: a name is required"},
		{"default", `{"default": {"reply": []}}`, `default: "reply" needs at least one step`},
		{"bad template", `{"models": [{"name": "m", "template": "{{ .Nope"}]}`, "model 1 (m): template:"},
		{"unknown template", `{"models": [{"name": "m", "template": "chatml-x"}]}`, `no template "chatml-x" is shipped with Ollama (it has alfred, alpaca, chatml,`},
		{"unknown renderer", `{"models": [{"name": "m", "renderer": "qwen9"}]}`, `renderer "qwen9" is not one Ollama has built in`},
		{"unknown parser", `{"models": [{"name": "m", "parser": "qwen9"}]}`, `parser "qwen9" is not one Ollama has built in`},
		{"negative window", `{"models": [{"name": "m", "context_length": -1}]}`, "context_length must be a positive number"},
		{"negative default window", `{"default_context_length": -5}`, "default_context_length must be a positive number"},
		{"bad keep_alive", `{"keep_alive": "soon"}`, `keep_alive "soon" is not a duration`},
		{"bad load time", `{"models": [{"name": "m", "load_time": 5}]}`, "a duration must be a string"},
		{"bad layer", `{"pullable": [{"name": "p", "layers": [0]}]}`, "pullable model 1 (p): layer sizes must be positive"},
		{"unknown pull key", `{"pullable": [{"name": "p", "speed": 3}]}`, `unknown field "speed"`},
	}
	for _, c := range cases {
		_, err := ParseScript([]byte(c.script))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if _, err := LoadScript("testdata/missing.json"); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

func TestABrokenTemplateFailsAtSetup(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a model with a broken template was added")
		}
	}()
	New(t).AddModel(ModelSpec{Name: "m", Template: "{{ if }}"})
}
