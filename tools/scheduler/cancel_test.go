package scheduler_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
	schedtools "github.com/jarvis-workbench/jarvis/tools/scheduler"
)

// Cancelling cannot be undone: the tool asks, the question names the task
// and its prompt, and a short prefix is refused.
func TestCancelAsksWithThePromptAndRefusesShortPrefixes(t *testing.T) {
	svc := newService(t)
	task, err := svc.Create(context.Background(), tasks.NewTask{Prompt: "Water the\nplants", ScheduleType: tasks.Interval, ScheduleValue: "3600"})
	if err != nil {
		t.Fatal(err)
	}
	var asked []tools.ConfirmRequest
	asker := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		asked = append(asked, req)
		return tools.AllowOnce, nil
	})
	r := tools.NewRegistry()
	if err := schedtools.Register(r, svc); err != nil {
		t.Fatal(err)
	}
	list, _ := r.BuildAll(tools.Deps{})
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: asker})
	if err != nil {
		t.Fatal(err)
	}
	if spec, _ := exec.Spec("cancel_scheduled_task"); !spec.RequiresConfirmation {
		t.Fatal("cancel_scheduled_task does not require confirmation")
	}
	cancelCall := func(id string) tools.Result {
		b, _ := json.Marshal(map[string]any{"task_id": id})
		return exec.Execute(context.Background(), tools.Call{ID: "1", Name: "cancel_scheduled_task", Arguments: string(b)})
	}
	res := cancelCall(task.ID[:4])
	if res.Success || !strings.Contains(res.Content, "too short") {
		t.Fatalf("a 4-character prefix: %+v", res)
	}
	if got, _ := svc.List(context.Background(), tasks.Active); len(got) != 1 {
		t.Fatal("a short prefix cancelled the task")
	}
	res = cancelCall(task.ID[:8])
	if !res.Success {
		t.Fatalf("an 8-character prefix: %+v", res)
	}
	last := asked[len(asked)-1]
	if !strings.Contains(last.Reason, task.ID) || !strings.Contains(last.Reason, `"Water the plants"`) {
		t.Fatalf("the question does not show the task: %q", last.Reason)
	}
}

// The tasks are the person's: the model pausing or resuming one asks
// (the question shows the task's prompt, tools and approve list), is
// audited, takes at least 8 characters of the id, and a grant covers that
// task only.
func TestPauseAndResumeAskAndAreAudited(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	task, err := svc.Create(ctx, tasks.NewTask{Prompt: "Run the backup", ScheduleType: tasks.Interval, ScheduleValue: "3600",
		Agent: "orchestrator", Tools: []string{"code_interpreter"}, ApprovedTools: []string{"code_interpreter"}})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := svc.Create(ctx, tasks.NewTask{Prompt: "Other", ScheduleType: tasks.Interval, ScheduleValue: "3600"})
	var asked []tools.ConfirmRequest
	audit := &tools.MemoryAudit{}
	pol := tools.NewPolicy(tools.PolicyOptions{Audit: audit, Asker: tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		asked = append(asked, req)
		return tools.AllowSession, nil
	})})
	r := tools.NewRegistry()
	if err := schedtools.Register(r, svc); err != nil {
		t.Fatal(err)
	}
	list, _ := r.BuildAll(tools.Deps{})
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	do := func(name, id string) tools.Result {
		b, _ := json.Marshal(map[string]any{"task_id": id})
		return exec.Execute(ctx, tools.Call{ID: "1", Name: name, Arguments: string(b)})
	}
	if res := do("resume_scheduled_task", task.ID[:4]); res.Success || !strings.Contains(res.Content, "too short") || len(asked) != 0 {
		t.Fatalf("a 4-character prefix: %+v (asked %d)", res, len(asked))
	}
	if res := do("pause_scheduled_task", task.ID[:8]); !res.Success {
		t.Fatalf("pause: %+v", res)
	}
	q := asked[len(asked)-1].Reason
	for _, want := range []string{"pauses task " + task.ID, `"Run the backup"`, "tools: code_interpreter", "runs unasked: code_interpreter"} {
		if !strings.Contains(q, want) {
			t.Errorf("the question lacks %q: %q", want, q)
		}
	}
	n := len(asked)
	if res := do("pause_scheduled_task", task.ID); !res.Success || len(asked) != n {
		t.Fatalf("the session grant for the task did not hold: %+v, asked %d", res, len(asked)-n)
	}
	if do("pause_scheduled_task", other.ID); len(asked) != n+1 {
		t.Fatal("a grant for one task covered another")
	}
	if res := do("resume_scheduled_task", task.ID); !res.Success || len(asked) != n+2 {
		t.Fatalf("resume did not ask: %+v", res)
	}
	entries := audit.Entries()
	if len(entries) < 4 || entries[0].Tool != "resume_scheduled_task" && entries[0].Tool != "pause_scheduled_task" {
		t.Fatalf("audited %+v", entries)
	}
	for _, e := range entries {
		if e.Decision != tools.Allowed && e.Decision != tools.Denied {
			t.Errorf("entry %+v", e)
		}
	}
}
