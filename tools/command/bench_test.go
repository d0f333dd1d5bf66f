package command

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// BenchmarkCall is what jarvis adds around a program: substituting the
// arguments, the pipes, the session, the group kill and the output cap,
// for a program that does nothing (true).
func BenchmarkCall(b *testing.B) {
	c, err := Compile(Spec{Name: "noop", Description: "d", Argv: []string{"true", "{word}"},
		Parameters: map[string]Param{"word": {Description: "w", Required: true}}})
	if err != nil {
		b.Fatal(err)
	}
	t := New(c)
	args := tools.Args{"word": "; rm -rf ~"}
	for b.Loop() {
		if r := t.Execute(context.Background(), args); !r.Success {
			b.Fatal(r.Content)
		}
	}
}
