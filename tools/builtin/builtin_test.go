package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// specTools are the built-in tools: the 23 of the published tool spec and
// the 8 that change things (files, commands, commits).
var specTools = []string{
	"apply_patch", "calculator", "cancel_scheduled_task", "channel_list", "channel_send", "channel_status",
	"code_interpreter", "code_interpreter_docker", "file_edit", "file_read", "file_write",
	"git_commit", "git_diff", "git_log", "git_status", "http_request", "list_scheduled_tasks",
	"llm", "mcp_adapter", "memory_index", "memory_retrieve", "memory_search", "memory_store",
	"pause_scheduled_task", "repl", "resume_scheduled_task", "retrieval", "schedule_task", "shell_exec", "think", "web_search",
}

// mustConfirm are the tools that run code, send data out, act later or
// change files.
var mustConfirm = []string{
	"apply_patch", "cancel_scheduled_task", "channel_send", "code_interpreter", "code_interpreter_docker", "file_edit", "file_write",
	"git_commit", "http_request", "mcp_adapter", "pause_scheduled_task", "repl", "resume_scheduled_task", "schedule_task",
	"shell_exec", "web_search",
}

func TestRegistryHoldsEverySpecToolWithItsConfirmationRule(t *testing.T) {
	r := Registry(Deps{})
	if got := r.Names(); !slices.Equal(got, specTools) {
		t.Fatalf("registry = %v\nwant %v", got, specTools)
	}
	list, err := r.BuildAll(tools.Deps{})
	if err != nil {
		t.Fatalf("every tool must build without its dependencies: %v", err)
	}
	for _, tl := range list {
		s := tl.Spec()
		if s.Description == "" || s.Category == "" || s.Parameters == nil {
			t.Errorf("%s: incomplete spec %+v", s.Name, s)
		}
		if want := slices.Contains(mustConfirm, s.Name); s.RequiresConfirmation != want {
			t.Errorf("%s: requires_confirmation = %v, want %v", s.Name, s.RequiresConfirmation, want)
		}
		if closer, ok := tl.(interface{ Close() error }); ok {
			closer.Close()
		}
	}
	// Without their dependencies, tools fail with a message, never a panic.
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: tools.AllowAll})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llm", "retrieval", "schedule_task", "mcp_adapter"} {
		args := map[string]string{
			"llm": `{"prompt":"hi"}`, "retrieval": `{"query":"x"}`, "mcp_adapter": `{"server":"x"}`,
			"schedule_task": `{"prompt":"p","schedule_type":"interval","schedule_value":"60"}`,
		}[name]
		r := exec.Execute(context.Background(), tools.Call{Name: name, Arguments: args})
		if r.Success || r.Content == "" {
			t.Errorf("%s without its dependency: %+v", name, r)
		}
	}
}
