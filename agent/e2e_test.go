package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

// These tests run the agents against the fake Ollama server over loopback:
// the real engine, the real wire format, scripted model turns.

func setup(t *testing.T, caps ...string) (*ot.Server, *ollama.Engine) {
	t.Helper()
	srv := ot.New(t)
	if len(caps) == 0 {
		caps = []string{engine.CapCompletion, engine.CapTools}
	}
	srv.Model("qwen3", caps...)
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, eng
}

func run(t *testing.T, eng engine.InferenceEngine, name string, exec *tools.Executor, bus events.Publisher, q string) (*agent.Result, *agent.Conversation, error) {
	t.Helper()
	a, err := agent.New(name, agent.Config{Engine: eng, Model: "qwen3", Executor: exec, Bus: bus, MaxTurns: 4})
	if err != nil {
		t.Fatal(err)
	}
	conv := &agent.Conversation{}
	res, err := a.Run(context.Background(), conv, q)
	return res, conv, err
}

func calcExecutor(t *testing.T, bus events.Publisher, c tools.Confirmer, extra ...tools.Tool) *tools.Executor {
	t.Helper()
	calc, _ := compute.NewCalculator(tools.Deps{})
	e, err := tools.NewExecutor(append([]tools.Tool{calc}, extra...), tools.ExecutorOptions{Bus: bus, Confirmer: c})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestE2ECalculatorRoundTrip(t *testing.T) {
	srv, eng := setup(t)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`).WithID("call_a"))
	srv.On(et.ToolResult("calculator")).Reply(et.TextChunks("15% of 340 ", "is ", "51."))
	rec := &events.Recorder{}
	res, conv, err := run(t, eng, agent.Orchestrator, calcExecutor(t, rec, nil), rec, "What is 15% of 340?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Turns != 2 || res.Usage.OutputTokens == 0 {
		t.Fatalf("result = %+v", res)
	}
	chats := srv.Chats()
	if len(chats) != 2 || len(chats[0].Tools) != 1 || chats[0].Tools[0].Function.Name != "calculator" {
		t.Fatalf("requests = %+v", chats)
	}
	last := chats[1].Messages[len(chats[1].Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "call_a" || last.ToolName != "calculator" || last.Content != "51.0" {
		t.Fatalf("tool message on the wire = %+v", last)
	}
	prev := chats[1].Messages[len(chats[1].Messages)-2]
	if len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != "call_a" {
		t.Fatalf("assistant message with the call = %+v", prev)
	}
	var streamed strings.Builder
	for _, e := range rec.Events() {
		if e.Type == events.Token {
			streamed.WriteString(e.Text)
		}
	}
	if streamed.String() != "15% of 340 is 51." {
		t.Fatalf("streamed %q", streamed.String())
	}
	if len(conv.Messages) != 4 {
		t.Fatalf("conversation = %+v", conv.Messages)
	}
}

type sleeper struct {
	name    string
	running *atomic.Int32
	peak    *atomic.Int32
}

func (s sleeper) Spec() tools.Spec {
	return tools.Spec{Name: s.name, Parameters: tools.Params(tools.StringParam("x", "", true))}
}
func (s sleeper) Execute(ctx context.Context, a tools.Args) tools.Result {
	n := s.running.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	defer s.running.Add(-1)
	select {
	case <-time.After(150 * time.Millisecond):
	case <-ctx.Done():
		return tools.Fail("stopped")
	}
	return tools.OK(s.name + ":" + a.String("x"))
}

func TestE2ETwoCallsRunInParallelAndReturnInOrder(t *testing.T) {
	srv, eng := setup(t)
	srv.On(et.UserSays("both")).Reply(et.ToolCalls(
		et.ToolCall("slow_a", `{"x":"1"}`).WithID("c1"),
		et.ToolCall("slow_b", `{"x":"2"}`).WithID("c2"),
	))
	srv.On(et.ToolResult("")).Reply(et.Text("done"))
	var running, peak atomic.Int32
	exec := calcExecutor(t, nil, nil, sleeper{"slow_a", &running, &peak}, sleeper{"slow_b", &running, &peak})
	res, _, err := run(t, eng, agent.Orchestrator, exec, nil, "run both")
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 2 {
		t.Fatalf("calls did not overlap (peak %d)", peak.Load())
	}
	msgs := srv.Chats()[1].Messages
	a, b := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if a.ToolCallID != "c1" || a.Content != "slow_a:1" || b.ToolCallID != "c2" || b.Content != "slow_b:2" {
		t.Fatalf("tool results out of order: %+v %+v", a, b)
	}
	if res.Content != "done" {
		t.Fatal(res.Content)
	}
}

type dangerous struct{ ran *atomic.Bool }

func (d dangerous) Spec() tools.Spec {
	return tools.Spec{Name: "wipe", Description: "Deletes things.", RequiresConfirmation: true, Parameters: tools.Params()}
}
func (d dangerous) Execute(context.Context, tools.Args) tools.Result {
	d.ran.Store(true)
	return tools.OK("wiped")
}

func TestE2EDeniedCallReachesModelAsFailedResult(t *testing.T) {
	srv, eng := setup(t)
	srv.On(et.UserSays("wipe")).Reply(et.ToolCall("wipe", `{}`))
	srv.On(et.ToolResultContains("wipe", "denied by user")).Reply(et.Text("I was not allowed to wipe anything."))
	var ran atomic.Bool
	res, _, err := run(t, eng, agent.Orchestrator, calcExecutor(t, nil, tools.DenyAll, dangerous{&ran}), nil, "please wipe the disk")
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() || res.Content != "I was not allowed to wipe anything." || res.ToolResults[0].Status != tools.StatusDenied {
		t.Fatalf("ran=%v res=%+v", ran.Load(), res)
	}
}

func TestE2EMaxTurnsAndLoopGuard(t *testing.T) {
	srv, eng := setup(t)
	n := 0
	srv.On(et.UserSays("count")).ReplyWith(func(*et.Call) []et.Step { return []et.Step{et.ToolCall("calculator", `{"expression":"1+1"}`)} })
	srv.On(et.ToolResult("calculator")).ReplyWith(func(*et.Call) []et.Step {
		n++
		return []et.Step{et.ToolCall("calculator", fmt.Sprintf(`{"expression":"%d+1"}`, n))}
	})
	res, conv, err := run(t, eng, agent.Orchestrator, calcExecutor(t, nil, nil), nil, "count forever")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != agent.StopMaxTurns || res.Turns != 4 || res.Content != "" {
		t.Fatalf("max turns: %+v", res)
	}
	assertConsistent(t, conv)

	srv2, eng2 := setup(t)
	srv2.On(et.UserSays("repeat")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
	srv2.On(et.ToolResult("calculator")).Reply(et.ToolCall("calculator", `{"expression":"2+2"}`))
	res, conv, err = run(t, eng2, agent.Orchestrator, calcExecutor(t, nil, nil), nil, "repeat yourself")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != agent.StopLoop || len(srv2.Chats()) != 3 {
		t.Fatalf("loop guard: %+v after %d requests", res, len(srv2.Chats()))
	}
	assertConsistent(t, conv)
}

func TestE2EModelWithoutToolsFallsBackToReact(t *testing.T) {
	srv, eng := setup(t, engine.CapCompletion)
	srv.On(et.UserSays("Observation:"), et.NoTools()).Reply(et.Text("Thought: done\nFinal Answer: 15% of 340 is 51."))
	srv.On(et.UserSays("15% of 340"), et.NoTools()).Reply(et.Text("Thought: use it\nAction: calculator\nAction Input: {\"expression\": \"15/100*340\"}"))
	res, _, err := run(t, eng, agent.Orchestrator, calcExecutor(t, nil, nil), nil, "What is 15% of 340?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Agent != agent.ReAct || !strings.Contains(res.Notices[0], "does not support native tool calls") {
		t.Fatalf("result = %+v", res)
	}
	for _, c := range srv.Chats() {
		if len(c.Tools) > 0 {
			t.Fatal("tools were sent to a model without tool support")
		}
	}
	if !strings.Contains(srv.Chats()[0].Messages[0].Content, "### calculator") {
		t.Fatal("react prompt lacks the tool descriptions")
	}
}

func TestE2EServer400NoToolsAlsoFallsBack(t *testing.T) {
	srv, eng := setup(t, engine.CapCompletion)
	// The capability check is unavailable: the 400 from chat triggers the fallback.
	srv.FailEndpoint("/api/show", 500, "show broken")
	srv.On(et.NoTools()).Reply(et.Text("Final Answer: hi"))
	res, _, err := run(t, eng, agent.Orchestrator, calcExecutor(t, nil, nil), nil, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "hi" || res.Agent != agent.ReAct {
		t.Fatalf("result = %+v", res)
	}
	if st := srv.Requests(); len(st) < 2 {
		t.Fatalf("requests: %d", len(st))
	}
}

func TestE2EMidStreamDisconnectKeepsWhatArrived(t *testing.T) {
	srv, eng := setup(t)
	srv.On(et.UserSays("story")).Reply(et.TextChunks("Once ", "upon ", "a ", "time")).DisconnectAfter(2)
	res, conv, err := run(t, eng, agent.Orchestrator, calcExecutor(t, nil, nil), nil, "tell a story")
	var se *engine.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if res.Content != "Once upon " || conv.Messages[len(conv.Messages)-1].Content != "Once upon " {
		t.Fatalf("partial reply = %q / %+v", res.Content, conv.Messages)
	}
}

type blocker struct{ started chan struct{} }

func (b blocker) Spec() tools.Spec { return tools.Spec{Name: "block", Parameters: tools.Params()} }
func (b blocker) Execute(ctx context.Context, _ tools.Args) tools.Result {
	close(b.started)
	<-ctx.Done()
	return tools.Fail("interrupted")
}

func TestE2ECancelWithToolRunning(t *testing.T) {
	srv, eng := setup(t)
	srv.On(et.UserSays("block")).Reply(et.ToolCalls(et.ToolCall("block", `{}`), et.ToolCall("calculator", `{"expression":"1"}`)))
	b := blocker{started: make(chan struct{})}
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "qwen3", Executor: calcExecutor(t, nil, nil, b)})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-b.started; cancel() }()
	conv := &agent.Conversation{}
	res, err := a.Run(ctx, conv, "block now")
	if err == nil || res.Stopped != "cancelled" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	assertConsistent(t, conv)
	if len(srv.Chats()) != 1 {
		t.Fatal("the model was called again after the cancel")
	}
}

func TestE2EUnknownModelSaysHowToPull(t *testing.T) {
	_, eng := setup(t)
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "nope:1b"})
	_, err := a.Run(context.Background(), &agent.Conversation{}, "hi")
	var nf *engine.ModelNotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "ollama pull nope:1b") {
		t.Fatalf("err = %v", err)
	}
}

func assertConsistent(t *testing.T, conv *agent.Conversation) {
	t.Helper()
	for i, m := range conv.Messages {
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(conv.Messages) || conv.Messages[k].ToolCallID != c.ID {
				t.Fatalf("call %s without its result: %+v", c.ID, conv.Messages)
			}
		}
	}
}
