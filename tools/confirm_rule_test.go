package tools_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// ruledTool asks for confirmation when its "target" argument starts with
// "/far", and records whether its Execute saw a confirmed context.
type ruledTool struct {
	fakeTool
	confirmed atomic.Bool
	rule      func(tools.Args) (bool, string)
}

func (r *ruledTool) ConfirmationFor(args tools.Args) (bool, string) { return r.rule(args) }

func newRuledTool() *ruledTool {
	t := &ruledTool{}
	t.rule = func(a tools.Args) (bool, string) {
		if strings.HasPrefix(a.String("target"), "/far") {
			return true, "reaches " + a.String("target")
		}
		return false, ""
	}
	t.fakeTool = fakeTool{
		spec: tools.Spec{Name: "reach", Description: "reaches things", Parameters: tools.Params(tools.StringParam("target", "t", true))},
		run: func(ctx context.Context, a tools.Args) tools.Result {
			t.confirmed.Store(tools.Confirmed(ctx))
			return tools.OK("reached " + a.String("target"))
		},
	}
	return t
}

func reachCall(target string) tools.Call {
	return tools.Call{ID: "r1", Name: "reach", Arguments: `{"target":"` + target + `"}`}
}

func TestConfirmationRuleAsksPerCall(t *testing.T) {
	tool := newRuledTool()
	var reqs []tools.ConfirmRequest
	c := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		reqs = append(reqs, req)
		return tools.AllowOnce, nil
	})
	rec := &events.Recorder{}
	e := newExec(t, rec, c, tool)
	if r := e.Execute(context.Background(), reachCall("/near")); !r.Success || len(reqs) != 0 || tool.confirmed.Load() {
		t.Fatalf("near: %+v, %d requests, confirmed %v", r, len(reqs), tool.confirmed.Load())
	}
	if r := e.Execute(context.Background(), reachCall("/far/away")); !r.Success || !tool.confirmed.Load() {
		t.Fatalf("far: %+v, confirmed %v", r, tool.confirmed.Load())
	}
	if len(reqs) != 1 || reqs[0].Reason != "reaches /far/away" || reqs[0].Because() != ": it reaches /far/away" {
		t.Fatalf("requests = %+v", reqs)
	}
	asks := 0
	for _, typ := range rec.Types() {
		if typ == events.ConfirmAsk {
			asks++
		}
	}
	if asks != 1 {
		t.Errorf("%d confirm_ask events, want 1: %v", asks, rec.Types())
	}
}

func TestConfirmationRuleSurvivesSettings(t *testing.T) {
	off := false
	var asked atomic.Int32
	c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
		asked.Add(1)
		return tools.Deny, nil
	})
	timeout := 5.0
	wrapped := tools.ApplySettings(newRuledTool(), tools.Settings{RequiresConfirmation: &off, TimeoutSeconds: &timeout})
	e := newExec(t, nil, c, wrapped)
	r := e.Execute(context.Background(), reachCall("/far"))
	if r.Success || r.Status != tools.StatusDenied || asked.Load() != 1 {
		t.Fatalf("confirm = false under a settings wrapper skipped the rule: %+v asked %d", r, asked.Load())
	}
}

func TestConfirmationRuleWithNobodyToAsk(t *testing.T) {
	e := newExec(t, nil, nil, newRuledTool())
	r := e.Execute(context.Background(), reachCall("/far"))
	want := "Tool 'reach' requires confirmation (it reaches /far) but no confirmation callback is available."
	if r.Success || r.Content != want || r.Status != tools.StatusDenied {
		t.Fatalf("got %q, want %q", r.Content, want)
	}
}

func TestSessionApprovalCoversRuledCalls(t *testing.T) {
	tool := newRuledTool()
	var asked atomic.Int32
	c := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
		asked.Add(1)
		return tools.AllowSession, nil
	})
	e := newExec(t, nil, c, tool)
	for _, target := range []string{"/far/a", "/far/b"} {
		if r := e.Execute(context.Background(), reachCall(target)); !r.Success || !tool.confirmed.Load() {
			t.Fatalf("%s: %+v", target, r)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("asked %d times, want once", asked.Load())
	}
}

func TestConfirmationRuleThatPanicsAsks(t *testing.T) {
	tool := newRuledTool()
	tool.rule = func(tools.Args) (bool, string) { panic("broken rule") }
	var reason string
	c := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		reason = req.Reason
		return tools.Deny, nil
	})
	e := newExec(t, nil, c, tool)
	if r := e.Execute(context.Background(), reachCall("/near")); r.Success || reason == "" {
		t.Fatalf("a panicking rule let the call through: %+v (reason %q)", r, reason)
	}
}

func TestConfirmationReasonLosesControlCharacters(t *testing.T) {
	tool := newRuledTool()
	tool.rule = func(tools.Args) (bool, string) { return true, "reads \x1b[2J/etc\x07" }
	var reason string
	c := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		reason = req.Reason
		return tools.Deny, nil
	})
	newExec(t, nil, c, tool).Execute(context.Background(), reachCall("/x"))
	if reason != "reads [2J/etc" {
		t.Errorf("reason = %q", reason)
	}
}
