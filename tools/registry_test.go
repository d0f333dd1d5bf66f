package tools_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestRegistryBuildsByNameWithSettings(t *testing.T) {
	r := tools.NewRegistry()
	var got tools.Deps
	if err := r.Register("echo", func(d tools.Deps) (tools.Tool, error) { got = d; return echoTool("echo"), nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("echo", func(tools.Deps) (tools.Tool, error) { return nil, nil }); err == nil {
		t.Fatal("duplicate registration must fail")
	}
	timeout := 3.0
	deps := tools.Deps{Settings: map[string]tools.Settings{"echo": {TimeoutSeconds: &timeout, AllowedDirs: []string{"/tmp"}}}}
	list, err := r.BuildList([]string{"echo"}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Spec().TimeoutSeconds != 3 {
		t.Errorf("timeout override not applied: %v", list[0].Spec().TimeoutSeconds)
	}
	if got.For("echo").AllowedDirs[0] != "/tmp" {
		t.Errorf("factory did not receive its settings")
	}
}

func TestRegistryUnknownNameSuggests(t *testing.T) {
	r := tools.NewRegistry()
	r.Register("calculator", func(tools.Deps) (tools.Tool, error) { return echoTool("calculator"), nil })
	r.Register("think", func(tools.Deps) (tools.Tool, error) { return echoTool("think"), nil })
	_, err := r.BuildList([]string{"think", "calculater"}, tools.Deps{})
	if err == nil {
		t.Fatal("want an error")
	}
	want := `unknown tool "calculater" (did you mean "calculator"?); known tools: calculator, think`
	if err.Error() != want {
		t.Fatalf("got %q", err)
	}
	if _, err := r.Build("zzzzzz", tools.Deps{}); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("no suggestion expected for a distant name: %v", err)
	}
}

func TestParseList(t *testing.T) {
	cases := map[string][]string{
		"calculator,think":         {"calculator", "think"},
		" calculator , , think,  ": {"calculator", "think"},
		"think,think":              {"think"},
		"":                         nil,
		"none":                     nil,
	}
	for in, want := range cases {
		if got := tools.ParseList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseList(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestArgsAccessors(t *testing.T) {
	a := tools.Args{"n": 5.0, "f": 2.5, "s": "7", "b": true, "bad": "x", "frac": 1.5}
	if n, ok, err := a.Int("n"); n != 5 || !ok || err != nil {
		t.Errorf("Int(n) = %d %v %v", n, ok, err)
	}
	if n, ok, err := a.Int("s"); n != 7 || !ok || err != nil {
		t.Errorf("Int(s) = %d %v %v", n, ok, err)
	}
	if _, _, err := a.Int("frac"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("Int(frac) err = %v", err)
	}
	if _, ok, _ := a.Int("missing"); ok {
		t.Error("missing key reported present")
	}
	if f, _, _ := a.Float("f"); f != 2.5 {
		t.Errorf("Float = %v", f)
	}
	if _, _, err := a.Float("bad"); err == nil {
		t.Error("Float of a string must fail")
	}
	if !a.Bool("b") || a.Bool("missing") {
		t.Error("Bool")
	}
}

// A pattern in a tool list stands for the tools it matches; one that
// matches nothing, or cannot be read, fails the list like an unknown name.
func TestRegistryExpandsPatterns(t *testing.T) {
	r := tools.NewRegistry()
	for _, n := range []string{"calculator", "fs__read_file", "fs__write_file", "gh__issue", "think"} {
		r.Register(n, func(tools.Deps) (tools.Tool, error) { return echoTool(n), nil })
	}
	if got, want := r.Expand([]string{"think", "fs__*", "fs__read_file", "web__later"}), []string{"think", "fs__read_file", "fs__write_file", "web__later"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Expand = %v, want %v (names kept as given, matches in name order, no repeats)", got, want)
	}
	list, err := r.BuildList([]string{"*__*"}, tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list {
		names = append(names, tl.Spec().Name)
	}
	if want := []string{"fs__read_file", "fs__write_file", "gh__issue"}; !reflect.DeepEqual(names, want) {
		t.Errorf("BuildList(*__*) = %v, want %v", names, want)
	}
	if _, err := r.BuildList([]string{"calculator", "web__*"}, tools.Deps{}); err == nil || !strings.HasPrefix(err.Error(), `no tool matches "web__*"; known tools: calculator,`) {
		t.Errorf("a pattern that matches nothing: %v", err)
	}
	if _, err := r.BuildList([]string{"fs__[read"}, tools.Deps{}); err == nil || !strings.Contains(err.Error(), "not a valid tool pattern") {
		t.Errorf("a malformed pattern: %v", err)
	}
}
