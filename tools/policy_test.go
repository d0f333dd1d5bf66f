package tools_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// auditRec keeps audit entries.
// auditRec keeps the audit log in memory.
type auditRec = tools.MemoryAudit

// memAlways is an always-approval store in memory.
type memAlways struct {
	mu  sync.Mutex
	set map[string]bool
	err error
}

// set holds grant keys (tools.Grant.Key): a bare name is a tool-wide
// grant.
func (m *memAlways) AlwaysMatch(tool string, scope tools.Scope) (tools.Grant, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range []tools.Grant{{Tool: tool, Scope: scope}, {Tool: tool}} {
		if m.set[g.Key()] && g.Covers(tool, scope) {
			return g, true, m.err
		}
	}
	return tools.Grant{}, false, m.err
}

func (m *memAlways) AllowAlways(g tools.Grant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if m.set == nil {
		m.set = map[string]bool{}
	}
	m.set[g.Key()] = true
	return nil
}

// answerer answers with a fixed Answer and counts the questions.
type answerer struct {
	ans   tools.Answer
	asked atomic.Int32
	last  tools.ConfirmRequest
}

func (a *answerer) Answer(_ context.Context, req tools.ConfirmRequest) (tools.Answer, error) {
	a.asked.Add(1)
	a.last = req
	return a.ans, nil
}

func (a *answerer) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	ans, err := a.Answer(ctx, req)
	return ans.Decision, err
}

func writeTool(ran *[]tools.Args) *fakeTool {
	return &fakeTool{
		spec: tools.Spec{Name: "write", Description: "writes", RequiresConfirmation: true,
			Parameters: tools.Params(tools.StringParam("path", "where", true), tools.StringParam("token", "a credential", false))},
		run: func(_ context.Context, a tools.Args) tools.Result {
			*ran = append(*ran, a)
			return tools.OK("wrote " + a.String("path"))
		},
	}
}

func policyExec(t *testing.T, o tools.PolicyOptions, list ...tools.Tool) *tools.Executor {
	t.Helper()
	e, err := tools.NewExecutor(list, tools.ExecutorOptions{Policy: tools.NewPolicy(o)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The layers in order, each recorded with who decided.
func TestPolicyLayers(t *testing.T) {
	call := tools.Call{ID: "c1", Name: "write", Arguments: `{"path":"a.txt"}`}
	cases := []struct {
		name    string
		o       func(*tools.PolicyOptions, *answerer)
		allowed bool
		by      string
		asked   int32
	}{
		{"nobody to ask denies", func(*tools.PolicyOptions, *answerer) {}, false, tools.ByNoTerminal, 0},
		{"--yes allows", func(o *tools.PolicyOptions, _ *answerer) { o.Yes = true }, true, tools.ByYes, 0},
		{"a task's approve list allows its tools", func(o *tools.PolicyOptions, _ *answerer) {
			o.Task = &tools.TaskApproval{ID: "t1", Approved: []string{"write"}}
		}, true, tools.ByTask, 0},
		{"a task denies what it did not approve", func(o *tools.PolicyOptions, _ *answerer) {
			o.Task = &tools.TaskApproval{ID: "t1", Approved: []string{"other"}}
		}, false, tools.ByTask, 0},
		{"an always-approval allows without asking", func(o *tools.PolicyOptions, a *answerer) {
			o.Always = &memAlways{set: map[string]bool{"write": true}}
			o.Asker = a
		}, true, tools.ByAlways, 0},
		{"config confirm = true asks even when always-allowed", func(o *tools.PolicyOptions, a *answerer) {
			o.Always = &memAlways{set: map[string]bool{"write": true}}
			o.Overrides = map[string]bool{"write": true}
			o.Asker = a
		}, false, tools.ByPerson, 1},
		{"an always-approval that cannot be read asks", func(o *tools.PolicyOptions, a *answerer) {
			o.Always = &memAlways{set: map[string]bool{"write": true}, err: errors.New("database busy")}
			o.Asker = a
		}, false, tools.ByPerson, 1},
		{"a person is asked", func(o *tools.PolicyOptions, a *answerer) {
			a.ans = tools.Answer{Decision: tools.AllowOnce}
			o.Asker = a
		}, true, tools.ByPerson, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []tools.Args
			audit := &auditRec{}
			a := &answerer{}
			o := tools.PolicyOptions{Source: tools.SourceAsk, Audit: audit, Nobody: tools.ByNoTerminal}
			c.o(&o, a)
			e := policyExec(t, o, writeTool(&ran))
			r := e.Execute(context.Background(), call)
			if r.Success != c.allowed || (len(ran) == 1) != c.allowed {
				t.Fatalf("allowed=%v ran=%d, want %v: %q", r.Success, len(ran), c.allowed, r.Content)
			}
			if got := a.asked.Load(); got != c.asked {
				t.Errorf("asked %d times, want %d", got, c.asked)
			}
			entries := audit.Entries()
			if len(entries) != 1 {
				t.Fatalf("audit entries = %+v, want one", entries)
			}
			want := tools.Allowed
			if !c.allowed {
				want = tools.Denied
			}
			en := entries[0]
			if en.Decision != want || en.By != c.by || en.Source != tools.SourceAsk || en.Tool != "write" || en.Args["path"] != "a.txt" {
				t.Errorf("audited %+v, want %s by %s", en, want, c.by)
			}
		})
	}
}

// Edited arguments run, are checked against the schema, are what the
// result reports, and the audit log keeps both versions.
func TestPolicyEditedArguments(t *testing.T) {
	var ran []tools.Args
	audit := &auditRec{}
	a := &answerer{ans: tools.Answer{Decision: tools.AllowOnce, Arguments: tools.Args{"path": "b.txt", "token": "s3cr3t-value"}}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Audit: audit, Source: tools.SourceTUI, Session: func() string { return "sess-1" }}, writeTool(&ran))
	r := e.Execute(context.Background(), tools.Call{ID: "c1", Name: "write", Arguments: `{"path":"a.txt"}`})
	if !r.Success || len(ran) != 1 || ran[0]["path"] != "b.txt" {
		t.Fatalf("the edit did not run: %+v ran=%v", r, ran)
	}
	if a.last.Validate == nil || a.last.Validate(tools.Args{"path": 3}) == nil {
		t.Fatal("the request offers no schema check for an edit")
	}
	edited, ok := r.EditedArguments()
	if !ok || edited["path"] != "b.txt" {
		t.Fatalf("EditedArguments = %v, %v", edited, ok)
	}
	en := audit.Entries()[0]
	if en.Decision != tools.Edited || en.Args["path"] != "b.txt" || en.AskedArgs["path"] != "a.txt" || en.Session != "sess-1" {
		t.Fatalf("audited %+v", en)
	}
	if en.Args["token"] != tools.RedactedMark {
		t.Errorf("a token reached the audit log: %v", en.Args)
	}

	// An edit that breaks the schema never runs.
	ran = nil
	a.ans.Arguments = tools.Args{"path": 42}
	r = e.Execute(context.Background(), tools.Call{ID: "c2", Name: "write", Arguments: `{"path":"a.txt"}`})
	if r.Success || len(ran) != 0 || !strings.Contains(r.Content, "Invalid arguments") {
		t.Fatalf("an invalid edit ran or was not explained: %+v", r)
	}
	// Unedited calls say nothing of an edit.
	a.ans.Arguments = nil
	if r := e.Execute(context.Background(), tools.Call{ID: "c3", Name: "write", Arguments: `{"path":"a.txt"}`}); !r.Success {
		t.Fatal(r.Content)
	} else if _, ok := r.EditedArguments(); ok {
		t.Fatal("an unedited call reports an edit")
	}
}

// A denial's reason reaches the model and the audit log.
func TestPolicyDenialReason(t *testing.T) {
	var ran []tools.Args
	audit := &auditRec{}
	a := &answerer{ans: tools.Answer{Decision: tools.Deny, Reason: "use the staging bucket\x1b[31m"}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Audit: audit}, writeTool(&ran))
	r := e.Execute(context.Background(), tools.Call{Name: "write", Arguments: `{"path":"a.txt"}`})
	if r.Success || r.Status != tools.StatusDenied || r.Content != "Denied by the user: use the staging bucket[31m" {
		t.Fatalf("got %+v", r)
	}
	if en := audit.Entries()[0]; en.Decision != tools.Denied || en.By != tools.ByPerson || en.Reason != "use the staging bucket[31m" {
		t.Fatalf("audited %+v", en)
	}
}

// "Always allow" is remembered; when it cannot be, the call still runs
// once and the tool is allowed for the session.
func TestPolicyAlwaysAllow(t *testing.T) {
	var ran []tools.Args
	always := &memAlways{}
	a := &answerer{ans: tools.Answer{Decision: tools.AllowAlways}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Always: always}, writeTool(&ran))
	for range 2 {
		if r := e.Execute(context.Background(), tools.Call{Name: "write", Arguments: `{"path":"a"}`}); !r.Success {
			t.Fatal(r.Content)
		}
	}
	if a.asked.Load() != 1 || !always.set["write"] || !a.last.CanAlways {
		t.Fatalf("asked %d, remembered %v", a.asked.Load(), always.set)
	}

	broken := &memAlways{err: errors.New("disk full")}
	audit := &auditRec{}
	a = &answerer{ans: tools.Answer{Decision: tools.AllowAlways}}
	e = policyExec(t, tools.PolicyOptions{Asker: a, Always: broken, Audit: audit}, writeTool(&ran))
	if r := e.Execute(context.Background(), tools.Call{Name: "write", Arguments: `{"path":"a"}`}); !r.Success {
		t.Fatal(r.Content)
	}
	if !e.Approvals().Allowed("write") || !strings.Contains(audit.Entries()[0].Reason, "disk full") {
		t.Fatalf("a failed always-approval was not kept for the session or not said: %+v", audit.Entries())
	}
}

// A tool whose confirmation the config turned off runs unasked, and the
// audit log says the config allowed it; a tool that never asks is not
// audited.
func TestPolicyConfigWaiver(t *testing.T) {
	var ran []tools.Args
	off := false
	tool := tools.ApplySettings(writeTool(&ran), tools.Settings{RequiresConfirmation: &off})
	audit := &auditRec{}
	e := policyExec(t, tools.PolicyOptions{Audit: audit, Source: tools.SourceToolsRun}, tool, echoTool("echo"))
	if r := e.Execute(context.Background(), tools.Call{Name: "write", Arguments: `{"path":"a"}`}); !r.Success {
		t.Fatal(r.Content)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`}); !r.Success {
		t.Fatal(r.Content)
	}
	entries := audit.Entries()
	if len(entries) != 1 || entries[0].By != tools.ByConfig || entries[0].Tool != "write" || entries[0].Decision != tools.Allowed {
		t.Fatalf("audited %+v", entries)
	}
}

func TestEvalPolicyAsksNobody(t *testing.T) {
	var ran []tools.Args
	audit := &auditRec{}
	p := tools.EvalPolicy([]string{"other"}, "", false, nil, audit)
	e, err := tools.NewExecutor([]tools.Tool{writeTool(&ran)}, tools.ExecutorOptions{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "write", Arguments: `{"path":"a"}`}); r.Success || len(ran) != 0 {
		t.Fatalf("an eval ran an unapproved call: %+v", r)
	}
	if en := audit.Entries()[0]; en.Source != tools.SourceEval || en.Decision != tools.Denied {
		t.Fatalf("audited %+v", en)
	}
}

func TestRedactArgs(t *testing.T) {
	in := tools.Args{
		"url":     "https://user:pw@api.example.com/v1/items?key=abcdef123456",
		"headers": map[string]any{"Authorization": "Bearer abc.def.ghi", "Accept": "json"},
		"note":    "call https://example.com/ok then curl -H 'Authorization: Bearer sk-live-123456' x",
		"list":    []any{map[string]any{"password": "hunter22"}},
		"count":   3.0,
	}
	out := tools.RedactArgs(in)
	if out["url"] != "https://api.example.com/v1/items?…" {
		t.Errorf("url = %v", out["url"])
	}
	h := out["headers"].(map[string]any)
	if h["Authorization"] != tools.RedactedMark || h["Accept"] != "json" {
		t.Errorf("headers = %v", h)
	}
	if n := out["note"].(string); strings.Contains(n, "sk-live") || !strings.Contains(n, "https://example.com/ok") {
		t.Errorf("note = %q", n)
	}
	if p := out["list"].([]any)[0].(map[string]any)["password"]; p != tools.RedactedMark {
		t.Errorf("password = %v", p)
	}
	if out["count"] != 3.0 || in["url"] == out["url"] {
		t.Error("redaction changed a number or the input")
	}
}
