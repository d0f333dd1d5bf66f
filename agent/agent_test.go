package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
)

func executor(t *testing.T, bus events.Publisher, c tools.Confirmer, extra ...tools.Tool) *tools.Executor {
	t.Helper()
	calc, _ := compute.NewCalculator(tools.Deps{})
	think, _ := compute.NewThink(tools.Deps{})
	e, err := tools.NewExecutor(append([]tools.Tool{calc, think}, extra...), tools.ExecutorOptions{Bus: bus, Confirmer: c})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newAgent(t *testing.T, name string, eng engine.InferenceEngine, exec *tools.Executor, bus events.Publisher) Agent {
	t.Helper()
	a, err := New(name, Config{Engine: eng, Model: "m", Executor: exec, Bus: bus, MaxTurns: 5,
		Price: func(_ string, in, out int) float64 { return float64(in+out) / 1000 }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkConsistent asserts every assistant message with tool calls is
// followed by one tool message per call, with matching ids.
func checkConsistent(t *testing.T, conv *Conversation) {
	t.Helper()
	for i, m := range conv.Messages {
		if len(m.ToolCalls) == 0 {
			continue
		}
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(conv.Messages) || conv.Messages[k].Role != engine.RoleTool || conv.Messages[k].ToolCallID != c.ID {
				t.Fatalf("call %s at message %d has no matching tool result; conversation: %+v", c.ID, i, conv.Messages)
			}
		}
	}
}

func TestOrchestratorCallsToolAndAnswers(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			return calls(call("call_1", "calculator", `{"expression":"15/100*340"}`)), nil, nil
		}
		return text(""), []string{"15% of 340 ", "is ", "51."}, nil
	}}
	rec := &events.Recorder{}
	a := newAgent(t, Orchestrator, eng, executor(t, rec, nil), rec)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "What is 15% of 340?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "15% of 340 is 51." || res.Turns != 2 || len(res.ToolResults) != 1 || res.ToolResults[0].Content != "51.0" {
		t.Fatalf("result = %+v", res)
	}
	// The tool result went back with the call's id, and the tools were offered.
	second := eng.request(1)
	if m := lastMessage(second); m.Role != engine.RoleTool || m.ToolCallID != "call_1" || m.ToolName != "calculator" || m.Content != "51.0" {
		t.Fatalf("tool message = %+v", m)
	}
	if len(second.Tools) != 2 || second.Tools[0].Name != "calculator" || second.Messages[0].Role != engine.RoleSystem {
		t.Fatalf("request = %+v", second)
	}
	if res.Usage.PromptTokens != 20 || res.Usage.OutputTokens != 8 || math.Abs(res.Usage.CostUSD-0.028) > 1e-12 {
		t.Fatalf("usage = %+v", res.Usage)
	}
	var tokens []string
	var order []events.Type
	for _, e := range rec.Events() {
		if e.Type == events.Token {
			tokens = append(tokens, e.Text)
			continue
		}
		order = append(order, e.Type)
		if e.Run.Agent != Orchestrator || e.Run.ID == "" {
			t.Fatalf("event %s not stamped with the run: %+v", e.Type, e.Run)
		}
	}
	if strings.Join(tokens, "") != "15% of 340 is 51." {
		t.Fatalf("streamed tokens = %q", tokens)
	}
	want := []events.Type{events.RunStart, events.TurnStart, events.TurnEnd, events.ToolCallStart, events.ToolCallEnd,
		events.TurnStart, events.TurnEnd, events.RunEnd}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("events = %v\nwant %v", order, want)
	}
	checkConsistent(t, conv)
	if len(conv.Messages) != 4 || conv.Messages[0].Role != engine.RoleUser {
		t.Fatalf("conversation = %+v", conv.Messages)
	}
}

func TestOrchestratorParallelCallsReturnInOrder(t *testing.T) {
	started := make(chan string, 2)
	release := make(chan struct{})
	slow := &blockingTool{name: "slow", started: started, release: release}
	fast := &blockingTool{name: "fast", started: started, release: release}
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			return calls(call("a", "slow", `{}`), call("b", "fast", `{}`)), nil, nil
		}
		return text("done"), nil, nil
	}}
	go func() {
		// Both calls must be running before either may finish.
		<-started
		<-started
		close(release)
	}()
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil, slow, fast), nil)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "go")
	if err != nil {
		t.Fatal(err)
	}
	msgs := eng.request(1).Messages
	if msgs[len(msgs)-2].ToolCallID != "a" || msgs[len(msgs)-1].ToolCallID != "b" {
		t.Fatalf("tool results out of order: %+v", msgs)
	}
	if res.ToolResults[0].ToolName != "slow" || res.ToolResults[1].ToolName != "fast" {
		t.Fatalf("results = %+v", res.ToolResults)
	}
	checkConsistent(t, conv)
}

type blockingTool struct {
	name    string
	started chan string
	release chan struct{}
}

func (b *blockingTool) Spec() tools.Spec { return tools.Spec{Name: b.name, Parameters: tools.Params()} }
func (b *blockingTool) Execute(ctx context.Context, _ tools.Args) tools.Result {
	b.started <- b.name
	select {
	case <-b.release:
		return tools.OK(b.name + " ok")
	case <-ctx.Done():
		return tools.Fail("stopped")
	}
}

type harmTool struct{ ran atomic.Int32 }

func (h *harmTool) Spec() tools.Spec {
	return tools.Spec{Name: "harm", Description: "does harm", RequiresConfirmation: true, Parameters: tools.Params()}
}
func (h *harmTool) Execute(context.Context, tools.Args) tools.Result {
	h.ran.Add(1)
	return tools.OK("harm done")
}

func TestDeniedConfirmationReachesModelAsFailedResult(t *testing.T) {
	harm := &harmTool{}
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if n == 1 {
			return calls(call("c1", "harm", `{}`)), nil, nil
		}
		return text("I was not allowed to do that."), nil, nil
	}}
	a := newAgent(t, Orchestrator, eng, executor(t, nil, tools.DenyAll, harm), nil)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "do harm")
	if err != nil {
		t.Fatal(err)
	}
	if harm.ran.Load() != 0 {
		t.Fatal("denied tool ran")
	}
	tm := lastMessage(eng.request(1))
	if tm.Role != engine.RoleTool || tm.Content != "Tool 'harm' execution denied by user." {
		t.Fatalf("model got %+v", tm)
	}
	if res.ToolResults[0].Status != tools.StatusDenied || res.Content != "I was not allowed to do that." {
		t.Fatalf("result = %+v", res)
	}
}

func TestMaxTurns(t *testing.T) {
	n := 0
	eng := &fakeEngine{reply: func(req engine.ChatRequest, _ int) (engine.ChatResponse, []string, error) {
		n++
		return calls(call(fmt.Sprint("c", n), "calculator", fmt.Sprintf(`{"expression":"%d+1"}`, n))), nil, nil
	}}
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 5 || res.Stopped != StopMaxTurns || res.Content != "" || eng.count() != 5 {
		t.Fatalf("result = %+v, requests %d", res, eng.count())
	}
	checkConsistent(t, conv)
}

func TestLoopGuardStopsRepeatedCall(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		// Same call, arguments spelled differently: still the same call.
		args := []string{`{"expression":"2+2"}`, `{ "expression": "2+2" }`, `{"expression":"2+2"}`}[min(n-1, 2)]
		return calls(call(fmt.Sprint("c", n), "calculator", args)), nil, nil
	}}
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "again and again")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopLoop || eng.count() != 3 || res.Content != "" || !strings.Contains(strings.Join(res.Notices, "\n"), "calculator with the same arguments 3 times") {
		t.Fatalf("result = %+v requests=%d", res, eng.count())
	}
	// The third call was answered, not run.
	if len(res.ToolResults) != 3 || res.ToolResults[2].Success {
		t.Fatalf("tool results = %+v", res.ToolResults)
	}
	checkConsistent(t, conv)
}

func TestFallbackToReactWhenModelLacksTools(t *testing.T) {
	for _, viaError := range []bool{false, true} {
		t.Run(fmt.Sprint("via400=", viaError), func(t *testing.T) {
			eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
				if len(req.Tools) > 0 {
					return engine.ChatResponse{}, nil, &engine.ToolsUnsupportedError{Model: "m"}
				}
				if lastMessage(req).Role == engine.RoleUser && strings.HasPrefix(lastMessage(req).Content, "Observation: ") {
					return text("Thought: done\nFinal Answer: 4"), nil, nil
				}
				return text("Thought: add\nAction: calculator\nAction Input: {\"expression\": \"2+2\"}\nObservation: 5 (made up)"), nil, nil
			}}
			if !viaError {
				eng.caps = []string{engine.CapCompletion}
			} else {
				eng.capsErr = errors.New("show failed")
			}
			rec := &events.Recorder{}
			a := newAgent(t, Orchestrator, eng, executor(t, rec, nil), rec)
			conv := &Conversation{}
			res, err := a.Run(context.Background(), conv, "2+2?")
			if err != nil {
				t.Fatal(err)
			}
			if res.Content != "4" || res.Agent != ReAct || len(res.Notices) == 0 || !strings.Contains(res.Notices[0], "does not support native tool calls") {
				t.Fatalf("result = %+v", res)
			}
			last := eng.request(eng.count() - 1)
			if len(last.Tools) != 0 || !strings.Contains(last.Messages[0].Content, "### calculator") {
				t.Fatalf("react request must describe tools in the prompt: %+v", last.Messages[0])
			}
			if obs := lastMessage(last).Content; obs != "Observation: 4" {
				t.Fatalf("observation = %q (the model's invented one must be dropped)", obs)
			}
			users := 0
			for _, m := range conv.Messages {
				if m.Role == engine.RoleUser && m.Content == "2+2?" {
					users++
				}
			}
			if users != 1 {
				t.Fatalf("the question appears %d times in the conversation", users)
			}
			noticed, starts, ends := false, 0, 0
			for _, e := range rec.Events() {
				noticed = noticed || e.Type == events.Notice
				if e.Type == events.RunStart {
					starts++
				}
				if e.Type == events.RunEnd {
					ends++
					if e.Turn.Turn != res.Turns {
						t.Errorf("run_end says %d turns, the result %d", e.Turn.Turn, res.Turns)
					}
				}
			}
			if !noticed {
				t.Fatal("no notice event for the fallback")
			}
			if starts != 1 || ends != 1 {
				t.Fatalf("one run must have one run_start and one run_end, got %d and %d", starts, ends)
			}
		})
	}
}

func TestMidStreamDisconnectKeepsPartial(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		return text(""), []string{"The answer ", "is"}, &engine.StreamError{Received: 13, Err: errors.New("EOF")}
	}}
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil)
	conv := &Conversation{}
	res, err := a.Run(context.Background(), conv, "q")
	var se *engine.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if res.Content != "The answer is" || conv.Messages[len(conv.Messages)-1].Content != "The answer is" {
		t.Fatalf("partial lost: %+v / %+v", res, conv.Messages)
	}
}

func TestCancelWithToolRunningLeavesConversationConsistent(t *testing.T) {
	started := make(chan string, 2)
	block := &blockingTool{name: "block", started: started, release: make(chan struct{})}
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		return calls(call("x1", "block", `{}`), call("x2", "calculator", `{"expression":"1+1"}`)), nil, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil, block), nil)
	conv := &Conversation{}
	done := make(chan struct{})
	var res *Result
	var err error
	go func() { res, err = a.Run(ctx, conv, "run it"); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
	if err == nil || res.Stopped != "cancelled" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if res.ToolResults[0].Status != tools.StatusCancelled {
		t.Fatalf("running tool not reported cancelled: %+v", res.ToolResults[0])
	}
	checkConsistent(t, conv)
	if eng.count() != 1 {
		t.Fatalf("the model was asked again after cancel: %d requests", eng.count())
	}
}

func TestCancelDuringStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		cancel()
		return text(""), []string{"never"}, nil
	}}
	a := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil)
	conv := &Conversation{}
	res, err := a.Run(ctx, conv, "q")
	if err == nil || res.Stopped != "cancelled" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	checkConsistent(t, conv)
}

func TestSimpleAgentSendsNoTools(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		if len(req.Tools) != 0 {
			t.Error("simple sent tools")
		}
		return text("hello"), []string{"hel", "lo"}, nil
	}}
	a := newAgent(t, Simple, eng, executor(t, nil, nil), nil)
	conv := &Conversation{Messages: []engine.Message{{Role: engine.RoleUser, Content: "earlier"}, {Role: engine.RoleAssistant, Content: "yes"}}}
	res, err := a.Run(context.Background(), conv, "hi")
	if err != nil || res.Content != "hello" || len(conv.Messages) != 4 {
		t.Fatalf("res=%+v err=%v conv=%+v", res, err, conv.Messages)
	}
	if req := eng.request(0); len(req.Messages) != 4 || req.Messages[1].Content != "earlier" {
		t.Fatalf("history not sent: %+v", req.Messages)
	}
}

func TestCustomSystemPrompt(t *testing.T) {
	eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
		return text("ok"), nil, nil
	}}
	a, _ := New(Orchestrator, Config{Engine: eng, Model: "m", System: "Be terse."})
	a.Run(context.Background(), &Conversation{}, "hi")
	if got := eng.request(0).Messages[0]; got.Role != engine.RoleSystem || got.Content != "Be terse." {
		t.Fatalf("system = %+v", got)
	}
}

func TestUnknownAgent(t *testing.T) {
	if _, err := New("nope", Config{Engine: &fakeEngine{}}); err == nil || !strings.Contains(err.Error(), "simple, orchestrator, react") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseReAct(t *testing.T) {
	cases := []struct {
		in                   string
		action, input, final string
	}{
		{"Thought: x\nAction: calculator\nAction Input: {\"expression\":\"1+1\"}", "calculator", `{"expression":"1+1"}`, ""},
		{"Thought: done\nFinal Answer: 42", "", "", "42"},
		{"final answer: multi\nline", "", "", "multi\nline"},
		{"Action: `think`\nAction Input: ```json\n{\"thought\":\"a\"}\n```", "think", "```json\n{\"thought\":\"a\"}\n```", ""},
		{"Just an answer without the protocol.", "", "", ""},
		{"Final Answer: 3\nAction: calculator", "", "", "3\nAction: calculator"},
	}
	for _, c := range cases {
		s := parseReAct(c.in)
		if s.action != c.action || s.input != c.input || s.final != c.final {
			t.Errorf("parseReAct(%q) = %+v", c.in, s)
		}
	}
}

func TestReactArgumentRepair(t *testing.T) {
	a := &reactAgent{loop{cfg: Config{Executor: executor(t, nil, nil)}}}
	cases := map[string]string{
		`{"expression":"2+2"}`:                   `{"expression":"2+2"}`,
		"```json\n{\"expression\":\"2+2\"}\n```": `{"expression":"2+2"}`,
		`2+2`:                                    `{"expression":"2+2"}`,
		`"2+2"`:                                  `{"expression":"2+2"}`,
		`{"expression":"2+2"} trailing words`:    `{"expression":"2+2"}`,
		``:                                       `{}`,
	}
	for in, want := range cases {
		if got := a.arguments(reactStep{action: "calculator", input: in}); got != want {
			t.Errorf("arguments(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOnMessageReportsEveryAppendedMessage(t *testing.T) {
	for _, name := range []string{Orchestrator, ReAct} {
		t.Run(name, func(t *testing.T) {
			eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
				if n == 1 && name == Orchestrator {
					return calls(call("c1", "calculator", `{"expression":"1+1"}`)), nil, nil
				}
				if n == 1 {
					return text("Action: calculator\nAction Input: {\"expression\":\"1+1\"}"), nil, nil
				}
				return text("Final Answer: 2"), nil, nil
			}}
			var seen []Appended
			a, _ := New(name, Config{Engine: eng, Model: "m", Executor: executor(t, nil, nil), OnMessage: func(m Appended) { seen = append(seen, m) }})
			conv := &Conversation{}
			if _, err := a.Run(context.Background(), conv, "1+1?"); err != nil {
				t.Fatal(err)
			}
			if len(seen) != len(conv.Messages) {
				t.Fatalf("reported %d messages, conversation has %d", len(seen), len(conv.Messages))
			}
			for i := range seen {
				if seen[i].Message.Role != conv.Messages[i].Role || seen[i].Message.Content != conv.Messages[i].Content {
					t.Fatalf("message %d: reported %+v, stored %+v", i, seen[i].Message, conv.Messages[i])
				}
			}
			if seen[1].Usage == nil || seen[2].Result == nil || seen[2].Result.Content != "2" {
				t.Fatalf("usage/result not attached: %+v", seen)
			}
		})
	}
}

func TestToolCallWrittenAsTextIsRun(t *testing.T) {
	for name, reply := range map[string]string{
		"hermes tags": "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"6*7\"}}\n</tool_call>",
		"bare json":   "```json\n{\"name\": \"calculator\", \"parameters\": \"{\\\"expression\\\": \\\"6*7\\\"}\"}\n```",
	} {
		t.Run(name, func(t *testing.T) {
			eng := &fakeEngine{reply: func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error) {
				if n == 1 {
					return text(reply), nil, nil
				}
				return text("42"), nil, nil
			}}
			a := newAgent(t, Orchestrator, eng, executor(t, nil, nil), nil)
			conv := &Conversation{}
			res, err := a.Run(context.Background(), conv, "6*7?")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolResults) != 1 || res.ToolResults[0].Content != "42" || res.Content != "42" || len(res.Notices) != 1 {
				t.Fatalf("result = %+v", res)
			}
			checkConsistent(t, conv)
		})
	}
	// Text that only looks like JSON, or names a tool not offered, is an answer.
	for _, reply := range []string{`{"answer": 42}`, `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`, "Use the calculator."} {
		if calls := textToolCalls(reply, map[string]bool{"calculator": true}); calls != nil {
			t.Errorf("%q read as calls %+v", reply, calls)
		}
	}
}
