package command

import (
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// A command gets the clean environment every program started for a model
// gets: what programs need (PATH, HOME, the locale), never jarvis's keys
// and tokens, unless pass_env names them.
func TestCommandsGetACleanEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret-value")
	t.Setenv("JARVIS_TEST_TOKEN", "tok-value")
	t.Setenv("LC_TIME", "C")
	r := call(t, mustCompile(t, helperSpec(t, "env")), tools.Args{})
	if !r.Success {
		t.Fatal(r.Content)
	}
	if strings.Contains(r.Content, "sk-secret-value") || strings.Contains(r.Content, "tok-value") {
		t.Fatalf("jarvis's secrets reached the command:\n%s", r.Content)
	}
	for _, want := range []string{"PATH=", "HOME=", "LC_TIME=C"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("the command lacks %s:\n%s", want, r.Content)
		}
	}
	spec := helperSpec(t, "env")
	spec.PassEnv = []string{"JARVIS_TEST_TOKEN"}
	r = call(t, mustCompile(t, spec), tools.Args{})
	if !strings.Contains(r.Content, "JARVIS_TEST_TOKEN=tok-value") || strings.Contains(r.Content, "sk-secret-value") {
		t.Fatalf("pass_env:\n%s", r.Content)
	}
}

// confirm = false runs the command unasked and the audit log says the
// config allowed it, naming the entry.
func TestUnconfirmedCommandIsAuditedAsAllowedByConfig(t *testing.T) {
	spec := helperSpec(t, "pwd")
	off := false
	spec.Confirm = &off
	audit := &tools.MemoryAudit{}
	e, err := tools.NewExecutor([]tools.Tool{New(mustCompile(t, spec))}, tools.ExecutorOptions{Policy: tools.NewPolicy(tools.PolicyOptions{Audit: audit})})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Execute(context.Background(), tools.Call{Name: "probe"}); !r.Success {
		t.Fatal(r.Content)
	}
	if entries := audit.Entries(); len(entries) != 1 || entries[0].By != tools.ByConfig || entries[0].Reason != "[[commands]] probe: confirm = false" {
		t.Fatalf("audited %+v", audit.Entries())
	}
}
