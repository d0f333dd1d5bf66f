package tasks

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

func openStore(t testing.TB) *Store {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db)
}

var t0 = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

// by is a claimant known only by its owner string.
func by(owner string) Claimant { return Claimant{Owner: owner} }

func mustCreate(t *testing.T, s *Store, nt NewTask, now time.Time) Task {
	t.Helper()
	if nt.TimeZone == "" {
		nt.TimeZone = "UTC"
	}
	task, err := s.Create(nt, now)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return task
}

func TestCreateAndGet(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "  summarise the news  ", ScheduleType: Interval, ScheduleValue: "1h",
		Tools: []string{"calculator", " think", "calculator"}, ApprovedTools: []string{"think"}, Metadata: map[string]string{"created_by": "cli"}}, t0)

	if len(task.ID) != 16 || strings.Trim(task.ID, "0123456789abcdef") != "" {
		t.Errorf("id %q is not 16 hex characters", task.ID)
	}
	// A task with tools and no agent gets the agent that calls tools.
	if task.Prompt != "summarise the news" || task.Agent != ToolsAgent || task.Status != Active || task.ScheduleValue != "3600" {
		t.Errorf("stored task: %+v", task)
	}
	if !task.NextRun.Equal(t0.Add(time.Hour)) || !task.CreatedAt.Equal(t0) {
		t.Errorf("times: next %v created %v", task.NextRun, task.CreatedAt)
	}
	if strings.Join(task.Tools, ",") != "calculator,think" || strings.Join(task.ApprovedTools, ",") != "think" {
		t.Errorf("tools %v approved %v", task.Tools, task.ApprovedTools)
	}

	for _, ref := range []string{task.ID, task.ID[:6], strings.ToUpper(task.ID[:8])} {
		got, err := s.Get(ref)
		if err != nil || got.ID != task.ID || got.Metadata["created_by"] != "cli" {
			t.Errorf("Get(%q) = %v, %v", ref, got.ID, err)
		}
	}
	var nf *NotFoundError
	for _, ref := range []string{"ffffffffffffffff", "zz", "", "0123"} {
		if _, err := s.Get(ref); !errors.As(err, &nf) || err.Error() != "Task not found: "+ref {
			if !(ref == "0123" && strings.HasPrefix(task.ID, "0123")) {
				t.Errorf("Get(%q) error %v, want Task not found", ref, err)
			}
		}
	}
}

func TestAmbiguousPrefix(t *testing.T) {
	s := openStore(t)
	var ids []string
	for range 40 {
		ids = append(ids, mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0).ID)
	}
	// With 40 ids some first characters repeat; find one.
	seen := map[byte][]string{}
	for _, id := range ids {
		seen[id[0]] = append(seen[id[0]], id)
	}
	for c, group := range seen {
		if len(group) < 2 {
			continue
		}
		_, err := s.Get(string(c))
		var amb *AmbiguousError
		if !errors.As(err, &amb) || len(amb.Matches) != len(group) {
			t.Fatalf("prefix %q: %v, want ambiguous among %v", string(c), err, group)
		}
		for _, id := range group {
			if !strings.Contains(err.Error(), id) {
				t.Errorf("ambiguous error %q does not list %s", err, id)
			}
		}
		return
	}
	t.Skip("no shared first character among 40 random ids")
}

func TestInvalidTasksCreateNothing(t *testing.T) {
	s := openStore(t)
	bad := []struct {
		nt   NewTask
		want string
	}{
		{NewTask{Prompt: "x", ScheduleType: Cron, ScheduleValue: "0 25 * * *"}, "hour field"},
		{NewTask{Prompt: "x", ScheduleType: Interval, ScheduleValue: "-60"}, "at least 1 second"},
		{NewTask{Prompt: "x", ScheduleType: Once, ScheduleValue: "2025-06-01T09:00:00Z"}, "already passed"},
		{NewTask{Prompt: "x", ScheduleType: "hourly", ScheduleValue: "1"}, "unknown schedule type"},
		{NewTask{Prompt: " ", ScheduleType: Interval, ScheduleValue: "60"}, "prompt is empty"},
		{NewTask{Prompt: "x", ScheduleType: Interval, ScheduleValue: "60", TimeZone: "Mars/Olympus"}, "unknown time zone"},
		{NewTask{Prompt: "x", ScheduleType: Interval, ScheduleValue: "60", Tools: []string{"calculator"}, ApprovedTools: []string{"code_interpreter"}}, "not one of the task's tools"},
	}
	for _, b := range bad {
		if b.nt.TimeZone == "" {
			b.nt.TimeZone = "UTC"
		}
		if _, err := s.Create(b.nt, t0); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want %q", b.nt, err, b.want)
		}
	}
	if list, err := s.List(""); err != nil || len(list) != 0 {
		t.Errorf("invalid tasks left %d tasks (%v)", len(list), err)
	}
	if _, ok, _ := s.NextDue(); ok {
		t.Error("invalid tasks left something due")
	}
}

func TestTransitions(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Cron, ScheduleValue: "0 9 * * *"}, t0)
	due := func() time.Time {
		next, ok, err := s.NextDue()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return time.Time{}
		}
		return next
	}
	if !due().Equal(time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("due %v", due())
	}

	p, err := s.Pause(task.ID[:5])
	if err != nil || p.Status != Paused || !p.NextRun.IsZero() || !due().IsZero() {
		t.Fatalf("pause: %+v %v, due %v", p, err, due())
	}
	if p, err = s.Pause(task.ID); err != nil || p.Status != Paused {
		t.Errorf("pausing a paused task: %v", err)
	}
	later := time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)
	r, err := s.Resume(task.ID, later)
	if err != nil || r.Status != Active || !r.NextRun.Equal(time.Date(2025, 6, 11, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("resume recomputes from now: %+v %v", r, err)
	}
	if !due().Equal(r.NextRun) {
		t.Errorf("resumed task not due at %v", r.NextRun)
	}
	c, err := s.Cancel(task.ID)
	if err != nil || c.Status != Cancelled || !c.NextRun.IsZero() || !due().IsZero() {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	var se *StateError
	if _, err := s.Resume(task.ID, later); !errors.As(err, &se) || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("resume cancelled: %v", err)
	}
	if _, err := s.Pause(task.ID); !errors.As(err, &se) {
		t.Errorf("pause cancelled: %v", err)
	}
	if _, err := s.Cancel(task.ID); err != nil {
		t.Errorf("cancelling twice: %v", err)
	}

	// A once task paused past its time cannot be resumed.
	once := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Once, ScheduleValue: "2025-06-01T11:00:00Z"}, t0)
	s.Pause(once.ID)
	if _, err := s.Resume(once.ID, t0.Add(2*time.Hour)); !errors.As(err, &se) || !strings.Contains(err.Error(), "already passed") {
		t.Errorf("resume a past once: %v", err)
	}
	if got, _ := s.Get(once.ID); got.Status != Paused {
		t.Errorf("failed resume changed the status to %s", got.Status)
	}
}

func TestMissedRunsClaimOnce(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	// Ten minutes pass with nothing running: nine slots were missed.
	now := t0.Add(10*time.Minute + 5*time.Second)
	claims, err := s.ClaimDue(now, 10, by("a"))
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims %d, %v; want exactly one", len(claims), err)
	}
	c := claims[0]
	if !c.Slot.Equal(t0.Add(time.Minute)) || !c.Task.Running {
		t.Errorf("claim %+v", c)
	}
	if !c.Task.NextRun.Equal(t0.Add(11 * time.Minute)) {
		t.Errorf("next run %v, want the next grid slot %v", c.Task.NextRun, t0.Add(11*time.Minute))
	}
	// While it runs nothing else is claimable, even when the next slot
	// passes.
	if more, _ := s.ClaimDue(now.Add(time.Hour), 10, by("b")); len(more) != 0 {
		t.Errorf("claimed a running task again: %d", len(more))
	}
	if _, ok, _ := s.NextDue(); ok {
		t.Error("a running task is in the due index")
	}
	if _, err := s.ClaimManual(task.ID, now, by("b")); !errors.Is(err, ErrRunning) {
		t.Errorf("manual run of a running task: %v", err)
	}

	// A failed run still advances the schedule.
	done, run, err := s.Finish(c, Finish{At: now.Add(time.Second), Error: "model unavailable"})
	if err != nil {
		t.Fatal(err)
	}
	if done.Running || done.LastOutcome != OutcomeFailed || done.LastError != "model unavailable" || !done.NextRun.Equal(t0.Add(11*time.Minute)) {
		t.Errorf("after a failed run: %+v", done)
	}
	if run.Success || run.Outcome != OutcomeFailed || run.FinishedAt.IsZero() {
		t.Errorf("run row %+v", run)
	}
	if next, ok, _ := s.NextDue(); !ok || !next.Equal(t0.Add(11*time.Minute)) {
		t.Errorf("due after finish: %v %v", next, ok)
	}
	if _, _, err := s.Finish(c, Finish{At: now}); !errors.Is(err, ErrFinished) {
		t.Errorf("finishing twice: %v", err)
	}
	if more, _ := s.ClaimDue(now.Add(2*time.Second), 10, by("b")); len(more) != 0 {
		t.Error("claimed before the next slot")
	}
}

func TestClaimSlotOnlyOnce(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	slot := task.NextRun
	if _, err := s.ClaimSlot(task.ID, slot, slot, by("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimSlot(task.ID, slot, slot, by("b")); !errors.Is(err, ErrSlotTaken) {
		t.Errorf("second claim of the slot: %v", err)
	}
}

func TestTwoDatabaseHandlesRaceForSlots(t *testing.T) {
	// Two store.DB values on one file lock each other like two processes.
	path := filepath.Join(t.TempDir(), "jarvis.db")
	var stores []*Store
	for _, who := range []string{"a", "b"} {
		db, err := store.Open(path, who)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		stores = append(stores, New(db))
	}
	var ids []string
	for range 20 {
		ids = append(ids, mustCreate(t, stores[0], NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0).ID)
	}
	now := t0.Add(5 * time.Minute)
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				cs, err := s.ClaimDue(now, 3, by([]string{"a", "b"}[i]))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					claimed[c.Task.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != len(ids) {
		t.Errorf("%d of %d tasks claimed", len(claimed), len(ids))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("task %s claimed %d times for one slot", id, n)
		}
	}
}

func TestOnceCompletesAfterItsRun(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Once, ScheduleValue: "2025-06-01T10:30:00Z"}, t0)
	cs, _ := s.ClaimDue(t0.Add(time.Hour), 5, by("a"))
	if len(cs) != 1 || !cs[0].Task.NextRun.IsZero() || cs[0].Task.Status != Active {
		t.Fatalf("claims %+v", cs)
	}
	done, _, err := s.Finish(cs[0], Finish{At: t0.Add(time.Hour), Success: true, Result: "ok"})
	if err != nil || done.Status != Completed || done.LastOutcome != OutcomeSuccess || done.LastResult != "ok" {
		t.Fatalf("after the run: %+v %v", done, err)
	}
	if _, err := s.Cancel(task.ID); err == nil {
		t.Error("cancelled a completed task")
	}
	if _, ok, _ := s.NextDue(); ok {
		t.Error("a completed task is due")
	}
}

func TestCancelDuringRunKeepsCancelled(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	cs, _ := s.ClaimDue(t0.Add(time.Minute), 1, by("a"))
	if _, err := s.Cancel(task.ID); err != nil {
		t.Fatal(err)
	}
	done, _, err := s.Finish(cs[0], Finish{At: t0.Add(time.Minute), Error: "cancelled"})
	if err != nil || done.Status != Cancelled || done.Running || !done.NextRun.IsZero() {
		t.Errorf("finish after cancel: %+v %v", done, err)
	}
}

func TestLogsAndPruning(t *testing.T) {
	s := openStore(t)
	task := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	other := mustCreate(t, s, NewTask{Prompt: "q", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	oc, _ := s.ClaimManual(other.ID, t0, by("a"))
	s.Finish(oc, Finish{At: t0, Success: true, Result: "other"})

	total := KeepRuns + 5
	for i := range total {
		at := t0.Add(time.Duration(i) * time.Second)
		c, err := s.ClaimManual(task.ID, at, by("a"))
		if err != nil {
			t.Fatal(err)
		}
		s.Finish(c, Finish{At: at, Success: true, Result: strings.Repeat("r", i%3), DeniedTools: []string{"code_interpreter"}})
	}
	_, runs, err := s.Logs(task.ID, 3)
	if err != nil || len(runs) != 3 {
		t.Fatalf("logs: %d %v", len(runs), err)
	}
	if !runs[0].StartedAt.Equal(t0.Add(time.Duration(total-1)*time.Second)) || !runs[0].StartedAt.After(runs[1].StartedAt) || !runs[1].StartedAt.After(runs[2].StartedAt) {
		t.Errorf("last three runs not newest-first: %v, %v, %v", runs[0].StartedAt, runs[1].StartedAt, runs[2].StartedAt)
	}
	if !runs[0].Manual || runs[0].DeniedTools[0] != "code_interpreter" || !strings.Contains(runs[0].DeniedNote(), "--approve code_interpreter") {
		t.Errorf("run %+v note %q", runs[0], runs[0].DeniedNote())
	}
	_, all, _ := s.Logs(task.ID, 0)
	if len(all) != KeepRuns {
		t.Errorf("kept %d runs, want %d", len(all), KeepRuns)
	}
	if oldest := all[len(all)-1]; !oldest.StartedAt.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("the oldest kept run started at %v: pruning dropped the wrong rows", oldest.StartedAt)
	}
	_, others, _ := s.Logs(other.ID, 0)
	if len(others) != 1 || others[0].Result != "other" {
		t.Errorf("another task's log: %+v", others)
	}
}

func TestRunningListsClaimsInProgress(t *testing.T) {
	s := openStore(t)
	a := mustCreate(t, s, NewTask{Prompt: "p", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	mustCreate(t, s, NewTask{Prompt: "q", ScheduleType: Interval, ScheduleValue: "60"}, t0)
	c, _ := s.ClaimManual(a.ID, t0, by("host/1/x"))
	running, err := s.Running()
	if err != nil || len(running) != 1 || running[0].Task.ID != a.ID || running[0].RunID != c.RunID || running[0].Owner != "host/1/x" {
		t.Fatalf("running: %+v %v", running, err)
	}
	done, run, err := s.Finish(running[0], Finish{At: t0.Add(time.Minute), Interrupted: true, Error: "interrupted"})
	if err != nil || done.LastOutcome != OutcomeInterrupted || run.Success {
		t.Errorf("interrupted: %+v %+v %v", done, run, err)
	}
	if running, _ := s.Running(); len(running) != 0 {
		t.Errorf("still running after finish: %d", len(running))
	}
}

// A once task paused while its only run goes on is completed when the run
// ends: it ran, and resuming could give it no next run.
func TestOncePausedDuringItsRunCompletes(t *testing.T) {
	s := openStore(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	task, err := s.Create(NewTask{Prompt: "p", ScheduleType: Once, ScheduleValue: "2026-01-01T12:05:00Z", TimeZone: "UTC"}, now)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimDue(now.Add(5*time.Minute), 1, by("me"))
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims %v %v", claims, err)
	}
	if _, err := s.Pause(task.ID); err != nil {
		t.Fatal(err)
	}
	done, _, err := s.Finish(claims[0], Finish{At: now.Add(6 * time.Minute), Success: true, Result: "ok"})
	if err != nil || done.Status != Completed {
		t.Fatalf("after the run: %+v %v", done, err)
	}
}
