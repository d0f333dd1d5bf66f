package scheduler

import (
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// auditRec keeps the audit log in memory.
type auditRec = tools.MemoryAudit

type alwaysSet map[string]bool

func (s alwaysSet) AlwaysMatch(tool string, scope tools.Scope) (tools.Grant, bool, error) {
	g := tools.Grant{Tool: tool}
	return g, s[tool] && g.Covers(tool, scope), nil
}
func (s alwaysSet) AllowAlways(tools.Grant) error { return nil }

// Scheduled runs decide through the shared policy: an always-approval
// counts, the config's confirm = true takes it back, nothing else runs
// unasked, and every decision is audited with the task's id.
func TestRunsFollowTheSharedPolicy(t *testing.T) {
	audit := &auditRec{}
	r := &fakeRunner{}
	s, _ := newScheduler(t, r, Options{Policy: tools.PolicyOptions{Audit: audit, Always: alwaysSet{"code_interpreter": true}}})
	always := createDue(t, s, NewTask{Tools: []string{"code_interpreter"}}, 61*time.Second)
	serve(t, s)
	waitFor(t, "the run", func() bool { return len(finishedRuns(t, s, always.ID)) == 1 })
	if run := finishedRuns(t, s, always.ID)[0]; run.Result != "done code_interpreter:ok" {
		t.Fatalf("an always-allowed tool was not run: %q", run.Result)
	}
	entries := audit.Entries()
	if len(entries) != 1 || entries[0].By != tools.ByAlways || entries[0].Source != tools.SourceScheduler || entries[0].Task != always.ID {
		t.Fatalf("audited %+v", entries)
	}

	audit2 := &auditRec{}
	r2 := &fakeRunner{}
	s2, _ := newScheduler(t, r2, Options{Policy: tools.PolicyOptions{Audit: audit2, Always: alwaysSet{"code_interpreter": true},
		Overrides: map[string]bool{"code_interpreter": true}}})
	forced := createDue(t, s2, NewTask{Tools: []string{"code_interpreter"}}, 61*time.Second)
	serve(t, s2)
	waitFor(t, "the run", func() bool { return len(finishedRuns(t, s2, forced.ID)) == 1 })
	run := finishedRuns(t, s2, forced.ID)[0]
	if run.Result != "done code_interpreter:denied" || len(run.DeniedTools) != 1 {
		t.Fatalf("confirm = true in the config did not take the always-approval back: %+v", run)
	}
	if e := audit2.Entries(); len(e) != 1 || e[0].Decision != tools.Denied || e[0].By != tools.ByTask {
		t.Fatalf("audited %+v", e)
	}
}
