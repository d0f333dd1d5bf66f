package enginetest

import (
	"strings"
	"testing"
)

func conversation(msgs ...Message) *Call {
	return &Call{Path: "/api/chat", Model: "qwen3:latest", Messages: msgs, Tools: []string{"calculator"}, Stream: true,
		SameModel: func(name string) bool { return name == "qwen3" || name == "qwen3:latest" }}
}

func TestMatchersReadTheConversation(t *testing.T) {
	asked := conversation(Message{Role: "system", Content: "Be Brief."}, Message{Role: "user", Content: "What is 15% of 340?"})
	answered := conversation(Message{Role: "user", Content: "What is 15% of 340?"}, Message{Role: "assistant"},
		Message{Role: "tool", ToolName: "calculator", Content: "Error: division by zero"})
	for _, c := range []struct {
		m             Matcher
		asked, answer bool
	}{
		{UserSays("15% OF"), true, false},
		{UserMatches(`\d+% of \d+`), true, false},
		{QuestionContains("15%"), true, true},
		{ToolResult("calculator"), false, true},
		{ToolResult(""), false, true},
		{ToolResult("weather"), false, false},
		{ToolResultContains("calculator", "DIVISION"), false, true},
		{Turn(1), true, false},
		{Turn(2), false, true},
		{ModelIs("qwen3"), true, true},
		{ModelIs("llama3"), false, false},
		{OffersTool("calculator"), true, true},
		{NoTools(), false, false},
		{SystemContains("brief"), true, false},
		{Endpoint("/api/chat"), true, true},
		{Streaming(false), false, false},
		{Not(Turn(1)), false, true},
		{AnyOf(Turn(1), ToolResult("calculator")), true, true},
	} {
		if got := c.m.match(asked); got != c.asked {
			t.Errorf("%s on the question: %v", c.m, got)
		}
		if got := c.m.match(answered); got != c.answer {
			t.Errorf("%s on the tool result: %v", c.m, got)
		}
	}
}

func TestRulesAreTriedInOrderAndUsedUp(t *testing.T) {
	var s Scenario
	c := conversation(Message{Role: "user", Content: "hello"})
	if _, ok := s.Pick(c); ok {
		t.Fatal("an empty scenario answered")
	}
	if msg := NoMatch("stand-in", c); msg != `stand-in: no scripted reply matches this request (last message: user: "hello"); add a rule with On or a reply with Default` {
		t.Errorf("no match: %s", msg)
	}
	s.On(UserSays("bye")).Reply(Text("Bye."))
	s.On(UserSays("hello")).Times(1).Reply(Text("Hi."))
	s.On().ReplyWith(func(c *Call) []Step { return []Step{Text(c.Model)} })
	s.Default(Text("default"))
	for i, want := range []string{"rule 2 (user says \"hello\")", "rule 3 (any request)"} {
		p, ok := s.Pick(c)
		if !ok || p.Label != want {
			t.Errorf("pick %d: %q, %v", i, p.Label, ok)
		}
	}
	if p, _ := s.Pick(c); len(p.Steps) != 1 || p.Steps[0].chunks[0] != "qwen3:latest" {
		t.Errorf("ReplyWith steps: %+v", p.Steps)
	}
}

func TestScriptRulesBuildAndSayWhereTheyAreWrong(t *testing.T) {
	var f struct {
		ScriptRules
	}
	err := DecodeScript([]byte(`{"rules": [
	  {"when": {"user_says": "x", "streaming": false}, "times": 2, "finish_reason": "length", "no_usage": true,
	   "usage": {"prompt_tokens": 7, "eval_duration": "2ms"},
	   "reply": [{"raw": "<think>a</think>b"}, {"tool_call": {"name": "f", "arguments": "{\"a\": 1}", "pieces": 3}}]}],
	  "default": {"reply": [{"text": "d"}]}}`), &f)
	if err != nil {
		t.Fatal(err)
	}
	rules, fallback, err := f.Build()
	if err != nil || len(rules) != 1 || fallback == nil {
		t.Fatalf("%v, %d rules, default %v", err, len(rules), fallback)
	}
	r := rules[0]
	if r.times != 2 || r.finishReason != "length" || !r.noUsage || r.usage.PromptTokens != 7 || r.usage.EvalDuration.Milliseconds() != 2 ||
		r.steps[0].kind != stepRaw || r.steps[1].calls[0] != (ScriptedCall{Name: "f", Arguments: `{"a": 1}`, Pieces: 3}) || len(r.when) != 2 {
		t.Errorf("rule = %+v", r)
	}
	for _, c := range []struct{ script, want string }{
		{"{\n\"rules\": [{\"when\": {\"user_say\": \"x\"}, \"reply\": [{\"text\": \"a\"}]}]}", `line 2: unknown field "user_say"`},
		{`{"rules": [{"reply": [{"text": "a", "raw": "b"}]}]}`, "rule 1: reply step 1: a step has exactly one of"},
		{`{"rules": [{"reply": [{"tool_call": {"name": "f", "pieces": -1}}]}]}`, "tool_call: pieces must be a positive number"},
		{`{"rules": [{"when": {"endpoint": "chat"}, "reply": [{"text": "a"}]}]}`, "endpoint must be a path"},
	} {
		var f struct{ ScriptRules }
		err := DecodeScript([]byte(c.script), &f)
		if err == nil {
			_, _, err = f.Build()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.script, err, c.want)
		}
	}
}

func TestStepBuildersRefuseMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("ToolCall with a non-object", func() { ToolCall("f", "[1,2]") })
	mustPanic("InPieces on text", func() { Text("x").InPieces(2) })
	mustPanic("WithHeader on text", func() { Text("x").WithHeader("a", "b") })
	if st := BrokenToolCall("f", `{"a":`); st.calls[0].Arguments != `{"a":` {
		t.Errorf("broken call: %+v", st)
	}
	if st := ErrorBody(429, "{}").WithHeader("Retry-After", "20"); st.fail.Header.Get("Retry-After") != "20" || !st.fail.AsIs {
		t.Errorf("header: %+v", st.fail)
	}
}
