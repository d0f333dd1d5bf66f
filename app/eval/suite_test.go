package eval

import (
	"strings"
	"testing"
	"time"
)

var known = []string{"calculator", "think", "file_read", "code_interpreter"}

const smoke = `{"name": "smoke",
 "cases": [
  {"id": "pct", "prompt": "What is 15% of 340?", "tools": ["calculator", "think"],
   "expect": {"calls": [{"tool": "calculator", "args": {"expression": "0.15*340"}}],
              "answer_contains": "51"}},
  {"id": "nocall", "prompt": "hello there", "tools": ["calculator"],
   "expect": {"calls": []}}
 ]}`

func TestParseTheDocumentedExample(t *testing.T) {
	s, err := Parse([]byte(smoke), "smoke.json", known)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "smoke" || len(s.Cases) != 2 {
		t.Fatalf("%+v", s)
	}
	pct, nocall := s.Cases[0], s.Cases[1]
	if pct.Category != DefaultCategory || pct.Expect.Order != OrderAny || !pct.Expect.CheckCalls ||
		pct.Expect.Calls[0].Args["expression"] != "0.15*340" || pct.Expect.AnswerContains[0] != "51" {
		t.Errorf("pct: %+v", pct)
	}
	if !nocall.Expect.CheckCalls || len(nocall.Expect.Calls) != 0 {
		t.Errorf(`"calls": [] must mean no call: %+v`, nocall.Expect)
	}
}

func TestParseTOML(t *testing.T) {
	src := `
name = "toml-suite"
timeout = "30s"
approve = ["code_interpreter"]

[options]
temperature = 0
seed = 42

[overrides.calculator]
description = "Exact arithmetic."
parameters = { expression = "Python syntax" }

[[cases]]
id = "pct"
category = "single"
prompt = "What is 15% of 340?"
tools = ["calculator"]
[cases.expect]
calls = [{ tool = "calculator", args = { expression = "15/100*340", n = 3 } }]
answer_contains = ["51"]
`
	s, err := Parse([]byte(src), "suite.toml", known)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "toml-suite" || s.Timeout != 30*time.Second || *s.Options.Temperature != 0 || *s.Options.Seed != 42 {
		t.Errorf("suite settings: %+v", s)
	}
	if s.Overrides["calculator"].Parameters["expression"] != "Python syntax" {
		t.Errorf("overrides: %+v", s.Overrides)
	}
	if n := s.Cases[0].Expect.Calls[0].Args["n"]; n != 3.0 {
		t.Errorf("a TOML integer must compare as a JSON number: %#v", n)
	}
}

func TestBadSuitesSayWhereAndWhat(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"cases": [`, "suite s.json: not valid JSON: the file is empty or ends too early"},
		{"{\n \"cases\": [}\n", "suite s.json: not valid JSON: line 2, column 12"},
		{`{"name": "x"}`, "suite s.json: cases: missing"},
		{`{"cases": [], "nmae": "x"}`, `suite s.json: nmae: unknown key "nmae" (did you mean "name"?)`},
		{`{"cases": [{"prompt": "hi", "expect": {"calls": []}}]}`, `suite s.json: case 1: id: missing`},
		{`{"cases": [{"id": "a/b", "prompt": "hi", "expect": {"calls": []}}]}`, `suite s.json: case 1: id: "a/b" must be letters`},
		{`{"cases": [{"id": "a", "prompt": "hi", "expect": {"calls": []}}, {"id": "a", "prompt": "x", "expect": {"calls": []}}]}`,
			`suite s.json: case "a": id: "a" is also the id of case 1`},
		{`{"cases": [{"id": "a", "prompt": "", "expect": {"calls": []}}]}`, `suite s.json: case "a": prompt: missing or empty`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculater"], "expect": {"calls": []}}]}`,
			`suite s.json: case "a": tools[0]: unknown tool "calculater" (did you mean "calculator"?)`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calc*"], "expect": {"calls": []}}]}`,
			`suite s.json: case "a": tools[0]: "calc*" is a pattern: a case names each of its tools in full`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "think"}]}}]}`,
			`suite s.json: case "a": expect.calls[0].tool: "think" is not among the case's tools (calculator)`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "arg": {}}]}}]}`,
			`suite s.json: case "a": expect.calls[0].arg: unknown key "arg" (did you mean "args"?)`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "args": {"expression": {"$regex": "("}}}]}}]}`,
			`suite s.json: case "a": expect.calls[0].args.expression: $regex: error parsing regexp`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "args": {"e": {"$regexp": "x"}}}]}}]}`,
			`suite s.json: case "a": expect.calls[0].args.e.$regexp: unknown matcher`},
		{`{"cases": [{"id": "a", "prompt": "hi", "expect": {}}]}`, `suite s.json: case "a": expect: checks nothing`},
		{`{"cases": [{"id": "a", "prompt": "hi", "expect": {"answer_contains": "x", "order": "exact"}}]}`, `suite s.json: case "a": expect: order, parallel and allow_extra need "calls"`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator"}], "order": "sorted"}}]}`,
			`suite s.json: case "a": expect.order: must be "any", "exact" or "steps"`},
		{`{"cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator"}], "parallel": true}}]}`,
			`suite s.json: case "a": expect.parallel: needs at least two expected calls`},
		{`{"cases": [{"id": "a", "prompt": "hi", "files": {"../x": "y"}, "expect": {"calls": []}}]}`,
			`suite s.json: case "a": files.../x: must be a path inside the case's scratch directory`},
		{`{"timeout": "fast", "cases": [{"id": "a", "prompt": "hi", "expect": {"calls": []}}]}`, `suite s.json: timeout: "fast" is not a time limit`},
		{`{"overrides": {"calculator": {}}, "cases": [{"id": "a", "prompt": "hi", "expect": {"calls": []}}]}`, `suite s.json: overrides.calculator: changes nothing`},
		{`{"options": {"think": "maybe"}, "cases": [{"id": "a", "prompt": "hi", "expect": {"calls": []}}]}`, `suite s.json: options.think: must be true, false`},
		{`{"cases": [{"id": "a", "prompt": "hi", "expect": {"answer_contains": 51}}]}`, `suite s.json: case "a": expect.answer_contains: must be a list of strings, not a number`},
	} {
		_, err := Parse([]byte(tc.src), "s.json", known)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\n got %v\nwant %q", tc.src, err, tc.want)
		}
	}
}

func TestReadLimitsAndStdin(t *testing.T) {
	s, err := Read(strings.NewReader(smoke), "-", known)
	if err != nil || s.Name != "smoke" {
		t.Fatalf("a JSON suite on stdin: %v", err)
	}
	big := strings.NewReader(`{"name": "` + strings.Repeat("x", maxSuiteSize) + `"}`)
	if _, err := Read(big, "big.json", known); err == nil || !strings.Contains(err.Error(), "larger than 8 MiB") {
		t.Errorf("a huge suite: %v", err)
	}
}
