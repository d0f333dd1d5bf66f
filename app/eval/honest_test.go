package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/store/evals"
)

const twoCases = `{"name": "two", "cases": [
 {"id": "add", "prompt": "add two and two", "tools": ["calculator"], "expect": {"calls": [{"tool": "calculator", "args": {"expression": "2+2"}}]}},
 {"id": "hello", "prompt": "say hello", "tools": ["calculator"], "expect": {"calls": []}}]}`

// A case run the server could not make is counted apart: neither a pass
// nor the model's failure, and left out of the rate.
func TestACaseThatCouldNotRunIsCountedApart(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("add two and two")).Reply(et.Error(500, "model runner crashed"))
	srv.On(et.UserSays("say hello")).Reply(et.Text("Hello."))
	rep := runSuite(t, srv, parse(t, twoCases), t.TempDir(), runOpts{})
	r := rep.Results[0]
	if r.Passed != 1 || r.Total != 1 || r.NotRun != 1 || r.PassRate != 1 {
		t.Fatalf("passed %d/%d, not run %d, rate %v", r.Passed, r.Total, r.NotRun, r.PassRate)
	}
	add := caseByID(t, r, "add")
	if add.Passed || add.NotRun != 1 || !strings.HasPrefix(add.Reason, "could not run: ") || !strings.Contains(add.Reason, "model runner crashed") {
		t.Fatalf("case %+v", add)
	}
	if len(r.Failed()) != 0 || len(r.NotRunCases()) != 1 {
		t.Fatalf("failed %d, not run %d", len(r.Failed()), len(r.NotRunCases()))
	}
	rep.AssignIDs()
	rec := rep.Records()[0]
	if rec.NotRun != 1 || rec.Cases[0].NotRun != 1 || (evals.Flip{Before: &rec.Cases[1], After: &rec.Cases[0]}).Change() != "not run" {
		t.Fatalf("record %+v", rec)
	}
}

// A model that never calls a tool is flagged: its rate is that of the
// cases that need no call.
func TestAModelThatNeverCallsAToolIsFlagged(t *testing.T) {
	srv := fakeServer(t)
	srv.Default(et.Text("I would rather chat."))
	r := runSuite(t, srv, parse(t, twoCases), t.TempDir(), runOpts{}).Results[0]
	if r.Passed != 1 || r.NoCalls != "never called a tool: it passes only the cases that need none (1 of the 2 cases need a call)" {
		t.Fatalf("passed %d, no calls %q", r.Passed, r.NoCalls)
	}
	srv = fakeServer(t)
	srv.On(et.UserSays("add two and two")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
	srv.Default(et.Text("Hello."))
	if r := runSuite(t, srv, parse(t, twoCases), t.TempDir(), runOpts{}).Results[0]; r.NoCalls != "" {
		t.Fatalf("a model that calls was flagged: %q", r.NoCalls)
	}
}

// An expected argument the tool does not take is refused before anything
// runs, with the arguments it does take.
func TestAnExpectedArgumentTheToolDoesNotTakeIsRefused(t *testing.T) {
	srv := fakeServer(t)
	s := parse(t, `{"name": "typo", "cases": [{"id": "add", "prompt": "add", "tools": ["calculator"],
	  "expect": {"calls": [{"tool": "calculator", "args": {"expresion": "2+2"}}]}}]}`)
	err := newRunner(t, srv, s, t.TempDir(), runOpts{}).Check(context.Background())
	var se *SuiteError
	if !errors.As(err, &se) || se.Field != "expect.calls[0].args.expresion" ||
		!strings.Contains(err.Error(), `calculator takes no argument "expresion" (did you mean "expression"?); it takes expression`) {
		t.Fatalf("Check = %v", err)
	}
	if len(srv.Chats()) != 0 {
		t.Fatal("a case ran")
	}
}

// The words of a reworded tool are kept with the run.
func TestTheWordsOfARewordedToolAreKept(t *testing.T) {
	srv := fakeServer(t)
	srv.On(et.UserSays("add two and two")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("It is 4."))
	rep := runSuite(t, srv, parse(t, rewordedSuite), t.TempDir(), runOpts{})
	want := []evals.Wording{
		{Tool: "calculator", Description: "SUITE WORDS: exact arithmetic.", Parameters: map[string]string{"expression": "SUITE PARAM: Python syntax"}},
		{Tool: "think", Case: "add", Description: "CASE WORDS: a scratchpad."},
	}
	if len(rep.Wording) != 2 || !rep.Wording[0].Same(want[0]) || rep.Wording[0].Tool != "calculator" ||
		!rep.Wording[1].Same(want[1]) || rep.Wording[1].Case != "add" {
		t.Fatalf("wording %+v", rep.Wording)
	}
	rep.AssignIDs()
	if w := rep.Records()[0].Wording; len(w) != 2 {
		t.Fatalf("the record lost the words: %+v", w)
	}
}
