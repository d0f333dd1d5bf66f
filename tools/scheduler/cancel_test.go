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
