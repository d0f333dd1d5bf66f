package tui

import (
	"testing"
	"time"
)

// Freed memory goes back to the system only once the workbench is idle:
// not while a run is under way, and not for a request made before the
// run that has started since.
func TestIdleWorkbenchReturnsFreedMemory(t *testing.T) {
	calls := 0
	old := freeOSMemory
	freeOSMemory = func() { calls++ }
	t.Cleanup(func() { freeOSMemory = old })

	m := newTestModel(t, 100, 30)
	startup := releaseMemoryMsg{seq: m.run.seq}
	fakeRun(m, "first question")
	if cmd := m.releaseMemory(startup); cmd != nil {
		t.Fatal("memory was released while a run was under way")
	}
	m.run.active = false // the run ended
	if cmd := m.releaseMemory(startup); cmd != nil {
		t.Fatal("a release asked for before the run was carried out after it")
	}
	cmd := m.releaseMemory(releaseMemoryMsg{seq: m.run.seq})
	if cmd == nil {
		t.Fatal("nothing was released once the run had ended and none followed")
	}
	cmd()
	if calls != 1 {
		t.Errorf("freed memory returned %d times, want once", calls)
	}
}

// The end of a run asks for the release, for that run.
func TestARunsEndAsksForTheRelease(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.releaseAfter = time.Nanosecond
	run := fakeRun(m, "q")
	_, cmd := m.Update(runDoneMsg{runID: run.ID})
	if cmd == nil {
		t.Fatal("the run's end asked for nothing")
	}
	if msg, ok := cmd().(releaseMemoryMsg); !ok || msg.seq != m.run.seq {
		t.Fatalf("the run's end asked for %#v, want a release for run %d", msg, m.run.seq)
	}
}
