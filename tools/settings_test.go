package tools_test

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestDescriptionOverridesReachSchemaAndText(t *testing.T) {
	shared := tools.Params(tools.StringParam("text", "the text", true), tools.IntegerParam("n", "how many", false))
	r := tools.NewRegistry()
	for _, name := range []string{"a", "b"} {
		spec := tools.Spec{Name: name, Description: "original " + name, Parameters: shared}
		r.Register(name, func(tools.Deps) (tools.Tool, error) { return &fakeTool{spec: spec}, nil })
	}
	desc := "Reworded: echo the text back."
	deps := tools.Deps{Settings: map[string]tools.Settings{"a": {Description: &desc, Parameters: map[string]string{"text": "What to echo, verbatim"}}}}
	list, err := r.BuildList([]string{"a", "b"}, deps)
	if err != nil {
		t.Fatal(err)
	}
	a, b := list[0].Spec(), list[1].Spec()
	if a.Description != desc || a.Parameters.Properties["text"].Description != "What to echo, verbatim" {
		t.Fatalf("override not in the schema: %q / %q", a.Description, a.Parameters.Properties["text"].Description)
	}
	if a.Parameters.Properties["n"].Description != "how many" {
		t.Errorf("a parameter without an override changed: %q", a.Parameters.Properties["n"].Description)
	}
	// The other tool shares the schema: it must keep its words.
	if b.Description != "original b" || b.Parameters.Properties["text"].Description != "the text" || shared.Properties["text"].Description != "the text" {
		t.Fatalf("the override leaked into a shared schema: %q", b.Parameters.Properties["text"].Description)
	}
	text := tools.BuildToolDescriptions(list[:1], false, false)
	for _, want := range []string{"### a\n" + desc, "- text (string, required): What to echo, verbatim", "- n (integer): how many"} {
		if !strings.Contains(text, want) {
			t.Errorf("descriptions lack %q:\n%s", want, text)
		}
	}
	if fn := tools.ToOpenAI(a).Function; fn.Description != desc || fn.Parameters.Properties["text"].Description != "What to echo, verbatim" {
		t.Errorf("the OpenAI form lacks the override: %+v", fn)
	}
}

func TestDescriptionOverrideErrors(t *testing.T) {
	r := tools.NewRegistry()
	r.Register("calculator", func(tools.Deps) (tools.Tool, error) {
		return &fakeTool{spec: tools.Spec{Name: "calculator", Parameters: tools.Params(tools.StringParam("expression", "e", true))}}, nil
	})
	empty := "  "
	for _, tc := range []struct {
		s    tools.Settings
		want string
	}{
		{tools.Settings{Parameters: map[string]string{"expresion": "x"}}, `tool calculator has no parameter "expresion" to describe (it takes only expression); did you mean "expression"?`},
		{tools.Settings{Description: &empty}, "description override is empty"},
		{tools.Settings{Parameters: map[string]string{"expression": ""}}, `override of parameter "expression" is empty`},
	} {
		_, err := r.Build("calculator", tools.Deps{Settings: map[string]tools.Settings{"calculator": tc.s}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("settings %+v: got %v, want %q", tc.s, err, tc.want)
		}
	}
}
