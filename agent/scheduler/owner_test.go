package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
)

// waitForDB is waitFor for conditions that read the database through one
// handle while a scheduler on another handle must get the file too: a
// handle that reads more often than store.IdleRelease never lets go of it.
func waitForDB(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(3 * store.IdleRelease / 2)
	}
}

// notices returns the notice texts recorded so far.
func notices(rec *events.Recorder) []string {
	var out []string
	for _, e := range rec.Events() {
		if e.Type == events.Notice {
			out = append(out, e.Text)
		}
	}
	return out
}

func hasNotice(rec *events.Recorder, part string) bool {
	for _, n := range notices(rec) {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// A TUI's scheduler leaves scheduled runs to a live `scheduler start`,
// says so once, and takes them again when it stops.
func TestSchedulerLeavesRunsToADedicatedOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	fast := Options{WatchInterval: 20 * time.Millisecond, HeartbeatInterval: time.Second}
	ownerRunner, tuiRunner := &fakeRunner{}, &fakeRunner{}
	o := fast
	o.Runner, o.Command, o.Dedicated = ownerRunner, "scheduler start", true
	owner := New(openDB(t, path), o)
	rec := &events.Recorder{}
	u := fast
	u.Runner, u.Command, u.Events = tuiRunner, "tui", rec
	tui := New(openDB(t, path), u)

	stopOwner := serve(t, owner)
	waitForDB(t, "the owner's entry", func() bool {
		peers, _ := Serving(owner.Store(), time.Now())
		return len(peers) == 1 && peers[0].Dedicated && peers[0].Process.Command == "scheduler start"
	})
	serve(t, tui)
	waitForDB(t, "the TUI's entry", func() bool {
		peers, _ := Serving(owner.Store(), time.Now())
		return len(peers) == 2
	})
	var ids []string
	for range 6 {
		ids = append(ids, createDue(t, owner, NewTask{}, 61*time.Second).ID)
	}
	waitForDB(t, "every task to run", func() bool {
		for _, id := range ids {
			if len(finishedRuns(t, owner, id)) != 1 {
				return false
			}
		}
		return true
	})
	if n := tuiRunner.count(""); n != 0 {
		t.Errorf("the TUI ran %d tasks while scheduler start served", n)
	}
	if p, ok := tui.Owner(); !ok || p.Process.Command != "scheduler start" {
		t.Errorf("Owner() = %+v, %v", p, ok)
	}
	if !hasNotice(rec, "scheduler start (pid") || !hasNotice(rec, "leaves scheduled runs to it") {
		t.Errorf("no notice that the TUI leaves runs to scheduler start: %q", notices(rec))
	}

	stopOwner()
	late := createDue(t, tui, NewTask{}, 61*time.Second)
	waitFor(t, "the TUI to run tasks again", func() bool { return tuiRunner.count(late.ID) == 1 })
	if _, ok := tui.Owner(); ok {
		t.Error("Owner() still names the stopped scheduler")
	}
	if !hasNotice(rec, "no longer serves this database") {
		t.Errorf("no notice that the owner left: %q", notices(rec))
	}
	if n := len(notices(rec)); n != 2 {
		t.Errorf("%d notices, want one when the owner appeared and one when it left: %q", n, notices(rec))
	}
}

// A dedicated scheduler that reports it cannot reach a task's server does
// not keep a TUI that can from running it.
func TestTUITakesRunsTheOwnerCannotReach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	gpu := tasks.Server{Engine: "ollama", Host: "http://gpu:11434"}
	ownerRunner, tuiRunner := &fakeRunner{}, &fakeRunner{}
	owner := New(openDB(t, path), Options{Runner: ownerRunner, Dedicated: true, Command: "scheduler start", SkipAfter: -1,
		WatchInterval: 20 * time.Millisecond, HeartbeatInterval: time.Second, ReachTTL: 100 * time.Millisecond,
		Reach: func(context.Context, tasks.Server) error { return errors.New("no route to host") }})
	tui := New(openDB(t, path), Options{Runner: tuiRunner, Command: "tui",
		WatchInterval: 20 * time.Millisecond, HeartbeatInterval: time.Second, ReachTTL: 100 * time.Millisecond,
		Reach: func(context.Context, tasks.Server) error { return nil }})
	serve(t, owner)
	waitForDB(t, "the owner's entry", func() bool {
		peers, _ := Serving(owner.Store(), time.Now())
		return len(peers) == 1
	})
	serve(t, tui)
	waitForDB(t, "the TUI's entry", func() bool {
		peers, _ := Serving(owner.Store(), time.Now())
		return len(peers) == 2
	})
	task := createDue(t, owner, NewTask{Server: gpu}, 61*time.Second)
	waitForDB(t, "the TUI to run the task", func() bool { return len(finishedRuns(t, tui, task.ID)) == 1 })
	run := finishedRuns(t, tui, task.ID)[0]
	if !run.Success || run.Process.Command != "tui" || ownerRunner.count("") != 0 {
		t.Errorf("run %+v; the owner ran %d", run, ownerRunner.count(""))
	}
}
