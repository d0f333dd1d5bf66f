package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	agentsched "github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
	schedtools "github.com/jarvis-workbench/jarvis/tools/scheduler"
)

// The running scheduler is what ui/cli injects.
var _ schedtools.Service = (*agentsched.Scheduler)(nil)

func newService(t *testing.T) *agentsched.Scheduler {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return agentsched.New(db, agentsched.Options{Validate: func(agent string, names []string) error {
		if agent != "simple" && agent != "orchestrator" {
			return fmt.Errorf("unknown agent %q (known: orchestrator, react, simple)", agent)
		}
		for _, n := range names {
			if n != "calculator" && n != "code_interpreter" {
				return fmt.Errorf("unknown tool %q", n)
			}
		}
		return nil
	}})
}

// executor runs the tools the way an agent does, approving confirmations.
func executor(t *testing.T, svc schedtools.Service) *tools.Executor {
	t.Helper()
	r := tools.NewRegistry()
	if err := schedtools.Register(r, svc); err != nil {
		t.Fatal(err)
	}
	list, err := r.BuildAll(tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: tools.AllowAll})
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

func call(exec *tools.Executor, name string, args any) tools.Result {
	b, _ := json.Marshal(args)
	return exec.Execute(context.Background(), tools.Call{ID: "1", Name: name, Arguments: string(b)})
}

func TestSpecs(t *testing.T) {
	r := tools.NewRegistry()
	if err := schedtools.Register(r, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "cancel_scheduled_task,list_scheduled_tasks,pause_scheduled_task,resume_scheduled_task,schedule_task" {
		t.Errorf("registered %s", got)
	}
	for _, tool := range schedtools.All(nil) {
		s := tool.Spec()
		if s.Category != "scheduler" {
			t.Errorf("%s category %q", s.Name, s.Category)
		}
		// The tasks are the person's: everything but listing them asks.
		if s.RequiresConfirmation != (s.Name != "list_scheduled_tasks") {
			t.Errorf("%s requires confirmation: %v", s.Name, s.RequiresConfirmation)
		}
	}
}

func TestScheduleTaskFormat(t *testing.T) {
	svc := newService(t)
	exec := executor(t, svc)
	r := call(exec, "schedule_task", map[string]any{
		"prompt": "summarise my inbox", "schedule_type": "cron", "schedule_value": "0 9 * * 1-5",
		"timezone": "Europe/Paris", "tools": "calculator",
	})
	if !r.Success {
		t.Fatalf("schedule_task failed: %s", r.Content)
	}
	re := regexp.MustCompile(`^\{"task_id": "([0-9a-f]{16})", "next_run": "(\d{4}-\d\d-\d\dT09:00:00\+0[12]:00)", "status": "active"\}$`)
	m := re.FindStringSubmatch(r.Content)
	if m == nil {
		t.Fatalf("result %q is not in the reference format", r.Content)
	}
	task, err := svc.Get(context.Background(), m[1])
	if err != nil {
		t.Fatal(err)
	}
	// With tools and no agent, the task gets the agent that calls tools.
	if task.NextRun.Format(time.RFC3339) != m[2] || task.Agent != "orchestrator" || strings.Join(task.Tools, ",") != "calculator" {
		t.Errorf("stored task %+v", task)
	}
	if len(task.ApprovedTools) != 0 || task.Metadata["created_by"] != "schedule_task" {
		t.Errorf("a model-created task must have no approved tools: %+v", task)
	}

	// Numbers and arrays, as models send them.
	r = call(exec, "schedule_task", map[string]any{"prompt": "p", "schedule_type": "interval", "schedule_value": 3600,
		"tools": []string{"calculator", "code_interpreter"}})
	if !r.Success || !strings.Contains(r.Content, `"status": "active"`) {
		t.Errorf("interval given as a number: %s", r.Content)
	}

	// A time limit, and a one-time run given from now.
	r = call(exec, "schedule_task", map[string]any{"prompt": "p", "schedule_type": "once", "schedule_value": "+2h", "timeout": "5m"})
	if !r.Success {
		t.Fatalf("once +2h with a timeout: %s", r.Content)
	}
	task, _ = svc.Get(context.Background(), r.Metadata["task_id"].(string))
	if task.Timeout != 5*time.Minute || time.Until(task.NextRun) < 119*time.Minute {
		t.Errorf("stored %+v", task)
	}
}

func TestScheduleTaskNeedsConfirmation(t *testing.T) {
	svc := newService(t)
	r := tools.NewRegistry()
	schedtools.Register(r, svc)
	list, _ := r.BuildAll(tools.Deps{})
	exec, _ := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: tools.DenyAll})
	res := call(exec, "schedule_task", map[string]any{"prompt": "p", "schedule_type": "interval", "schedule_value": "60"})
	if res.Success || res.Status != tools.StatusDenied {
		t.Errorf("schedule_task ran without confirmation: %+v", res)
	}
	if all, _ := svc.List(context.Background(), ""); len(all) != 0 {
		t.Error("a denied schedule_task created a task")
	}
}

func TestInvalidSchedulesCreateNothing(t *testing.T) {
	svc := newService(t)
	exec := executor(t, svc)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"schedule_type": "cron", "schedule_value": "0 25 * * *"}, "the hour field \"25\" is wrong"},
		{map[string]any{"schedule_type": "cron", "schedule_value": "0 9 * *"}, "expected 5 fields"},
		{map[string]any{"schedule_type": "interval", "schedule_value": "-60"}, "at least 1 second"},
		{map[string]any{"schedule_type": "interval", "schedule_value": -60}, "at least 1 second"},
		{map[string]any{"schedule_type": "once", "schedule_value": "2020-01-01T09:00:00Z"}, "already passed"},
		{map[string]any{"schedule_type": "interval", "schedule_value": "60", "agent": "wizard"}, "unknown agent \"wizard\""},
		{map[string]any{"schedule_type": "interval", "schedule_value": "60", "tools": "calculator,rm"}, "unknown tool \"rm\""},
		{map[string]any{"schedule_type": "interval", "schedule_value": "60", "timezone": "Moon/Base"}, "unknown time zone"},
		{map[string]any{"schedule_type": "weekly", "schedule_value": "60"}, "must be one of"},
		{map[string]any{"schedule_type": "interval", "schedule_value": "60", "timeout": "soon"}, "Parameter 'timeout' must be a duration"},
		{map[string]any{"schedule_type": "interval", "schedule_value": "60", "timeout": "1ms"}, "at least 1s"},
	}
	for _, c := range cases {
		c.args["prompt"] = "p"
		r := call(exec, "schedule_task", c.args)
		if r.Success || !strings.Contains(r.Content, c.want) {
			t.Errorf("%v: %q, want a failure mentioning %q", c.args, r.Content, c.want)
		}
	}
	if all, _ := svc.List(context.Background(), ""); len(all) != 0 {
		t.Errorf("%d tasks created by invalid requests", len(all))
	}
}

func TestListAndChanges(t *testing.T) {
	svc := newService(t)
	exec := executor(t, svc)
	r := call(exec, "list_scheduled_tasks", map[string]any{})
	if !r.Success || r.Content != "[]" {
		t.Errorf("empty list: %q", r.Content)
	}
	created := call(exec, "schedule_task", map[string]any{"prompt": "water the plants", "schedule_type": "interval", "schedule_value": "1h"})
	var out struct {
		TaskID string `json:"task_id"`
	}
	if err := json.Unmarshal([]byte(created.Content), &out); err != nil {
		t.Fatal(err)
	}
	id := out.TaskID

	r = call(exec, "list_scheduled_tasks", map[string]any{"status": "active"})
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.Content), &list); err != nil || len(list) != 1 {
		t.Fatalf("list: %q %v", r.Content, err)
	}
	for _, key := range []string{"id", "prompt", "schedule_type", "schedule_value", "status", "next_run", "agent", "tools", "timezone", "created_at"} {
		if _, ok := list[0][key]; !ok {
			t.Errorf("listed task has no %q: %v", key, list[0])
		}
	}
	if list[0]["id"] != id || list[0]["schedule_value"] != "3600" {
		t.Errorf("listed %v", list[0])
	}

	steps := []struct{ tool, want string }{
		{"pause_scheduled_task", "Task " + id + " paused."},
		{"resume_scheduled_task", "Task " + id + " resumed."},
		{"cancel_scheduled_task", "Task " + id + " cancelled."},
	}
	for _, s := range steps {
		if r := call(exec, s.tool, map[string]any{"task_id": id}); !r.Success || r.Content != s.want {
			t.Errorf("%s: %q, want %q", s.tool, r.Content, s.want)
		}
	}
	if r := call(exec, "list_scheduled_tasks", map[string]any{"status": "active"}); r.Content != "[]" {
		t.Errorf("active after cancel: %s", r.Content)
	}
	if r := call(exec, "resume_scheduled_task", map[string]any{"task_id": id}); r.Success || !strings.Contains(r.Content, "cancelled") {
		t.Errorf("resume a cancelled task: %q", r.Content)
	}
}

func TestErrorMessages(t *testing.T) {
	svc := newService(t)
	for _, tool := range schedtools.All(svc) {
		name := tool.Spec().Name
		if name == "schedule_task" || name == "list_scheduled_tasks" {
			continue
		}
		if r := tool.Execute(context.Background(), tools.Args{}); r.Success || r.Content != "Missing required parameter: task_id." {
			t.Errorf("%s without task_id: %q", name, r.Content)
		}
		if r := tool.Execute(context.Background(), tools.Args{"task_id": " "}); r.Content != "Missing required parameter: task_id." {
			t.Errorf("%s with a blank task_id: %q", name, r.Content)
		}
		if r := tool.Execute(context.Background(), tools.Args{"task_id": "0123456789abcdef"}); r.Success || r.Content != "Task not found: 0123456789abcdef" {
			t.Errorf("%s unknown id: %q", name, r.Content)
		}
	}
	for _, tool := range schedtools.All(nil) {
		r := tool.Execute(context.Background(), tools.Args{"task_id": "x", "prompt": "p", "schedule_type": "once", "schedule_value": "x"})
		if r.Success || r.Content != "Scheduler not available." {
			t.Errorf("%s without a scheduler: %q", tool.Spec().Name, r.Content)
		}
	}
	// The status filter is checked.
	list := schedtools.All(svc)[1]
	if r := list.Execute(context.Background(), tools.Args{"status": "sleeping"}); r.Success || !strings.Contains(r.Content, "unknown task status") {
		t.Errorf("bad status: %q", r.Content)
	}
}
