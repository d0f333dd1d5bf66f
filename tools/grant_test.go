package tools_test

import (
	"context"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// dirTool reads files: its grants name a directory, like file_read's.
type dirTool struct {
	fakeTool
	refuse func(tools.Args) *tools.Refusal
}

func (d *dirTool) GrantScope(a tools.Args) tools.Scope {
	dir := path.Dir(a.String("path"))
	return tools.Scope{Kind: tools.ScopeDir, Value: dir, Words: "reads in " + dir}
}

func (d *dirTool) Refuse(a tools.Args) *tools.Refusal {
	if d.refuse == nil {
		return nil
	}
	return d.refuse(a)
}

func newDirTool(ran *[]tools.Args) *dirTool {
	w := writeTool(ran)
	w.spec.Name = "read"
	return &dirTool{fakeTool: *w}
}

// codeTool's grants name its exact arguments, like code_interpreter's.
type codeTool struct{ fakeTool }

func (c *codeTool) GrantScope(a tools.Args) tools.Scope {
	return tools.ExactArguments(a, "this exact code")
}

func newCodeTool(ran *[]tools.Args) *codeTool {
	w := writeTool(ran)
	w.spec.Name = "code"
	return &codeTool{fakeTool: *w}
}

func call(name, args string) tools.Call { return tools.Call{ID: "c", Name: name, Arguments: args} }

// "For this session" on a read in /etc covers reads in /etc only; the
// request names the scope before the answer; the audit says which grant
// let a later call run.
func TestSessionGrantCoversItsDirectoryOnly(t *testing.T) {
	var ran []tools.Args
	a := &answerer{ans: tools.Answer{Decision: tools.AllowSession}}
	audit := &auditRec{}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Audit: audit}, newDirTool(&ran))
	for _, p := range []string{"/etc/hosts", "/etc/passwd"} {
		if r := e.Execute(context.Background(), call("read", `{"path":"`+p+`"}`)); !r.Success {
			t.Fatal(r.Content)
		}
	}
	if a.asked.Load() != 1 || a.last.Scope.Value != "/etc" || a.last.Scope.Words != "reads in /etc" {
		t.Fatalf("asked %d times, about %+v", a.asked.Load(), a.last.Scope)
	}
	e.Execute(context.Background(), call("read", `{"path":"/home/me/.profile"}`))
	if a.asked.Load() != 2 {
		t.Fatal("a grant for /etc covered /home/me")
	}
	entries := audit.Entries()
	if entries[0].Grant != "session: read: reads in /etc" || entries[1].By != tools.BySession || entries[1].Grant != "session: read: reads in /etc" {
		t.Fatalf("audited %+v", entries[:2])
	}
}

// "Always" is kept with its scope and holds in a new session (another
// policy on the same store), for that directory only; a tool-wide grant
// never covers a directory; it does cover a tool scoped by its arguments.
func TestAlwaysGrantKeepsItsScope(t *testing.T) {
	var ran []tools.Args
	always := &memAlways{}
	a := &answerer{ans: tools.Answer{Decision: tools.AllowAlways}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Always: always}, newDirTool(&ran))
	e.Execute(context.Background(), call("read", `{"path":"/etc/hosts"}`))
	if !always.set["read dir:/etc"] || len(always.set) != 1 {
		t.Fatalf("kept %v", always.set)
	}
	nobody := policyExec(t, tools.PolicyOptions{Always: always}, newDirTool(&ran)) // headless: nobody to ask
	if r := nobody.Execute(context.Background(), call("read", `{"path":"/etc/group"}`)); !r.Success {
		t.Fatalf("the always-grant did not hold in another run: %s", r.Content)
	}
	if r := nobody.Execute(context.Background(), call("read", `{"path":"/root/token"}`)); r.Success {
		t.Fatal("an always-grant for /etc read /root")
	}
	wide := &memAlways{set: map[string]bool{"read": true, "code": true}} // as databases from before scopes hold them
	e = policyExec(t, tools.PolicyOptions{Always: wide}, newDirTool(&ran), newCodeTool(&ran))
	if r := e.Execute(context.Background(), call("read", `{"path":"/etc/hosts"}`)); r.Success {
		t.Fatal("a tool-wide grant read a directory")
	}
	if r := e.Execute(context.Background(), call("code", `{"path":"x"}`)); !r.Success {
		t.Fatalf("a tool-wide grant did not cover a call scoped by its arguments: %s", r.Content)
	}
}

// For a tool scoped by its arguments, "for this session" covers the
// exact arguments; "always" is the whole tool.
func TestExactArgumentGrants(t *testing.T) {
	var ran []tools.Args
	always := &memAlways{}
	a := &answerer{ans: tools.Answer{Decision: tools.AllowSession}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Always: always}, newCodeTool(&ran))
	e.Execute(context.Background(), call("code", `{"path":"print(1)"}`))
	e.Execute(context.Background(), call("code", `{"path":"print(1)"}`))
	if a.asked.Load() != 1 || a.last.Scope.Kind != tools.ScopeArgs || !a.last.Scope.AlwaysIsWide() {
		t.Fatalf("asked %d, scope %+v", a.asked.Load(), a.last.Scope)
	}
	e.Execute(context.Background(), call("code", `{"path":"print(2)"}`))
	if a.asked.Load() != 2 {
		t.Fatal("a grant for one piece of code covered another")
	}
	a.ans.Decision = tools.AllowAlways
	e.Execute(context.Background(), call("code", `{"path":"print(3)"}`))
	if !always.set["code"] {
		t.Fatalf("always kept %v, want the whole tool", always.set)
	}
}

// Nothing approves a refused call, and the refusal is audited; an edit
// that a tool would refuse is refused too.
func TestRefusalsAreFinalAndAudited(t *testing.T) {
	var ran []tools.Args
	tool := newDirTool(&ran)
	tool.refuse = func(a tools.Args) *tools.Refusal {
		if strings.HasPrefix(a.String("path"), "/secret/") {
			return &tools.Refusal{Message: "Access denied: " + a.String("path") + " holds keys.", By: tools.ByProtected, Rule: "holds keys"}
		}
		return nil
	}
	audit := &auditRec{}
	a := &answerer{ans: tools.Answer{Decision: tools.AllowOnce}}
	e := policyExec(t, tools.PolicyOptions{Asker: a, Audit: audit, Yes: true}, tool)
	r := e.Execute(context.Background(), call("read", `{"path":"/secret/id"}`))
	if r.Success || r.Status != tools.StatusDenied || r.Content != "Access denied: /secret/id holds keys." || len(ran) != 0 {
		t.Fatalf("got %+v", r)
	}
	if en := audit.Entries(); len(en) != 1 || en[0].Decision != tools.Denied || en[0].By != tools.ByProtected || en[0].Reason != "holds keys" {
		t.Fatalf("audited %+v", en)
	}

	edit := &answerer{ans: tools.Answer{Decision: tools.AllowOnce, Arguments: tools.Args{"path": "/secret/id"}}}
	audit = &auditRec{}
	e = policyExec(t, tools.PolicyOptions{Asker: edit, Audit: audit}, tool)
	r = e.Execute(context.Background(), call("read", `{"path":"/etc/hosts"}`))
	if r.Success || r.Status != tools.StatusDenied || len(ran) != 0 {
		t.Fatalf("an edit to a refused path ran: %+v", r)
	}
	if en := audit.Entries(); len(en) != 1 || en[0].Reason != "the edit: holds keys" {
		t.Fatalf("audited %+v", en)
	}
}

// The last approval of an edit is about the edited call: its reason and
// scope come from Recheck; a grant given then covers the edit's scope.
func TestEditedCallIsRecheckedAndGrantedByItsScope(t *testing.T) {
	var ran []tools.Args
	tool := newDirTool(&ran)
	var seen tools.ConfirmRequest
	a := &editing{to: tools.Args{"path": "/srv/data/x"}, decision: tools.AllowSession, seen: &seen}
	e := policyExec(t, tools.PolicyOptions{Asker: a}, tool)
	if r := e.Execute(context.Background(), call("read", `{"path":"/etc/hosts"}`)); !r.Success {
		t.Fatal(r.Content)
	}
	if got := seen.Recheck(tools.Args{"path": "/srv/data/x"}); got.Scope.Value != "/srv/data" || got.Refusal != nil {
		t.Fatalf("Recheck = %+v", got)
	}
	if _, ok := e.Approvals().Match("read", tools.Scope{Kind: tools.ScopeDir, Value: "/srv/data"}); !ok {
		t.Fatalf("the grant is not for the edited call's directory: %+v", e.Approvals().List())
	}
	if _, ok := e.Approvals().Match("read", tools.Scope{Kind: tools.ScopeDir, Value: "/etc"}); ok {
		t.Fatal("the grant covers the model's directory, which did not run")
	}
}

// editing edits every call to its arguments and answers decision.
type editing struct {
	to       tools.Args
	decision tools.Decision
	seen     *tools.ConfirmRequest
}

func (e *editing) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	a, err := e.Answer(ctx, req)
	return a.Decision, err
}

func (e *editing) Answer(_ context.Context, req tools.ConfirmRequest) (tools.Answer, error) {
	*e.seen = req
	return tools.Answer{Decision: e.decision, Arguments: e.to}, nil
}

// Calls made together are asked about in the order the model made them,
// each knowing its place ("1 of 2"), while a call that needs no asking
// runs at once.
func TestParallelCallsAreAskedInOrder(t *testing.T) {
	var ran []tools.Args
	var mu sync.Mutex
	var order []string
	var places [][2]int
	asker := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, req.Arguments.String("path"))
		places = append(places, [2]int{req.Position, req.Of})
		return tools.AllowOnce, nil
	})
	free := &fakeTool{spec: tools.Spec{Name: "free"}, run: func(context.Context, tools.Args) tools.Result { return tools.OK("free") }}
	write := writeTool(&ran)
	write.run = func(context.Context, tools.Args) tools.Result { return tools.OK("wrote") } // calls run at once: nothing shared
	e := policyExec(t, tools.PolicyOptions{Asker: asker}, write, free)
	for range 20 { // goroutine scheduling must not change the order
		order, places = nil, nil
		calls := []tools.Call{call("write", `{"path":"first"}`), call("free", ``), call("write", `{"path":"second"}`), call("write", `{"path":"third"}`)}
		res := e.ExecuteAll(context.Background(), calls)
		for i, r := range res {
			if !r.Success {
				t.Fatalf("call %d: %s", i, r.Content)
			}
		}
		if strings.Join(order, ",") != "first,second,third" || places[0] != [2]int{1, 3} || places[2] != [2]int{3, 3} {
			t.Fatalf("asked in order %v at %v", order, places)
		}
	}
}

// A tool whose confirmation the configuration waived runs unasked and is
// audited as allowed by config, naming the setting.
func TestWaivedConfirmationIsAudited(t *testing.T) {
	audit := &auditRec{}
	tool := &fakeTool{spec: tools.Spec{Name: "grep_notes", WaivedBy: "[[commands]] grep_notes: confirm = false"},
		run: func(context.Context, tools.Args) tools.Result { return tools.OK("found") }}
	e := policyExec(t, tools.PolicyOptions{Audit: audit}, tool)
	if r := e.Execute(context.Background(), call("grep_notes", ``)); !r.Success {
		t.Fatal(r.Content)
	}
	if en := audit.Entries(); len(en) != 1 || en[0].By != tools.ByConfig || en[0].Reason != "[[commands]] grep_notes: confirm = false" {
		t.Fatalf("audited %+v", en)
	}
}
