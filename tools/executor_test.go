package tools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// fakeTool is a configurable tool for executor tests.
type fakeTool struct {
	spec tools.Spec
	run  func(ctx context.Context, args tools.Args) tools.Result
}

func (f *fakeTool) Spec() tools.Spec { return f.spec }
func (f *fakeTool) Execute(ctx context.Context, args tools.Args) tools.Result {
	return f.run(ctx, args)
}

func echoTool(name string) *fakeTool {
	return &fakeTool{
		spec: tools.Spec{Name: name, Description: "echo", Parameters: tools.Params(tools.StringParam("text", "text", true))},
		run: func(_ context.Context, a tools.Args) tools.Result {
			return tools.OK(a.String("text"))
		},
	}
}

func newExec(t *testing.T, rec events.Publisher, c tools.Confirmer, list ...tools.Tool) *tools.Executor {
	t.Helper()
	e, err := tools.NewExecutor(list, tools.ExecutorOptions{Bus: rec, Confirmer: c})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestExecuteSuccessPublishesStartAndEndWithLatency(t *testing.T) {
	rec := &events.Recorder{}
	slow := &fakeTool{spec: tools.Spec{Name: "slow", Parameters: tools.Params()}, run: func(context.Context, tools.Args) tools.Result {
		time.Sleep(20 * time.Millisecond)
		r := tools.OK("done")
		r.CostUSD = 0.25
		return r
	}}
	e := newExec(t, rec, nil, slow)
	ctx := events.WithRun(context.Background(), events.RunInfo{ID: "run1", Agent: "orchestrator"})
	r := e.Execute(ctx, tools.Call{ID: "call_1", Name: "slow", Arguments: ""})
	if !r.Success || r.Content != "done" || r.ToolName != "slow" || r.Status != tools.StatusOK {
		t.Fatalf("result = %+v", r)
	}
	if r.LatencySeconds < 0.02 {
		t.Errorf("latency %v, want >= 20ms", r.LatencySeconds)
	}
	got := rec.Events()
	if len(got) != 2 || got[0].Type != events.ToolCallStart || got[1].Type != events.ToolCallEnd {
		t.Fatalf("events = %v", rec.Types())
	}
	start, end := got[0], got[1]
	if start.Tool.Tool != "slow" || start.Tool.CallID != "call_1" || start.Run.Agent != "orchestrator" || start.Run.ID != "run1" {
		t.Errorf("start payload = %+v run=%+v", start.Tool, start.Run)
	}
	if !end.Tool.Success || end.Tool.LatencySeconds != r.LatencySeconds || end.Tool.CostUSD != 0.25 || end.Tool.Result != "done" {
		t.Errorf("end payload = %+v", end.Tool)
	}
	if _, ok := r.Metadata["arguments"]; !ok {
		t.Errorf("metadata lacks arguments: %v", r.Metadata)
	}
}

func TestExecuteEarlyFailures(t *testing.T) {
	e := newExec(t, nil, nil, echoTool("echo"))
	cases := []struct {
		name, tool, args, want string
	}{
		{"unknown tool", "nope", `{}`, "Unknown tool: nope (available: echo)"},
		{"invalid JSON", "echo", `{"text":`, "Invalid arguments JSON: unexpected end of JSON input"},
		{"not an object", "echo", `[1,2]`, "Invalid arguments: expected a JSON object, got array."},
		{"string instead of object", "echo", `"hi"`, "Invalid arguments: expected a JSON object, got string."},
		{"null", "echo", `null`, "Invalid arguments: expected a JSON object, got null."},
		{"missing required", "echo", `{}`, "Invalid arguments: missing required parameter 'text'."},
		{"wrong type", "echo", `{"text": 5}`, "Invalid arguments: parameter 'text' must be a string, got integer."},
		{"empty string means {}", "echo", ``, "Invalid arguments: missing required parameter 'text'."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Execute(context.Background(), tools.Call{ID: "c", Name: c.tool, Arguments: c.args})
			if r.Success || r.Content != c.want || r.Status != tools.StatusError {
				t.Fatalf("got %q (success=%v status=%s), want %q", r.Content, r.Success, r.Status, c.want)
			}
		})
	}
}

func TestEarlyFailurePublishesErrorEventOnly(t *testing.T) {
	rec := &events.Recorder{}
	e := newExec(t, rec, nil, echoTool("echo"))
	e.Execute(context.Background(), tools.Call{Name: "echo", Arguments: "{"})
	if types := rec.Types(); len(types) != 1 || types[0] != events.ToolCallError {
		t.Fatalf("events = %v, want [tool_call_error]", types)
	}
}

func TestSchemaEnumAndUnknownParameter(t *testing.T) {
	spec := tools.Spec{Name: "pick", Parameters: tools.Params(tools.EnumParam("color", "c", true, "red", "blue"))}
	spec.Parameters.AdditionalProperties = falseSchema()
	tool := &fakeTool{spec: spec, run: func(context.Context, tools.Args) tools.Result { return tools.OK("ok") }}
	e := newExec(t, nil, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "pick", Arguments: `{"color":"green"}`})
	if want := `Invalid arguments: parameter 'color' must be one of "red", "blue"; got "green".`; r.Content != want {
		t.Errorf("enum: got %q want %q", r.Content, want)
	}
	r = e.Execute(context.Background(), tools.Call{Name: "pick", Arguments: `{"color":"red","size":1}`})
	if want := "Invalid arguments: unknown parameter 'size' (accepted: color)."; r.Content != want {
		t.Errorf("unknown: got %q want %q", r.Content, want)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "pick", Arguments: `{"color":"red"}`}); !r.Success {
		t.Errorf("valid call failed: %q", r.Content)
	}
}

func TestSchemaDeepKeywordsUseFullValidator(t *testing.T) {
	schema, err := tools.SchemaFromJSON([]byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tool := &fakeTool{spec: tools.Spec{Name: "n", Parameters: schema}, run: func(context.Context, tools.Args) tools.Result { return tools.OK("ok") }}
	e := newExec(t, nil, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "n", Arguments: `{"n": 11}`})
	if r.Success || !strings.HasPrefix(r.Content, "Invalid arguments: ") || !strings.Contains(r.Content, "maximum") {
		t.Fatalf("got %q", r.Content)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "n", Arguments: `{"n": 5}`}); !r.Success {
		t.Fatalf("valid call failed: %q", r.Content)
	}
}

func confirmTool(name string, ran *atomic.Int32) *fakeTool {
	return &fakeTool{
		spec: tools.Spec{Name: name, Description: "does harm", RequiresConfirmation: true, Parameters: tools.Params()},
		run: func(context.Context, tools.Args) tools.Result {
			ran.Add(1)
			return tools.OK("ran")
		},
	}
}

func TestConfirmationGate(t *testing.T) {
	t.Run("no confirmer refuses and never runs", func(t *testing.T) {
		var ran atomic.Int32
		rec := &events.Recorder{}
		e := newExec(t, rec, nil, confirmTool("danger", &ran))
		r := e.Execute(context.Background(), tools.Call{Name: "danger"})
		want := "Tool 'danger' requires confirmation but no confirmation callback is available."
		if r.Success || r.Content != want || r.Status != tools.StatusDenied || ran.Load() != 0 {
			t.Fatalf("got %+v ran=%d", r, ran.Load())
		}
		// The policy's decision, then the denial: nothing ran.
		if types := rec.Types(); len(types) != 2 || types[0] != events.ConfirmAnswer || types[1] != events.ToolCallDenied {
			t.Fatalf("events = %v, want confirmation_answer then tool_call_denied", types)
		}
		if text := rec.Events()[0].Text; text != "denied by nobody to ask: nobody could be asked" {
			t.Errorf("decision event says %q", text)
		}
	})
	t.Run("deny", func(t *testing.T) {
		var ran atomic.Int32
		rec := &events.Recorder{}
		e := newExec(t, rec, tools.DenyAll, confirmTool("danger", &ran))
		r := e.Execute(context.Background(), tools.Call{Name: "danger"})
		if r.Content != "Tool 'danger' execution denied by user." || r.Status != tools.StatusDenied || ran.Load() != 0 {
			t.Fatalf("got %+v", r)
		}
		for _, typ := range rec.Types() {
			if typ == events.ToolCallStart || typ == events.ToolCallEnd {
				t.Fatalf("denied call published %s", typ)
			}
		}
	})
	t.Run("allow once asks every time", func(t *testing.T) {
		var ran, asked atomic.Int32
		c := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
			asked.Add(1)
			if req.Spec.Description != "does harm" {
				t.Errorf("request lacks the spec: %+v", req.Spec)
			}
			return tools.AllowOnce, nil
		})
		e := newExec(t, nil, c, confirmTool("danger", &ran))
		for i := 0; i < 2; i++ {
			if r := e.Execute(context.Background(), tools.Call{Name: "danger"}); !r.Success {
				t.Fatal(r.Content)
			}
		}
		if asked.Load() != 2 || ran.Load() != 2 {
			t.Fatalf("asked %d ran %d, want 2 and 2", asked.Load(), ran.Load())
		}
	})
	t.Run("allow for session asks once", func(t *testing.T) {
		var ran, asked atomic.Int32
		c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
			asked.Add(1)
			return tools.AllowSession, nil
		})
		e := newExec(t, nil, c, confirmTool("danger", &ran))
		for i := 0; i < 3; i++ {
			e.Execute(context.Background(), tools.Call{Name: "danger"})
		}
		if asked.Load() != 1 || ran.Load() != 3 || !e.Approvals().Allowed("danger") {
			t.Fatalf("asked %d ran %d", asked.Load(), ran.Load())
		}
	})
	t.Run("confirmer error counts as cancelled", func(t *testing.T) {
		var ran atomic.Int32
		c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
			return tools.AllowOnce, errors.New("dialog closed")
		})
		e := newExec(t, nil, c, confirmTool("danger", &ran))
		r := e.Execute(context.Background(), tools.Call{Name: "danger"})
		if r.Success || r.Status != tools.StatusCancelled || ran.Load() != 0 {
			t.Fatalf("got %+v ran=%d", r, ran.Load())
		}
	})
	t.Run("tools without the flag are never asked", func(t *testing.T) {
		c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
			t.Error("confirmer called for a safe tool")
			return tools.Deny, nil
		})
		e := newExec(t, nil, c, echoTool("echo"))
		if r := e.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`}); !r.Success {
			t.Fatal(r.Content)
		}
	})
}

func TestSettingsOverrideConfirmationAndTimeout(t *testing.T) {
	var ran atomic.Int32
	on, off := true, false
	timeout := 0.05
	safe := tools.ApplySettings(confirmTool("danger", &ran), tools.Settings{RequiresConfirmation: &off})
	if safe.Spec().RequiresConfirmation {
		t.Fatal("override off did not apply")
	}
	guarded := tools.ApplySettings(echoTool("echo"), tools.Settings{RequiresConfirmation: &on, TimeoutSeconds: &timeout})
	if s := guarded.Spec(); !s.RequiresConfirmation || s.TimeoutSeconds != 0.05 {
		t.Fatalf("spec = %+v", s)
	}
	e := newExec(t, nil, nil, safe, guarded)
	if r := e.Execute(context.Background(), tools.Call{Name: "danger"}); !r.Success {
		t.Errorf("confirmation turned off but call refused: %q", r.Content)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`}); r.Success {
		t.Error("confirmation turned on but the call ran without a confirmer")
	}
}

func TestTimeoutCancelsToolContext(t *testing.T) {
	rec := &events.Recorder{}
	sawCancel := make(chan struct{})
	tool := &fakeTool{
		spec: tools.Spec{Name: "hang", Parameters: tools.Params(), TimeoutSeconds: 0.05},
		run: func(ctx context.Context, _ tools.Args) tools.Result {
			<-ctx.Done()
			close(sawCancel)
			return tools.Fail("interrupted")
		},
	}
	e := newExec(t, rec, nil, tool)
	r := e.Execute(context.Background(), tools.Call{ID: "c9", Name: "hang"})
	if r.Success || r.Status != tools.StatusTimeout || r.Content != "Tool 'hang' timed out after 0.05s." {
		t.Fatalf("got %+v", r)
	}
	select {
	case <-sawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool's context was not cancelled")
	}
	types := rec.Types()
	want := []events.Type{events.ToolCallStart, events.ToolTimeout, events.ToolCallEnd}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", types, want)
	}
}

func TestTimeoutReturnsEvenIfToolIgnoresContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tool := &fakeTool{
		spec: tools.Spec{Name: "stubborn", Parameters: tools.Params(), TimeoutSeconds: 0.02},
		run: func(context.Context, tools.Args) tools.Result {
			<-release
			return tools.OK("late")
		},
	}
	e := newExec(t, nil, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "stubborn"})
	if r.Status != tools.StatusTimeout {
		t.Fatalf("got %+v", r)
	}
}

func TestCancellationByCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	tool := &fakeTool{
		spec: tools.Spec{Name: "long", Parameters: tools.Params()},
		run: func(ctx context.Context, _ tools.Args) tools.Result {
			close(started)
			<-ctx.Done()
			return tools.Fail("killed: %v", ctx.Err())
		},
	}
	e := newExec(t, nil, nil, tool)
	go func() { <-started; cancel() }()
	r := e.Execute(ctx, tools.Call{Name: "long"})
	if r.Status != tools.StatusCancelled || r.Content != "Tool 'long' was cancelled before it finished." {
		t.Fatalf("got %+v", r)
	}
}

func TestPanicBecomesFailedResult(t *testing.T) {
	rec := &events.Recorder{}
	tool := &fakeTool{spec: tools.Spec{Name: "boom", Parameters: tools.Params()}, run: func(context.Context, tools.Args) tools.Result {
		panic("kaboom")
	}}
	e := newExec(t, rec, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "boom"})
	if r.Success || r.Content != "Tool execution error: kaboom" {
		t.Fatalf("got %+v", r)
	}
	if types := rec.Types(); len(types) != 2 || types[1] != events.ToolCallEnd || rec.Events()[1].Tool.Success {
		t.Fatalf("events = %v", types)
	}
}

func TestEndEventResultIsCapped(t *testing.T) {
	rec := &events.Recorder{}
	big := strings.Repeat("é", events.ResultLimit)
	tool := &fakeTool{spec: tools.Spec{Name: "big", Parameters: tools.Params()}, run: func(context.Context, tools.Args) tools.Result {
		return tools.OK(big)
	}}
	e := newExec(t, rec, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "big"})
	if r.Content != big {
		t.Fatal("the result itself must not be cut")
	}
	end := rec.Events()[1].Tool.Result
	if len(end) > events.ResultLimit || !strings.HasSuffix(end, "[truncated]") {
		t.Fatalf("end event result has %d bytes", len(end))
	}
	if !utf8Valid(end) {
		t.Fatal("cut in the middle of a rune")
	}
}

func TestExecuteAllRunsInParallelAndKeepsOrder(t *testing.T) {
	var inFlight, peak atomic.Int32
	barrier := make(chan struct{})
	var once sync.Once
	tool := &fakeTool{
		spec: tools.Spec{Name: "par", Parameters: tools.Params(tools.IntegerParam("i", "", true))},
		run: func(_ context.Context, a tools.Args) tools.Result {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if n == 3 {
				once.Do(func() { close(barrier) })
			}
			select {
			case <-barrier:
			case <-time.After(5 * time.Second):
			}
			inFlight.Add(-1)
			i, _, _ := a.Int("i")
			return tools.OK(fmt.Sprint(i))
		},
	}
	rec := &events.Recorder{}
	e := newExec(t, rec, nil, tool)
	calls := []tools.Call{{ID: "a", Name: "par", Arguments: `{"i":0}`}, {ID: "b", Name: "par", Arguments: `{"i":1}`}, {ID: "c", Name: "par", Arguments: `{"i":2}`}}
	results := e.ExecuteAll(context.Background(), calls)
	for i, r := range results {
		if r.Content != fmt.Sprint(i) {
			t.Fatalf("result %d = %q: order not kept", i, r.Content)
		}
	}
	if peak.Load() != 3 {
		t.Fatalf("peak concurrency %d, want 3", peak.Load())
	}
	for _, ev := range rec.Events() {
		if ev.Tool.Parallel != 3 {
			t.Fatalf("event %s parallel=%d, want 3", ev.Type, ev.Tool.Parallel)
		}
	}
}

// Every event of a call says where the call stands among its turn's
// calls, whatever order they run and end in: asked, started, ended,
// denied or refused before it could start.
func TestExecuteAllEventsCarryTheCallIndex(t *testing.T) {
	var ran atomic.Int32
	rec := &events.Recorder{}
	allow := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) { return tools.AllowOnce, nil })
	e := newExec(t, rec, allow, echoTool("echo"), confirmTool("danger", &ran))
	calls := []tools.Call{
		{ID: "a", Name: "echo", Arguments: `{"text":"x"}`},
		{ID: "b", Name: "nope"},
		{ID: "c", Name: "danger"},
		{ID: "d", Name: "echo", Arguments: `{"text":1}`},
	}
	e.ExecuteAll(context.Background(), calls)
	want := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	seen := map[events.Type]bool{}
	for _, ev := range rec.Events() {
		if ev.Tool == nil || ev.Type == events.ConfirmAnswer { // the decision's record, not the call's
			continue
		}
		seen[ev.Type] = true
		if ev.Tool.Index != want[ev.Tool.CallID] {
			t.Errorf("%s of call %s has index %d, want %d", ev.Type, ev.Tool.CallID, ev.Tool.Index, want[ev.Tool.CallID])
		}
	}
	for _, ty := range []events.Type{events.ToolCallStart, events.ToolCallEnd, events.ToolCallError, events.ConfirmAsk} {
		if !seen[ty] {
			t.Errorf("no %s event was checked", ty)
		}
	}
}

func TestConcurrentExecuteIsRaceFree(t *testing.T) {
	bus := events.New()
	sub := bus.Subscribe(16)
	go func() {
		for range sub.C {
		}
	}()
	defer bus.Close()
	c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) { return tools.AllowSession, nil })
	var ran atomic.Int32
	e, _ := tools.NewExecutor([]tools.Tool{echoTool("echo"), confirmTool("danger", &ran)}, tools.ExecutorOptions{Bus: bus, Confirmer: c})
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`})
			e.Execute(context.Background(), tools.Call{Name: "danger"})
		}()
	}
	wg.Wait()
	if ran.Load() != 50 {
		t.Fatalf("ran %d", ran.Load())
	}
}

func TestExecutorRejectsDuplicateNames(t *testing.T) {
	if _, err := tools.NewExecutor([]tools.Tool{echoTool("x"), echoTool("x")}, tools.ExecutorOptions{}); err == nil {
		t.Fatal("want an error for a duplicate tool name")
	}
}

func TestAddRemoveAndOpenAI(t *testing.T) {
	e := newExec(t, nil, nil, echoTool("a"))
	if err := e.Add(echoTool("b")); err != nil {
		t.Fatal(err)
	}
	e.Remove("a")
	specs := e.AvailableTools()
	if len(specs) != 1 || specs[0].Name != "b" {
		t.Fatalf("specs = %v", specs)
	}
	oa := e.OpenAITools()
	if len(oa) != 1 || oa[0].Type != "function" || oa[0].Function.Name != "b" {
		t.Fatalf("openai = %+v", oa)
	}
}

type inlinePanic struct{ fakeTool }

func (inlinePanic) NonBlocking() {}

func TestNonBlockingToolPanicIsRecovered(t *testing.T) {
	rec := &events.Recorder{}
	tool := &inlinePanic{fakeTool{spec: tools.Spec{Name: "pure", Parameters: tools.Params()}, run: func(context.Context, tools.Args) tools.Result {
		panic("inline boom")
	}}}
	e := newExec(t, rec, nil, tool)
	r := e.Execute(context.Background(), tools.Call{Name: "pure"})
	if r.Success || r.Content != "Tool execution error: inline boom" || r.Status != tools.StatusError {
		t.Fatalf("got %+v", r)
	}
	if types := rec.Types(); len(types) != 2 || types[1] != events.ToolCallEnd {
		t.Fatalf("events = %v", types)
	}
}

func TestParallelCallsAskOnceWhenAllowedForSession(t *testing.T) {
	var ran, asked atomic.Int32
	c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
		asked.Add(1)
		time.Sleep(20 * time.Millisecond) // a person reading the dialog
		return tools.AllowSession, nil
	})
	e := newExec(t, nil, c, confirmTool("danger", &ran))
	e.ExecuteAll(context.Background(), []tools.Call{{ID: "1", Name: "danger"}, {ID: "2", Name: "danger"}, {ID: "3", Name: "danger"}})
	if asked.Load() != 1 || ran.Load() != 3 {
		t.Fatalf("asked %d times, ran %d, want 1 and 3", asked.Load(), ran.Load())
	}
}

func TestHugeTimeoutDoesNotOverflow(t *testing.T) {
	tool := &fakeTool{spec: tools.Spec{Name: "slowish", Parameters: tools.Params(), TimeoutSeconds: 1e10},
		run: func(context.Context, tools.Args) tools.Result {
			time.Sleep(10 * time.Millisecond)
			return tools.OK("done")
		}}
	e := newExec(t, nil, nil, tool)
	if r := e.Execute(context.Background(), tools.Call{Name: "slowish"}); !r.Success {
		t.Fatalf("got %+v", r)
	}
}
