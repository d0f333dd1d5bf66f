package builtin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// isolateRegistrations gives a test an empty registration list and puts
// the old one back after it, so the other tests see the built-ins alone.
func isolateRegistrations(t *testing.T) {
	registered.Lock()
	names, factories := registered.names, registered.factories
	registered.names, registered.factories = nil, nil
	registered.Unlock()
	t.Cleanup(func() {
		registered.Lock()
		registered.names, registered.factories = names, factories
		registered.Unlock()
	})
}

type echo struct{ name string }

func (e echo) Spec() tools.Spec {
	return tools.Spec{Name: e.name, Description: "Echoes.", Category: "custom",
		Parameters: tools.Params(tools.StringParam("input", "what to echo", true))}
}

func (e echo) Execute(_ context.Context, a tools.Args) tools.Result {
	return tools.OK("Processed: " + a.String("input"))
}

func echoFactory(name string) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return echo{name}, nil }
}

func TestRegisteredToolsJoinEveryRegistry(t *testing.T) {
	isolateRegistrations(t)
	if err := Register("my_tool", echoFactory("my_tool")); err != nil {
		t.Fatal(err)
	}
	r := Registry(Deps{})
	if !r.Has("my_tool") || !slices.Contains(Names(), "my_tool") || !slices.Equal(Registered(), []string{"my_tool"}) {
		t.Fatalf("registry %v, names %v", r.Names(), Names())
	}
	tl, err := r.Build("my_tool", tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.Execute(context.Background(), tools.Args{"input": "x"}); got.Content != "Processed: x" {
		t.Fatalf("%+v", got)
	}
}

func TestRegisterRefusesClashesAndBadNames(t *testing.T) {
	isolateRegistrations(t)
	if err := Register("my_tool", echoFactory("my_tool")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"calculator":    "built-in",
		"my_tool":       "already registered",
		"files__read":   "MCP",
		"my tool":       "cannot name a tool",
		"":              "needs a name",
		"mcp_adapter":   "built-in",
		"schedule_task": "built-in",
	} {
		if err := Register(name, echoFactory(name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Register(%q) = %v, want an error with %q", name, err, want)
		}
	}
	if err := Register("nil_factory", nil); err == nil {
		t.Error("a nil factory was accepted")
	}
	if got := Registered(); !slices.Equal(got, []string{"my_tool"}) {
		t.Fatalf("refused registrations were kept: %v", got)
	}
}

func TestABrokenFactoryIsAnErrorNamingTheTool(t *testing.T) {
	isolateRegistrations(t)
	// Refused by Register itself, at once.
	for name, f := range map[string]tools.Factory{
		"panics":   func(tools.Deps) (tools.Tool, error) { panic("boom") },
		"nothing":  func(tools.Deps) (tools.Tool, error) { return nil, nil },
		"misnamed": echoFactory("other_name"),
	} {
		want := map[string]string{"panics": "panicked: boom", "nothing": "no tool", "misnamed": `spec is named "other_name"`}[name]
		if err := Register(name, f); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("Register(%q) = %v, want an error with %q", name, err, want)
		}
	}
	if slices.Contains(Registered(), "misnamed") {
		t.Fatal("a refused tool was registered")
	}
	// A factory that breaks only with its dependencies is an error when
	// it is built, naming the tool.
	must(Register("late", func(d tools.Deps) (tools.Tool, error) {
		if d.Memory != nil || d.Settings != nil {
			panic("boom")
		}
		return echoFactory("late")(d)
	}))
	r := Registry(Deps{Settings: map[string]tools.Settings{}})
	if _, err := r.Build("late", tools.Deps{Settings: map[string]tools.Settings{}}); err == nil || !strings.Contains(err.Error(), "panicked: boom") || !strings.Contains(err.Error(), "late") {
		t.Errorf("Build(late) = %v", err)
	}
}
