// Package scheduler holds the tools through which a model manages
// scheduled tasks: schedule_task, list_scheduled_tasks and
// pause/resume/cancel_scheduled_task.
//
// The tools talk to a Service, which ui/cli injects (the running
// TaskScheduler of agent/scheduler implements it). Without one every call
// fails with "Scheduler not available." instead of pretending.
//
// A task a model creates never gets tools approved for unattended use:
// approving a tool that needs confirmation is for a person to do, from the
// CLI or the TUI. schedule_task itself needs confirmation, so the person
// sees every task a model wants to create; and the tasks are the person's:
// pausing, resuming or cancelling one asks too, showing the task (its
// prompt, tools and approve list), and takes its full id or at least
// MinIDPrefix characters of it, so a short prefix cannot reach another
// task than the one the model looked at.
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Service is what the tools need from a scheduler.
type Service interface {
	Create(ctx context.Context, nt tasks.NewTask) (tasks.Task, error)
	List(ctx context.Context, status tasks.Status) ([]tasks.Task, error)
	Pause(ctx context.Context, id string) (tasks.Task, error)
	Resume(ctx context.Context, id string) (tasks.Task, error)
	Cancel(ctx context.Context, id string) (tasks.Task, error)
}

// Messages the tools answer with, as the reference's tools do.
const (
	msgUnavailable = "Scheduler not available."
	msgMissingID   = "Missing required parameter: task_id."
)

// Category is the tools' category.
const Category = "scheduler"

// Names of the tools, in the order they are registered.
var Names = []string{"schedule_task", "list_scheduled_tasks", "pause_scheduled_task", "resume_scheduled_task", "cancel_scheduled_task"}

// Register adds the five tools to r, bound to svc (which may be nil).
func Register(r *tools.Registry, svc Service) error {
	for _, t := range All(svc) {
		if err := r.Register(t.Spec().Name, func(tools.Deps) (tools.Tool, error) { return t, nil }); err != nil {
			return err
		}
	}
	return nil
}

// All returns the five tools bound to svc.
func All(svc Service) []tools.Tool {
	return []tools.Tool{
		scheduleTask{svc},
		listTasks{svc},
		changeTask{svc, "pause_scheduled_task", "Pause a scheduled task: it stops running until resumed. A run of it in progress is stopped, in whichever jarvis process runs it. The user is asked first.", "paused", "pauses", Service.Pause},
		changeTask{svc, "resume_scheduled_task", "Resume a paused scheduled task. Its next run is computed from now; runs missed while paused are not made up. The user is asked first.", "resumed", "resumes", Service.Resume},
		changeTask{svc, "cancel_scheduled_task", "Cancel a scheduled task for good: it never runs again. A run of it in progress is stopped, in whichever jarvis process runs it. The user is asked first.", "cancelled", "cancels for good", Service.Cancel},
	}
}

type scheduleTask struct{ svc Service }

var scheduleSpec = tools.Spec{
	Name: "schedule_task",
	Description: "Schedule a prompt to run later, unattended, with an agent and tools. " +
		"schedule_type cron: schedule_value is a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1-5\" for 09:00 on weekdays) or @daily/@hourly/@weekly/@monthly; " +
		"interval: seconds between runs (\"3600\") or a duration (\"90m\"), first run one interval from now; " +
		"once: a time from now (\"+2h\", \"+1d\") or an ISO 8601 date and time (\"2030-06-01T09:00:00+02:00\"; without an offset it is read in the task's time zone). " +
		"Times are evaluated in timezone (an IANA name, default the local zone). " +
		"The task runs on this jarvis's model server, each run stopped after timeout. " +
		"Tools that need confirmation are denied in scheduled runs unless a person approves them for the task.",
	Parameters: tools.Params(
		tools.StringParam("prompt", "What the task should do each time it runs", true),
		tools.EnumParam("schedule_type", "How the run times are given", true, "cron", "interval", "once"),
		tools.Param{Name: "schedule_value", Required: true, Schema: &jsonschema.Schema{
			Types: []string{"string", "integer"}, Description: "The cron expression, the interval in seconds, or the ISO 8601 time"}},
		tools.StringParam("agent", "Agent that runs the task (default simple without tools, orchestrator with tools; simple never calls tools)", false),
		tools.Param{Name: "tools", Schema: &jsonschema.Schema{
			Types: []string{"string", "array"}, Description: "Tools the agent may use, comma-separated (e.g. \"calculator,web_search\")"}},
		tools.StringParam("timezone", "IANA time zone the schedule is read in (e.g. Europe/Paris); default the local zone", false),
		tools.StringParam("timeout", "Time limit of each run as a duration (\"5m\", \"1h\"); default 10m", false),
	),
	Category:             Category,
	LatencyEstimate:      0.01,
	RequiresConfirmation: true,
}

func (scheduleTask) Spec() tools.Spec { return scheduleSpec }

// GrantScope is the exact task: what it will run later is the danger.
func (scheduleTask) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact task")
}

func (t scheduleTask) Execute(ctx context.Context, args tools.Args) tools.Result {
	if t.svc == nil {
		return tools.Fail(msgUnavailable)
	}
	value, err := stringOrNumber(args, "schedule_value")
	if err != nil {
		return tools.Fail("%v", err)
	}
	names, err := toolList(args["tools"])
	if err != nil {
		return tools.Fail("%v", err)
	}
	var timeout time.Duration
	if v := strings.TrimSpace(args.String("timeout")); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil {
			return tools.Fail("Parameter 'timeout' must be a duration such as \"5m\" or \"1h\", got %q.", v)
		}
	}
	task, err := t.svc.Create(ctx, tasks.NewTask{
		Prompt:        args.String("prompt"),
		ScheduleType:  tasks.ScheduleType(strings.ToLower(strings.TrimSpace(args.String("schedule_type")))),
		ScheduleValue: value,
		TimeZone:      args.String("timezone"),
		Agent:         args.String("agent"),
		Tools:         names,
		Timeout:       timeout,
		Metadata:      map[string]string{"created_by": "schedule_task"},
	})
	if err != nil {
		return tools.Fail("Could not schedule the task: %v", err)
	}
	// The reference's format, as Python's json.dumps writes it.
	content := fmt.Sprintf(`{"task_id": %s, "next_run": %s, "status": %s}`,
		quote(task.ID), quote(task.NextRun.Format(time.RFC3339)), quote(string(task.Status)))
	return tools.OK(content).WithMeta("task_id", task.ID)
}

type listTasks struct{ svc Service }

var listSpec = tools.Spec{
	Name: "list_scheduled_tasks",
	Description: "List scheduled tasks as a JSON array: id, prompt, schedule, status, next and last run (in the task's time zone), " +
		"the last run's outcome, agent and tools.",
	Parameters: tools.Params(
		tools.EnumParam("status", "Only tasks with this status", false, "active", "paused", "completed", "cancelled"),
	),
	Category:        Category,
	LatencyEstimate: 0.01,
}

func (listTasks) Spec() tools.Spec { return listSpec }

func (t listTasks) Execute(ctx context.Context, args tools.Args) tools.Result {
	if t.svc == nil {
		return tools.Fail(msgUnavailable)
	}
	status, err := tasks.ParseStatus(args.String("status"))
	if err != nil {
		return tools.Fail("%v", err)
	}
	list, err := t.svc.List(ctx, status)
	if err != nil {
		return tools.Fail("Could not list the scheduled tasks: %v", err)
	}
	if list == nil {
		list = []tasks.Task{}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return tools.Fail("Could not encode the task list: %v", err)
	}
	return tools.OK(string(b)).WithMeta("count", len(list))
}

// changeTask is pause, resume or cancel. Each changes what the person
// set to run, so each asks, names the task in the question (its prompt,
// schedule, tools and approve list) and takes only the full id or an
// unambiguous prefix of at least MinIDPrefix characters. A grant covers
// that task.
type changeTask struct {
	svc         Service
	name        string
	description string
	done        string
	// verb completes "it ... task ID" in the question.
	verb  string
	apply func(Service, context.Context, string) (tasks.Task, error)
}

// MinIDPrefix is the shortest id prefix the task tools accept: a short
// prefix can name another task than the one the model looked at (ids are
// 16 characters).
const MinIDPrefix = 8

func (t changeTask) Spec() tools.Spec {
	return tools.Spec{
		Name:        t.name,
		Description: t.description,
		Parameters: tools.Params(tools.StringParam("task_id",
			fmt.Sprintf("The task's full id (at least its first %d characters), as list_scheduled_tasks shows it", MinIDPrefix), true)),
		Category:             Category,
		LatencyEstimate:      0.01,
		RequiresConfirmation: true,
	}
}

// find returns the tasks whose id starts with the call's task_id.
func (t changeTask) find(args tools.Args) (id string, found []tasks.Task, err error) {
	id = strings.ToLower(strings.TrimSpace(args.String("task_id")))
	if t.svc == nil || len(id) < MinIDPrefix {
		return id, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := t.svc.List(ctx, "")
	if err != nil {
		return id, nil, err
	}
	for _, task := range list {
		if strings.HasPrefix(task.ID, id) {
			found = append(found, task)
		}
	}
	return id, found, nil
}

// Refuse refuses a prefix shorter than MinIDPrefix before anyone is
// asked: it could reach another task than the one the model looked at.
func (t changeTask) Refuse(args tools.Args) *tools.Refusal {
	id := strings.TrimSpace(args.String("task_id"))
	if id == "" || len(id) >= MinIDPrefix {
		return nil
	}
	return &tools.Refusal{By: "task id rule", Rule: fmt.Sprintf("task_id %q is shorter than %d characters", id, MinIDPrefix),
		Message: fmt.Sprintf("task_id %q is too short: give the task's full id (or at least its first %d characters), as list_scheduled_tasks shows it. A short prefix could reach another task.", id, MinIDPrefix)}
}

// ConfirmationFor says which task the call would change, with what it
// does, so the person approves a task rather than an id.
func (t changeTask) ConfirmationFor(args tools.Args) (bool, string) {
	id, found, err := t.find(args)
	switch {
	case len(id) < MinIDPrefix:
		return true, ""
	case err != nil:
		return true, t.verb + " task " + id + " (the task could not be read: " + err.Error() + ")"
	}
	switch len(found) {
	case 0:
		return true, "names no task (" + id + "); nothing would change"
	case 1:
		return true, t.verb + " task " + describeTask(found[0])
	}
	return true, fmt.Sprintf("names %d tasks (%s); it will be refused as ambiguous", len(found), id)
}

// GrantScope is the task: a grant covers changes to it.
func (t changeTask) GrantScope(args tools.Args) tools.Scope {
	id, found, _ := t.find(args)
	if len(found) == 1 {
		id = found[0].ID
	}
	return tools.Scope{Kind: tools.ScopeTask, Value: id, Words: "changes to task " + id}
}

// describeTask is a task as a question shows it: id, schedule, prompt,
// tools and approve list.
func describeTask(task tasks.Task) string {
	text := fmt.Sprintf("%s, which runs %s: %s", task.ID, task.Describe(), quote(oneLine(task.Prompt, 200)))
	if len(task.Tools) > 0 {
		text += "; tools: " + strings.Join(task.Tools, ", ")
	}
	if len(task.ApprovedTools) > 0 {
		text += "; runs unasked: " + strings.Join(task.ApprovedTools, ", ")
	}
	return text
}

func (t changeTask) Execute(ctx context.Context, args tools.Args) tools.Result {
	if t.svc == nil {
		return tools.Fail(msgUnavailable)
	}
	id := strings.TrimSpace(args.String("task_id"))
	if id == "" {
		return tools.Fail(msgMissingID)
	}
	if ref := t.Refuse(args); ref != nil {
		return tools.Fail("%s", ref.Message)
	}
	task, err := t.apply(t.svc, ctx, id)
	if err != nil {
		var nf *tasks.NotFoundError
		if errors.As(err, &nf) {
			return tools.Fail("Task not found: %s", id)
		}
		return tools.Fail("%s", capitalize(err.Error())+".")
	}
	return tools.OK(fmt.Sprintf("Task %s %s.", task.ID, t.done)).WithMeta("task_id", task.ID)
}

// oneLine flattens s and cuts it to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// stringOrNumber reads a value a model may send as "3600" or 3600.
func stringOrNumber(args tools.Args, key string) (string, error) {
	switch v := args[key].(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	case float64:
		if v != float64(int64(v)) {
			return "", fmt.Errorf("parameter '%s' must be a whole number of seconds, got %v", key, v)
		}
		return fmt.Sprint(int64(v)), nil
	}
	return "", fmt.Errorf("parameter '%s' must be a string or a number", key)
}

// toolList reads tools given as "a,b" or ["a","b"].
func toolList(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return tools.ParseList(x), nil
	case []any:
		var names []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("parameter 'tools' must list tool names as strings")
			}
			names = append(names, s)
		}
		return tools.ParseList(strings.Join(names, ",")), nil
	}
	return nil, fmt.Errorf("parameter 'tools' must be a comma-separated string of tool names")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
