package tui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/eval"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

const miniSuite = `{"name": "mini", "cases": [
 {"id": "pct", "category": "math", "prompt": "What is 15% of 340?", "tools": ["calculator"],
  "expect": {"calls": [{"tool": "calculator", "args": {"expression": "15/100*340"}}], "answer_contains": "51"}},
 {"id": "hello", "category": "chat", "prompt": "hello there", "tools": ["calculator"], "expect": {"calls": []}}]}`

// evalModel is a test model whose engine is a fake server, with /eval
// set up; sent collects what the evaluation sends from its goroutine.
func evalModel(t *testing.T, srv *ot.Server) (*model, *[]tea.Msg, *[]*eval.Report, string) {
	t.Helper()
	m := newTestModel(t, 120, 40)
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []tea.Msg
	var saved []*eval.Report
	m.opts.Engine, m.modelName = eng, "evalbot"
	m.send = func(msg tea.Msg) { mu.Lock(); sent = append(sent, msg); mu.Unlock() }
	m.opts.Eval = &EvalSetup{Tools: eval.BuiltinTools(builtin.Deps{}), EngineName: "ollama", Save: func(r *eval.Report) error {
		r.AssignIDs()
		mu.Lock()
		saved = append(saved, r)
		mu.Unlock()
		return nil
	}}
	path := filepath.Join(t.TempDir(), "mini.json")
	os.WriteFile(path, []byte(miniSuite), 0o600)
	return m, &sent, &saved, path
}

func TestEvalRunsInACommandAndShowsTheResults(t *testing.T) {
	srv := ot.New(t)
	srv.Model("evalbot", "completion", "tools")
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator"), et.QuestionContains("15% of 340")).Reply(et.Text("It is 51."))
	srv.On(et.UserSays("hello there")).Reply(et.ToolCall("calculator", `{"expression":"1+1"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("Hi!"))
	m, sent, saved, path := evalModel(t, srv)
	cmd := send(m, "/eval "+path)
	if cmd == nil || m.evals.cancel == nil {
		t.Fatal("/eval did not start an evaluation in a command")
	}
	if len(srv.Chats()) != 0 {
		t.Fatal("the evaluation ran inside Update")
	}
	if s := screen(t, m); !strings.Contains(s, "Evaluating evalbot · orchestrator: reading the suite") {
		t.Fatalf("no progress line:\n%s", s)
	}
	if send(m, "/eval"); !strings.Contains(screen(t, m), "An evaluation is running") {
		t.Error("a second /eval while one runs must be refused")
	}
	done := cmd()
	for _, msg := range *sent {
		m.Update(msg)
	}
	if len(*sent) != 4 {
		t.Errorf("%d progress messages, want a start and an end per case", len(*sent))
	}
	if s := screen(t, m); !strings.Contains(s, "evalbot · orchestrator · 2/2 hello ✗") {
		t.Errorf("the progress line does not follow the cases:\n%s", s)
	}
	m.Update(done)
	s := screen(t, m)
	for _, want := range []string{"Evaluation finished in", "Suite mini", "evalbot · orchestrator · ollama", "passed 1/2 (50%)",
		"✗ hello  called calculator, expected no tool call", "Pass rate by category", "Saved as run "} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
	if len(*saved) != 1 || (*saved)[0].Results[0].Passed != 1 {
		t.Errorf("the report was not saved: %v", *saved)
	}
	if m.evals.cancel != nil {
		t.Error("the evaluation is still marked running")
	}
}

func TestEscStopsAnEvaluation(t *testing.T) {
	srv := ot.New(t)
	srv.Model("evalbot", "completion", "tools")
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("51"))
	srv.On(et.UserSays("hello there")).Reply(et.Hang())
	m, sent, _, path := evalModel(t, srv)
	cmd := send(m, "/eval "+path)
	result := make(chan tea.Msg, 1)
	go func() { result <- cmd() }()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Chats()) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	press(m, "esc")
	var done tea.Msg
	select {
	case done = <-result:
	case <-time.After(10 * time.Second):
		t.Fatal("esc did not stop the evaluation")
	}
	for _, msg := range *sent {
		m.Update(msg)
	}
	m.Update(done)
	s := screen(t, m)
	if !strings.Contains(s, "Evaluation stopped after") || !strings.Contains(s, "passed 1/1") {
		t.Errorf("the stopped evaluation does not show what finished:\n%s", s)
	}
}

func TestEvalRefusedWhenItCannotRun(t *testing.T) {
	m := newTestModel(t, 120, 40)
	send(m, "/eval")
	if !strings.Contains(screen(t, m), "Evaluations are not available") {
		t.Error("without a setup /eval must say so")
	}
	srv := ot.New(t)
	srv.Model("evalbot", "completion", "tools")
	m, _, _, _ = evalModel(t, srv)
	fakeRun(m, "hi")
	if cmd := send(m, "/eval"); cmd != nil || !strings.Contains(screen(t, m), "A turn is running") {
		t.Error("/eval during a turn must wait")
	}
	m, _, _, _ = evalModel(t, srv)
	cmd := send(m, "/eval /no/such/suite.json")
	m.Update(cmd())
	if s := screen(t, m); !strings.Contains(s, "The evaluation could not run: open /no/such/suite.json") {
		t.Errorf("a missing suite file:\n%s", s)
	}
}
