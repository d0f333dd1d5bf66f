package eval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

func parse(t *testing.T, src string) *Suite {
	t.Helper()
	s, err := Parse([]byte(src), "test.json", builtin.Registry(builtin.Deps{}).Names())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fakeServer(t *testing.T) *ollamatest.Server {
	srv := ollamatest.New(t)
	srv.Model(fakeModel, "completion", "tools")
	return srv
}

const rewordedSuite = `{"name": "reworded",
 "overrides": {"calculator": {"description": "SUITE WORDS: exact arithmetic.", "parameters": {"expression": "SUITE PARAM: Python syntax"}}},
 "cases": [{"id": "add", "prompt": "add two and two", "tools": ["calculator", "think"],
   "overrides": {"think": {"description": "CASE WORDS: a scratchpad."}},
   "expect": {"calls": [{"tool": "calculator", "args": {"expression": "2+2"}}], "answer_contains": "4"}}]}`

// The words a suite gives a tool are what the model reads: in the schema
// of a native call and in react's system prompt.
func TestOverridesReachTheSchemaAndTheText(t *testing.T) {
	t.Run("orchestrator", func(t *testing.T) {
		srv := fakeServer(t)
		srv.On(et.UserSays("add two and two")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
		srv.On(et.ToolResult("calculator")).Reply(et.Text("It is 4."))
		rep := runSuite(t, srv, parse(t, rewordedSuite), t.TempDir(), runOpts{})
		if r := rep.Results[0]; r.Passed != 1 {
			t.Fatalf("the case failed: %s", r.Cases[0].Reason)
		}
		sent := srv.Chats()[0]
		got := map[string]string{}
		for _, tl := range sent.Tools {
			got[tl.Function.Name] = tl.Function.Description
			if tl.Function.Name == "calculator" {
				if p, _ := tl.Function.Parameters.Properties.Get("expression"); p.Description != "SUITE PARAM: Python syntax" {
					t.Errorf("the parameter's description was not overridden: %q", p.Description)
				}
			}
		}
		if got["calculator"] != "SUITE WORDS: exact arithmetic." || got["think"] != "CASE WORDS: a scratchpad." {
			t.Errorf("descriptions sent: %v", got)
		}
		if strings.Join(rep.Reworded, ",") != "calculator,think" {
			t.Errorf("the report does not say which tools were reworded: %v", rep.Reworded)
		}
	})
	t.Run("react", func(t *testing.T) {
		srv := fakeServer(t)
		srv.On(et.UserSays("add two and two"), et.SystemContains("SUITE WORDS: exact arithmetic."),
			et.SystemContains("expression (string, required): SUITE PARAM: Python syntax"), et.SystemContains("CASE WORDS")).
			Reply(et.Text("Thought: add.\nAction: calculator\nAction Input: {\"expression\": \"2+2\"}"))
		srv.On(et.UserSays("Observation:")).Reply(et.Text("Thought: done.\nFinal Answer: 4"))
		srv.Default(et.Text("Final Answer: the system prompt lacked the suite's words"))
		rep := runSuite(t, srv, parse(t, rewordedSuite), t.TempDir(), runOpts{agent: "react"})
		if c := rep.Results[0].Cases[0]; !c.Passed {
			t.Fatalf("react did not read the suite's words: %s", c.Reason)
		}
	})
}

// Descriptions set in the configuration reach the model too, and the
// suite's win over them.
func TestConfiguredDescriptionsApply(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("add")).Reply(et.Text("4"))
	eng, _ := ollama.New(srv.URL)
	conf := "CONFIG WORDS"
	suite := parse(t, `{"overrides": {"think": {"description": "SUITE THINK"}}, "cases": [{"id": "a", "prompt": "add", "tools": ["calculator", "think"], "expect": {"calls": []}}]}`)
	r, err := New(Config{Suite: suite, Targets: []Target{{Engine: eng, Model: fakeModel, Agent: "orchestrator"}}, Tools: BuiltinTools(builtin.Deps{}),
		Settings: map[string]tools.Settings{"calculator": {Description: &conf}, "think": {Description: &conf}}, ScratchDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tl := range srv.Chats()[0].Tools {
		want := map[string]string{"calculator": "CONFIG WORDS", "think": "SUITE THINK"}[tl.Function.Name]
		if tl.Function.Description != want {
			t.Errorf("%s: %q, want %q", tl.Function.Name, tl.Function.Description, want)
		}
	}
}

func TestCheckFindsWhatWouldFailEveryCase(t *testing.T) {
	srv := fakeServer(t)
	bad := parse(t, `{"overrides": {"calculator": {"parameters": {"expresion": "x"}}}, "cases": [{"id": "a", "prompt": "hi", "tools": ["calculator"], "expect": {"calls": []}}]}`)
	err := newRunner(t, srv, bad, t.TempDir(), runOpts{}).Check(context.Background())
	var se *SuiteError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `suite test.json: overrides.calculator: tool calculator has no parameter "expresion" to describe (it takes only expression); did you mean "expression"?`) {
		t.Errorf("an override of a parameter the tool lacks: %v", err)
	}
	inCase := parse(t, `{"cases": [{"id": "a", "prompt": "hi", "tools": ["think"], "overrides": {"think": {"parameters": {"idea": "x"}}}, "expect": {"calls": []}}]}`)
	if err := newRunner(t, srv, inCase, t.TempDir(), runOpts{}).Check(context.Background()); err == nil || !strings.Contains(err.Error(), `case "a": overrides.think: tool think has no parameter "idea"`) {
		t.Errorf("a case's override: %v", err)
	}
	eng, _ := ollama.New(srv.URL)
	r, _ := New(Config{Suite: parse(t, smoke), Targets: []Target{{Engine: eng, Model: "nosuchmodel", Agent: "orchestrator"}}, Tools: BuiltinTools(builtin.Deps{})})
	if err := r.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "nosuchmodel") {
		t.Errorf("a model the server lacks: %v", err)
	}
}

// A model whose answers vary: --repeat reports the pass rate per case.
func TestRepeatReportsThePassRatePerCase(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("hello there")).Times(1).Reply(et.ToolCall("calculator", `{"expression":"1"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("Hi."))
	srv.On(et.UserSays("hello there")).Reply(et.Text("Hi."))
	srv.On(et.UserSays("15% of 340")).Reply(et.Text("51"))
	var mu sync.Mutex
	var seen []string
	r := newRunner(t, srv, parse(t, smoke), t.TempDir(), runOpts{repeat: 3})
	r.cfg.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		state := "start"
		if p.Done != nil {
			state = map[bool]string{true: "pass", false: "fail"}[p.Done.Passed]
		}
		seen = append(seen, p.Case.ID+"#"+string(rune('0'+p.Rep))+" "+state)
		if p.Runs != 6 || p.Index < 1 || p.Index > 6 {
			t.Errorf("progress counts: %+v", p)
		}
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Results[0]
	hello := caseByID(t, res, "nocall")
	if hello.Passes != 2 || hello.Repeats != 3 || hello.Passed || hello.PassRate < 0.66 || hello.PassRate > 0.67 {
		t.Errorf("nocall: %d of %d, rate %v", hello.Passes, hello.Repeats, hello.PassRate)
	}
	if hello.Reason != "called calculator, expected no tool call" || len(hello.Calls) != 1 {
		t.Errorf("the case shows the failed repetition: %q %v", hello.Reason, hello.Calls)
	}
	pct := caseByID(t, res, "pct")
	if pct.Passes != 0 || pct.Reason != "no tool called, expected calculator" {
		t.Errorf("pct: %+v", pct)
	}
	if res.Passed != 2 || res.Total != 6 {
		t.Errorf("totals count repetitions: %d of %d", res.Passed, res.Total)
	}
	want := "pct#1 start,pct#1 fail,pct#2 start,pct#2 fail,pct#3 start,pct#3 fail,nocall#1 start,nocall#1 fail,nocall#2 start,nocall#2 pass,nocall#3 start,nocall#3 pass"
	if got := strings.Join(seen, ","); got != want {
		t.Errorf("progress:\n got %s\nwant %s", got, want)
	}
}

func TestStoppingKeepsWhatFinished(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"0.15*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("51"))
	srv.On(et.UserSays("hello there")).Reply(et.Hang())
	ctx, cancel := context.WithCancel(context.Background())
	r := newRunner(t, srv, parse(t, smoke), t.TempDir(), runOpts{})
	r.cfg.Progress = func(p Progress) {
		if p.Case.ID == "nocall" && p.Done == nil {
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		}
	}
	rep, err := r.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("want a stopped error, got %v", err)
	}
	res := rep.Results[0]
	if len(res.Cases) != 1 || res.Cases[0].ID != "pct" || !res.Cases[0].Passed || res.Total != 1 || res.Error == "" {
		t.Errorf("the finished case is kept and the stopped one is not counted: %+v", res)
	}
}

func TestCaseTimeLimit(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("slow")).Reply(et.Hang())
	suite := parse(t, `{"timeout": "1s", "cases": [{"id": "slow", "prompt": "slow", "expect": {"answer_contains": "x"}}]}`)
	rep := runSuite(t, srv, suite, t.TempDir(), runOpts{})
	if c := rep.Results[0].Cases[0]; c.Passed || !strings.HasPrefix(c.Reason, "run failed: the case took longer than its 1s time limit") {
		t.Errorf("reason: %q", c.Reason)
	}
}

// Events of the runs reach the bus the caller gives: what a person sees
// of a chat (tool calls, turns) they can see of an evaluation.
func TestEventsReachTheBus(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"0.15*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("51"))
	srv.On(et.UserSays("hello there")).Reply(et.Text("hi"))
	rec := &events.Recorder{}
	runSuite(t, srv, parse(t, smoke), t.TempDir(), runOpts{bus: rec})
	var starts, ends int
	for _, e := range rec.Events() {
		switch e.Type {
		case events.ToolCallStart:
			starts++
		case events.RunEnd:
			ends++
		}
	}
	if starts != 1 || ends != 2 {
		t.Errorf("tool starts %d, run ends %d", starts, ends)
	}
}

func TestRecordsForTheDatabase(t *testing.T) {
	root := t.TempDir()
	srv := scripted(t, "builtin-wrong.json", root)
	rep := runSuite(t, srv, mustBuiltin(t), root, runOpts{})
	rep.AssignIDs()
	recs := rep.Records()
	if len(recs) != 1 || recs[0].ID == "" || recs[0].Batch == "" || recs[0].Model != fakeModel || recs[0].Total != len(rep.Results[0].Cases) {
		t.Fatalf("%+v", recs)
	}
	c := recs[0].Cases[0]
	if c.ID != "percent" || c.Reason != `called think, expected calculator; answer lacks "51": 15% of 340 is about 50.` || c.Calls != "think(thought=It is about 50.)" || c.Passed() {
		t.Errorf("case record: %+v", c)
	}
}
