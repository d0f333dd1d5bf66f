package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// fakeRunner records its calls. By default it runs each of the task's
// tools once through a real tools.Executor with the scheduler's confirmer,
// so the confirmation rule is exercised end to end.
type fakeRunner struct {
	mu    sync.Mutex
	calls []Task
	fn    func(ctx context.Context, task Task, c tools.Confirmer) (string, error)
}

func (f *fakeRunner) Run(ctx context.Context, task Task, c tools.Confirmer) (string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, task)
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, task, c)
	}
	return runTools(ctx, task, c)
}

func (f *fakeRunner) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if id == "" || c.ID == id {
			n++
		}
	}
	return n
}

// fakeTool stands for a real tool; code_interpreter needs confirmation.
type fakeTool struct{ name string }

func (t fakeTool) Spec() tools.Spec {
	return tools.Spec{Name: t.name, Description: "test tool", Parameters: tools.Params(),
		RequiresConfirmation: t.name == "code_interpreter"}
}

func (t fakeTool) Execute(context.Context, tools.Args) tools.Result { return tools.OK(t.name + " ran") }

func runTools(ctx context.Context, task Task, c tools.Confirmer) (string, error) {
	var list []tools.Tool
	for _, n := range task.Tools {
		list = append(list, fakeTool{n})
	}
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Confirmer: c})
	if err != nil {
		return "", err
	}
	var out []string
	for i, n := range task.Tools {
		r := exec.Execute(ctx, tools.Call{ID: fmt.Sprint(i), Name: n, Arguments: "{}"})
		out = append(out, fmt.Sprintf("%s:%s", n, r.Status))
	}
	return "done " + strings.Join(out, ","), nil
}

func openDB(t testing.TB, path string) *store.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "jarvis.db")
	}
	db, err := store.Open(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newScheduler(t testing.TB, r Runner, opts Options) (*Scheduler, *events.Recorder) {
	t.Helper()
	rec := &events.Recorder{}
	opts.Runner = r
	opts.Events = rec
	if opts.StopGrace == 0 {
		opts.StopGrace = 2 * time.Second
	}
	return New(openDB(t, ""), opts), rec
}

// serve runs s until the test ends and checks Serve returned cleanly.
func serve(t *testing.T, s *Scheduler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// createDue stores a task created in the past, so it is due now.
func createDue(t *testing.T, s *Scheduler, nt NewTask, age time.Duration) Task {
	t.Helper()
	if nt.ScheduleType == "" {
		nt.ScheduleType, nt.ScheduleValue = tasks.Interval, "60"
	}
	if nt.Prompt == "" {
		nt.Prompt = "check the build"
	}
	nt.TimeZone = "UTC"
	task, err := s.Store().Create(nt, time.Now().Add(-age))
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func finishedRuns(t *testing.T, s *Scheduler, id string) []Run {
	t.Helper()
	_, runs, err := s.Logs(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Run
	for _, r := range runs {
		if r.Finished() {
			out = append(out, r)
		}
	}
	return out
}

func TestDueTaskRunsAndPublishesEvents(t *testing.T) {
	r := &fakeRunner{}
	s, rec := newScheduler(t, r, Options{})
	task := createDue(t, s, NewTask{Prompt: "summarise the logs", Tools: []string{"calculator"}}, 61*time.Second)
	serve(t, s)
	waitFor(t, "the run's log", func() bool { return len(finishedRuns(t, s, task.ID)) == 1 })

	got, _ := s.Get(context.Background(), task.ID)
	if got.LastOutcome != tasks.OutcomeSuccess || got.LastResult != "done calculator:ok" || got.Running || !got.NextRun.After(time.Now()) {
		t.Errorf("task after its run: %+v", got)
	}
	runs := finishedRuns(t, s, task.ID)
	if !runs[0].Success || runs[0].Result != "done calculator:ok" || runs[0].Slot.IsZero() || len(runs[0].DeniedTools) != 0 {
		t.Errorf("run log %+v", runs[0])
	}
	waitFor(t, "the end event", func() bool { return len(rec.Events()) >= 2 })
	evs := rec.Events()
	if evs[0].Type != events.SchedulerTaskStart || evs[0].Task.TaskID != task.ID || evs[0].Task.Prompt != "summarise the logs" {
		t.Errorf("start event %+v", evs[0])
	}
	if evs[1].Type != events.SchedulerTaskEnd || !evs[1].Task.Success || evs[1].Task.Result != "done calculator:ok" || evs[1].Task.Error != "" {
		t.Errorf("end event %+v %+v", evs[1], evs[1].Task)
	}
	// A task with tools and no agent runs with the agent that calls tools.
	if evs[0].Run.ID == "" || evs[0].Run.ID != evs[1].Run.ID || evs[0].Run.Agent != tasks.ToolsAgent {
		t.Errorf("events not stamped with the run: %+v / %+v", evs[0].Run, evs[1].Run)
	}
}

func TestMissedRunsRunOnce(t *testing.T) {
	r := &fakeRunner{}
	s, _ := newScheduler(t, r, Options{})
	// Created three hours ago with a one-minute interval: 179 slots missed.
	// (Half a minute more, so the next slot is not due right away.)
	task := createDue(t, s, NewTask{}, 3*time.Hour+30*time.Second)
	serve(t, s)
	waitFor(t, "the catch-up run", func() bool { return len(finishedRuns(t, s, task.ID)) == 1 })
	time.Sleep(300 * time.Millisecond)
	if n := r.count(task.ID); n != 1 {
		t.Errorf("ran %d times for the missed slots, want once", n)
	}
	got, _ := s.Get(context.Background(), task.ID)
	if d := time.Until(got.NextRun); d <= 0 || d > time.Minute {
		t.Errorf("next run %v is not the next slot on the grid", got.NextRun)
	}
	// The grid starts on the whole second after creation.
	if off := got.NextRun.Sub(got.CreatedAt) % time.Minute; off < 0 || off >= time.Second || got.NextRun.Nanosecond() != 0 {
		t.Errorf("next run %v drifted off the one-minute grid from %v", got.NextRun, got.CreatedAt)
	}
}

func TestOnceTaskSleepsUntilDueThenCompletes(t *testing.T) {
	r := &fakeRunner{}
	// A watch interval of an hour proves the timer, not a poll, wakes it.
	s, _ := newScheduler(t, r, Options{WatchInterval: time.Hour})
	at := time.Now().Add(400 * time.Millisecond)
	task, err := s.Create(context.Background(), NewTask{Prompt: "remind me", ScheduleType: tasks.Once,
		ScheduleValue: at.Format(time.RFC3339Nano), TimeZone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	waitFor(t, "the one-time run", func() bool { return len(finishedRuns(t, s, task.ID)) == 1 })
	if ran := finishedRuns(t, s, task.ID)[0].StartedAt; ran.Before(at) {
		t.Errorf("ran at %v, before its time %v", ran, at)
	}
	got, _ := s.Get(context.Background(), task.ID)
	if got.Status != tasks.Completed || !got.NextRun.IsZero() {
		t.Errorf("after its run: status %s next %v", got.Status, got.NextRun)
	}
}

func TestCreateWakesTheLoop(t *testing.T) {
	r := &fakeRunner{}
	s, _ := newScheduler(t, r, Options{WatchInterval: time.Hour})
	serve(t, s)
	time.Sleep(50 * time.Millisecond) // the loop is asleep with nothing due
	task, err := s.Create(context.Background(), NewTask{Prompt: "p", ScheduleType: tasks.Once,
		ScheduleValue: time.Now().Add(200 * time.Millisecond).Format(time.RFC3339Nano), TimeZone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new task's run", func() bool { return r.count(task.ID) == 1 })
}

func TestOtherProcessChangesAreNoticed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	r := &fakeRunner{}
	s := New(openDB(t, path), Options{Runner: r, WatchInterval: 50 * time.Millisecond})
	serve(t, s)
	time.Sleep(100 * time.Millisecond)
	// Another handle on the file stands for another process.
	other := tasks.New(openDB(t, path))
	task, err := other.Create(NewTask{Prompt: "p", ScheduleType: tasks.Once,
		ScheduleValue: time.Now().Add(300 * time.Millisecond).Format(time.RFC3339Nano), TimeZone: "UTC"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the task created elsewhere to run", func() bool { return r.count(task.ID) == 1 })
}

func TestApprovalRule(t *testing.T) {
	r := &fakeRunner{}
	s, rec := newScheduler(t, r, Options{})
	denied := createDue(t, s, NewTask{Tools: []string{"code_interpreter", "calculator"}}, 61*time.Second)
	approved := createDue(t, s, NewTask{Tools: []string{"code_interpreter", "calculator"}, ApprovedTools: []string{"code_interpreter"}}, 61*time.Second)
	serve(t, s)
	waitFor(t, "both runs", func() bool {
		return len(finishedRuns(t, s, denied.ID)) == 1 && len(finishedRuns(t, s, approved.ID)) == 1
	})

	d := finishedRuns(t, s, denied.ID)[0]
	if d.Result != "done code_interpreter:denied,calculator:ok" {
		t.Errorf("unapproved run: %q", d.Result)
	}
	if len(d.DeniedTools) != 1 || d.DeniedTools[0] != "code_interpreter" || !strings.Contains(d.DeniedNote(), "not approved for this task") {
		t.Errorf("the log does not say what was denied: %+v", d)
	}
	a := finishedRuns(t, s, approved.ID)[0]
	if a.Result != "done code_interpreter:ok,calculator:ok" || len(a.DeniedTools) != 0 {
		t.Errorf("approved run: %+v", a)
	}
	for _, e := range rec.Events() {
		if e.Type == events.SchedulerTaskEnd && e.Task.TaskID == denied.ID && !strings.Contains(e.Task.Error, "denied: code_interpreter") {
			t.Errorf("end event does not carry the denial: %q", e.Task.Error)
		}
	}
}

func TestPauseResumeCancelWhileServing(t *testing.T) {
	ctx := context.Background()
	started := make(chan string, 10)
	r := &fakeRunner{fn: func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		started <- task.ID
		if task.Prompt == "long" {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "ok", nil
	}}
	s, _ := newScheduler(t, r, Options{})
	paused := createDue(t, s, NewTask{Prompt: "short"}, 61*time.Second)
	if _, err := s.Pause(ctx, paused.ID); err != nil {
		t.Fatal(err)
	}
	long := createDue(t, s, NewTask{Prompt: "long"}, 61*time.Second)
	serve(t, s)

	if id := <-started; id != long.ID {
		t.Fatalf("the paused task ran")
	}
	// Cancelling a running task stops its run and logs why.
	if _, err := s.Cancel(ctx, long.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cancelled run's log", func() bool { return len(finishedRuns(t, s, long.ID)) == 1 })
	if run := finishedRuns(t, s, long.ID)[0]; run.Success || run.Error != stopCancelled.text {
		t.Errorf("cancelled run log: %+v", run)
	}
	if got, _ := s.Get(ctx, long.ID); got.Status != tasks.Cancelled || got.Running {
		t.Errorf("cancelled task: %+v", got)
	}
	if r.count(paused.ID) != 0 {
		t.Error("a paused task ran")
	}
	// Resuming computes the next run from now: the missed slot is not run.
	res, err := s.Resume(ctx, paused.ID)
	if err != nil || res.Status != tasks.Active || time.Until(res.NextRun) < 58*time.Second {
		t.Fatalf("resume: %+v %v", res, err)
	}
	time.Sleep(200 * time.Millisecond)
	if r.count(paused.ID) != 0 {
		t.Error("resume ran the slot missed while paused")
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	r := &fakeRunner{fn: func(ctx context.Context, _ Task, _ tools.Confirmer) (string, error) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		inFlight.Add(-1)
		return "ok", nil
	}}
	s, _ := newScheduler(t, r, Options{MaxConcurrent: 2})
	var ids []string
	for range 5 {
		ids = append(ids, createDue(t, s, NewTask{}, 61*time.Second).ID)
	}
	serve(t, s)
	waitFor(t, "two runs", func() bool { return inFlight.Load() == 2 })
	time.Sleep(100 * time.Millisecond)
	close(release)
	waitFor(t, "all runs", func() bool {
		for _, id := range ids {
			if len(finishedRuns(t, s, id)) != 1 {
				return false
			}
		}
		return true
	})
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrency %d, want 2", p)
	}
}

func TestStopRecordsRunningLogs(t *testing.T) {
	started := make(chan struct{}, 2)
	r := &fakeRunner{fn: func(ctx context.Context, _ Task, _ tools.Confirmer) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "partial", ctx.Err()
	}}
	s, _ := newScheduler(t, r, Options{StopGrace: 50 * time.Millisecond})
	task := createDue(t, s, NewTask{}, 61*time.Second)
	stop := serve(t, s)
	<-started
	stop() // returns only once the run's end is recorded
	runs := finishedRuns(t, s, task.ID)
	if len(runs) != 1 || runs[0].Success || runs[0].Error != stopShutdown.text || runs[0].Result != "partial" {
		t.Fatalf("log after stop: %+v", runs)
	}
	if got, _ := s.Get(context.Background(), task.ID); got.Running || got.LastOutcome != tasks.OutcomeFailed {
		t.Errorf("task after stop: %+v", got)
	}
}

func TestStopGivesUpOnARunnerThatIgnoresCancel(t *testing.T) {
	old := abandonAfter
	abandonAfter = 100 * time.Millisecond
	defer func() { abandonAfter = old }()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	r := &fakeRunner{fn: func(context.Context, Task, tools.Confirmer) (string, error) {
		started <- struct{}{}
		<-release
		return "late", nil
	}}
	s, rec := newScheduler(t, r, Options{StopGrace: -1})
	var releaseOnce sync.Once
	letItReturn := func() {
		// Let the runner return, and wait until it is gone, so it cannot
		// touch the database after the test.
		releaseOnce.Do(func() { close(release) })
		waitFor(t, "the late run to return", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.active) == 0
		})
	}
	defer letItReturn()
	task := createDue(t, s, NewTask{}, 61*time.Second)
	stop := serve(t, s)
	<-started
	stop()
	runs := finishedRuns(t, s, task.ID)
	if len(runs) != 1 || runs[0].Outcome != tasks.OutcomeInterrupted || !strings.Contains(runs[0].Error, "did not stop") {
		t.Fatalf("log of an abandoned run: %+v", runs)
	}
	// When the runner finally returns, its late end is not recorded again.
	letItReturn()
	if runs := finishedRuns(t, s, task.ID); len(runs) != 1 || runs[0].Outcome != tasks.OutcomeInterrupted {
		t.Errorf("the late end overwrote the log: %+v", runs)
	}
	ends := 0
	for _, e := range rec.Events() {
		if e.Type == events.SchedulerTaskEnd {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d end events, want 1", ends)
	}
}

func TestRunNow(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{}
	s, rec := newScheduler(t, r, Options{})
	task, err := s.Create(ctx, NewTask{Prompt: "p", ScheduleType: tasks.Cron, ScheduleValue: "0 9 * * *", TimeZone: "Europe/Paris",
		Tools: []string{"code_interpreter"}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.RunNow(ctx, task.ID[:6])
	if err != nil || !run.Success || !run.Manual || run.DeniedTools[0] != "code_interpreter" {
		t.Fatalf("run now: %+v %v", run, err)
	}
	got, _ := s.Get(ctx, task.ID)
	if !got.NextRun.Equal(task.NextRun) || got.LastRun.IsZero() {
		t.Errorf("run now changed the schedule: %v -> %v", task.NextRun, got.NextRun)
	}
	if types := rec.Types(); len(types) != 2 || types[0] != events.SchedulerTaskStart || types[1] != events.SchedulerTaskEnd {
		t.Errorf("events %v", types)
	}
	// A user's Ctrl-C stops the run and its end is still logged.
	r.fn = func(ctx context.Context, _ Task, _ tools.Confirmer) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	run, err = s.RunNow(cctx, task.ID)
	if err != nil || run.Success || !strings.HasPrefix(run.Error, "stopped") {
		t.Errorf("interrupted run now: %+v %v", run, err)
	}

	bare := New(s.Store().DB(), Options{})
	if _, err := bare.RunNow(ctx, task.ID); !errors.Is(err, ErrNoRunner) {
		t.Errorf("run without a runner: %v", err)
	}
	if err := bare.Serve(ctx); !errors.Is(err, ErrNoRunner) {
		t.Errorf("serve without a runner: %v", err)
	}
}

func TestRunnerPanicIsARunFailure(t *testing.T) {
	r := &fakeRunner{fn: func(context.Context, Task, tools.Confirmer) (string, error) { panic("boom") }}
	s, _ := newScheduler(t, r, Options{})
	task := createDue(t, s, NewTask{}, 61*time.Second)
	run, err := s.RunNow(context.Background(), task.ID)
	if err != nil || run.Success || !strings.Contains(run.Error, "boom") {
		t.Errorf("panicking runner: %+v %v", run, err)
	}
}

func TestCreateValidatesNamesAndStoresNothingWhenWrong(t *testing.T) {
	ctx := context.Background()
	var seen []string
	s, _ := newScheduler(t, &fakeRunner{}, Options{Validate: func(agent string, names []string) error {
		seen = append([]string{agent}, names...)
		if agent != "simple" && agent != "orchestrator" {
			return fmt.Errorf("unknown agent %q", agent)
		}
		for _, n := range names {
			if n != "calculator" {
				return fmt.Errorf("unknown tool %q", n)
			}
		}
		return nil
	}})
	base := NewTask{Prompt: "p", ScheduleType: tasks.Interval, ScheduleValue: "60", TimeZone: "UTC"}
	bad := []NewTask{base, base, base}
	bad[0].Agent = "wizard"
	bad[1].Tools = []string{"calculator", "rm_rf"}
	bad[2].ScheduleValue = "-1"
	for _, nt := range bad {
		if _, err := s.Create(ctx, nt); err == nil {
			t.Errorf("created %+v", nt)
		}
	}
	if list, _ := s.List(ctx, ""); len(list) != 0 {
		t.Errorf("%d tasks stored from invalid requests", len(list))
	}
	ok := base
	ok.Tools = []string{" calculator "}
	if _, err := s.Create(ctx, ok); err != nil || strings.Join(seen, ",") != "orchestrator,calculator" {
		t.Errorf("valid task: %v (validator saw %v)", err, seen)
	}
}

func TestWatchNotifies(t *testing.T) {
	ctx := context.Background()
	s, _ := newScheduler(t, &fakeRunner{}, Options{})
	c, stop := s.Watch()
	defer stop()
	task, _ := s.Create(ctx, NewTask{Prompt: "p", ScheduleType: tasks.Interval, ScheduleValue: "60", TimeZone: "UTC"})
	for _, step := range []func(){
		func() {},
		func() { s.Pause(ctx, task.ID) },
		func() { s.Resume(ctx, task.ID) },
		func() { s.RunNow(ctx, task.ID) },
		func() { s.Cancel(ctx, task.ID) },
	} {
		step()
		select {
		case <-c:
		case <-time.After(time.Second):
			t.Fatal("no change notification")
		}
	}
}

func TestExplainAndRelative(t *testing.T) {
	from := time.Date(2025, 6, 6, 8, 0, 0, 0, time.UTC)
	words, runs, err := Explain(tasks.Cron, "0 9 * * 1-5", "Europe/Paris", from, 5)
	if err != nil || words != "cron 0 9 * * 1-5 (Europe/Paris)" || len(runs) != 5 || runs[0].Format("Mon 15:04 MST") != "Mon 09:00 CEST" {
		t.Errorf("Explain: %q %v %v", words, runs, err)
	}
	if _, _, err := Explain(tasks.Once, "2025-06-01T09:00:00Z", "UTC", from, 5); err == nil {
		t.Error("Explain accepted a past once time")
	}
	now := from
	cases := map[time.Duration]string{
		0: "now", 45 * time.Second: "in 45s", -90 * time.Second: "1m30s ago", 2 * time.Hour: "in 2h",
		-(2*time.Hour + 10*time.Minute): "2h10m ago", 76 * time.Hour: "in 3d4h", 59*time.Minute + 59*time.Second: "in 1h",
		4*time.Minute + 30*time.Second: "in 4m30s", 89*time.Minute + 59*time.Second: "in 1h30m", 300 * time.Millisecond: "now",
		-(49*time.Hour + 40*time.Minute): "2d2h ago",
	}
	for d, want := range cases {
		if got := Relative(now.Add(d), now); got != want {
			t.Errorf("Relative(%v) = %q, want %q", d, got, want)
		}
	}
	if Relative(time.Time{}, now) != "-" {
		t.Error("zero time")
	}
}
