//go:build unix

package code_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/code"
)

// registry builds the three tools the way tools/builtin does.
func registry(t *testing.T) *tools.Registry {
	t.Helper()
	cfg := code.Config{Timeout: 10}
	r := tools.NewRegistry()
	for name, f := range map[string]tools.Factory{
		"code_interpreter":        code.InterpreterFactory(cfg),
		"repl":                    code.REPLFactory(cfg),
		"code_interpreter_docker": code.DockerFactory(cfg),
	} {
		if err := r.Register(name, f); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func executor(t *testing.T, deps tools.Deps, c tools.Confirmer, bus events.Publisher) *tools.Executor {
	t.Helper()
	list, err := registry(t).BuildAll(deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tool := range list {
			closeTool(tool)
		}
	})
	ex, err := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: c, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// closeTool closes a tool that holds a process, looking under the settings
// wrapper as a session does.
func closeTool(t tools.Tool) {
	for {
		if c, ok := t.(interface{ Close() error }); ok {
			_ = c.Close()
			return
		}
		u, ok := t.(interface{ Unwrap() tools.Tool })
		if !ok {
			return
		}
		t = u.Unwrap()
	}
}

var names = []string{"code_interpreter", "repl", "code_interpreter_docker"}

func TestEveryCodeToolRequiresConfirmation(t *testing.T) {
	list, err := registry(t).BuildAll(tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list {
		if s := tool.Spec(); !s.RequiresConfirmation || s.Category != "code" {
			t.Fatalf("%s: requires_confirmation=%v category=%q", s.Name, s.RequiresConfirmation, s.Category)
		}
		closeTool(tool)
	}
}

// With no way to ask anyone, nothing runs: not even a start event.
func TestCodeToolsRefuseToRunWithoutAConfirmer(t *testing.T) {
	rec := &events.Recorder{}
	ex := executor(t, tools.Deps{}, nil, rec)
	for _, name := range names {
		r := ex.Execute(context.Background(), tools.Call{ID: "1", Name: name, Arguments: `{"code": "print('ran')"}`})
		if r.Success || r.Status != tools.StatusDenied {
			t.Fatalf("%s ran without confirmation: %+v", name, r)
		}
		want := "Tool '" + name + "' requires confirmation but no confirmation callback is available."
		if r.Content != want {
			t.Fatalf("%s: %q", name, r.Content)
		}
	}
	for _, typ := range rec.Types() {
		if typ == events.ToolCallStart {
			t.Fatal("a code tool started without confirmation")
		}
	}
}

func TestCodeToolsDeniedByThePerson(t *testing.T) {
	ex := executor(t, tools.Deps{}, tools.DenyAll, nil)
	for _, name := range names {
		r := ex.Execute(context.Background(), tools.Call{ID: "1", Name: name, Arguments: `{"code": "print('ran')"}`})
		if r.Status != tools.StatusDenied || !strings.Contains(r.Content, "denied by user") {
			t.Fatalf("%s: %+v", name, r)
		}
	}
}

// The person can turn confirmation off for one tool in the config file;
// the others still ask.
func TestConfirmationOverriddenPerTool(t *testing.T) {
	off := false
	deps := tools.Deps{Settings: map[string]tools.Settings{"code_interpreter": {RequiresConfirmation: &off}}}
	ex := executor(t, deps, nil, nil)
	if s, _ := ex.Spec("code_interpreter"); s.RequiresConfirmation {
		t.Fatal("the override was not applied")
	}
	if s, _ := ex.Spec("repl"); !s.RequiresConfirmation {
		t.Fatal("the override leaked to another tool")
	}
	r := ex.Execute(context.Background(), tools.Call{ID: "1", Name: "repl", Arguments: `{"code": "1"}`})
	if r.Status != tools.StatusDenied {
		t.Fatalf("repl ran without confirmation: %+v", r)
	}
}

func TestCodeToolsRunWhenAllowed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Python")
	}
	ex := executor(t, tools.Deps{}, tools.AllowAll, nil)
	for _, name := range []string{"code_interpreter", "repl"} {
		r := ex.Execute(context.Background(), tools.Call{ID: "1", Name: name, Arguments: `{"code": "print('ran')"}`})
		if strings.Contains(r.Content, "was not found on PATH") {
			t.Skip("python3 is not on PATH")
		}
		if !r.Success || r.Content != "--- stdout ---\nran" {
			t.Fatalf("%s: %+v", name, r)
		}
	}
}
