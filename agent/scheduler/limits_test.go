package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// stuckServer is a fake Ollama whose model starts answering "stuck" and
// then never finishes (a model stuck mid-stream), and answers anything
// else at once.
func stuckServer(t *testing.T) (*ot.Server, tasks.Server) {
	srv := ot.New(t)
	srv.Model(testModel, engine.CapCompletion)
	srv.On(et.UserSays("stuck")).Reply(et.Text("Let me think about"), et.Hang())
	srv.Default(et.Text("quick answer"))
	return srv, tasks.Server{Engine: "ollama", Host: srv.URL, Model: testModel}
}

// A model stuck mid-stream is cut by the run's time limit, and another
// task that falls due meanwhile runs in the other slot without waiting.
func TestStuckRunIsCutByItsLimitWhileOthersRun(t *testing.T) {
	_, server := stuckServer(t)
	s, _ := newScheduler(t, chatRunner(), Options{MaxConcurrent: 2, Server: server, Reach: versionReach,
		WatchInterval: 20 * time.Millisecond})
	stuck := createDue(t, s, NewTask{Prompt: "stuck", Timeout: 3 * time.Second, Server: server}, 61*time.Second)
	serve(t, s)
	waitFor(t, "the stuck run to start", func() bool {
		got, _ := s.Get(context.Background(), stuck.ID)
		return got.Running
	})
	quick, err := s.Create(context.Background(), NewTask{Prompt: "quick", ScheduleType: tasks.Once, TimeZone: "UTC",
		ScheduleValue: time.Now().Add(200 * time.Millisecond).Format(time.RFC3339Nano)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both runs to end", func() bool {
		return len(finishedRuns(t, s, stuck.ID)) == 1 && len(finishedRuns(t, s, quick.ID)) == 1
	})
	st, q := finishedRuns(t, s, stuck.ID)[0], finishedRuns(t, s, quick.ID)[0]
	if st.Outcome != tasks.OutcomeTimedOut || st.Success || !strings.Contains(st.Error, "timed out: the run was stopped after 3s, its time limit (the task's own") {
		t.Errorf("stuck run: %+v", st)
	}
	if !q.Success || q.Result != "quick answer" {
		t.Errorf("quick run: %+v", q)
	}
	if !q.FinishedAt.Before(st.FinishedAt) || !q.StartedAt.After(st.StartedAt) {
		t.Errorf("the quick task waited for the stuck one: stuck %v–%v, quick %v–%v", st.StartedAt, st.FinishedAt, q.StartedAt, q.FinishedAt)
	}
	if got, _ := s.Get(context.Background(), stuck.ID); got.Running || got.LastOutcome != tasks.OutcomeTimedOut || got.Status != tasks.Active {
		t.Errorf("stuck task after its limit: %+v", got)
	}
}

// With a single run slot, a runner that ignores its cancellation gives
// the slot back shortly after its limit: the next task runs, and the
// stuck run is logged as timed out and left behind.
func TestStuckRunnerGivesItsOnlySlotBack(t *testing.T) {
	old := abandonAfter
	abandonAfter = 100 * time.Millisecond
	defer func() { abandonAfter = old }()
	release := make(chan struct{})
	returned := make(chan struct{})
	r := &fakeRunner{fn: func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		if task.Prompt == "stuck" {
			defer close(returned)
			<-release // deaf to ctx
			return "late", nil
		}
		return "ok", nil
	}}
	s, _ := newScheduler(t, r, Options{MaxConcurrent: 1, Timeout: 300 * time.Millisecond})
	defer func() {
		close(release)
		<-returned
	}()
	stuck := createDue(t, s, NewTask{Prompt: "stuck"}, 62*time.Second)
	next := createDue(t, s, NewTask{Prompt: "next"}, 61*time.Second)
	serve(t, s)
	waitFor(t, "the next task to run", func() bool { return len(finishedRuns(t, s, next.ID)) == 1 })
	runs := finishedRuns(t, s, stuck.ID)
	if len(runs) != 1 || runs[0].Outcome != tasks.OutcomeTimedOut || !strings.Contains(runs[0].Error, "left behind") ||
		!strings.Contains(runs[0].Error, "(the default;") {
		t.Fatalf("stuck run: %+v", runs)
	}
	if n := finishedRuns(t, s, next.ID)[0]; !n.Success || n.StartedAt.Before(runs[0].FinishedAt) {
		t.Errorf("next run %+v, stuck run ended %v", n, runs[0].FinishedAt)
	}
	select {
	case <-returned:
		t.Fatal("the stuck runner returned: the test proves nothing")
	default:
	}
}

// Cancelling a task from another process stops its run in the process
// that runs it, within about its watch interval, and the run is logged as
// cancelled rather than cut by its (long) limit.
func TestCancelFromAnotherProcessStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	srv, server := stuckServer(t)
	path := filepath.Join(t.TempDir(), "jarvis.db")
	id := seedTasks(t, path, NewTask{Prompt: "stuck", Server: server, Timeout: 10 * time.Minute})[0]
	h := startHelper(t, path, "scheduler start", srv.URL)
	poll(t, path, "the run to start", func(st *tasks.Store) bool {
		task, _ := st.Get(id)
		return task.Running
	})

	// This test process is the other process: it cancels through its own
	// handle on the file, as `jarvis scheduler cancel` does.
	db := openDB(t, path)
	st := tasks.New(db)
	cancelled, err := st.Cancel(id)
	if err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	if !cancelled.Running || cancelled.RunningIn == nil || cancelled.RunningIn.PID != h.cmd.Process.Pid {
		t.Errorf("the cancelled task does not say it was running in the helper: %+v", cancelled)
	}
	db.Close()
	var runs []tasks.Run
	poll(t, path, "the run to stop", func(st *tasks.Store) bool {
		runs = logsOf(st, id)
		return len(runs) == 1 && runs[0].Finished()
	})
	r := runs[0]
	if r.Outcome != tasks.OutcomeCancelled || r.Error != stopCancelled.text || r.FinishedAt.Before(asked) {
		t.Errorf("run after the cancel: %+v (cancel asked at %v)", r, asked)
	}
	if r.FinishedAt.Sub(r.StartedAt) > time.Minute {
		t.Errorf("the run went on for %s", r.FinishedAt.Sub(r.StartedAt))
	}
	if r.Process.PID != h.cmd.Process.Pid || r.Process.Command != "scheduler start" {
		t.Errorf("the log names %s, not the helper", r.Process)
	}
}

// Pausing a running task stops its run; running a paused task by hand is
// not stopped for being paused.
func TestPauseStopsARunButNotAManualRunOfAPausedTask(t *testing.T) {
	ctx := context.Background()
	started := make(chan string, 4)
	r := &fakeRunner{fn: func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		started <- task.ID
		if task.Prompt == "long" {
			<-ctx.Done()
			return "", ctx.Err()
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(300 * time.Millisecond): // several watch intervals
			return "ran while paused", nil
		}
	}}
	path := filepath.Join(t.TempDir(), "jarvis.db")
	s := New(openDB(t, path), Options{Runner: r, WatchInterval: 20 * time.Millisecond})
	long := createDue(t, s, NewTask{Prompt: "long"}, 61*time.Second)
	serve(t, s)
	<-started
	// Paused through another handle on the file, as another process
	// would: the scheduler running it notices through the file.
	if _, err := tasks.New(openDB(t, path)).Pause(long.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the paused run's log", func() bool { return len(finishedRuns(t, s, long.ID)) == 1 })
	if run := finishedRuns(t, s, long.ID)[0]; run.Outcome != tasks.OutcomeCancelled || run.Error != stopPaused.text {
		t.Errorf("paused run: %+v", run)
	}

	other := createDue(t, s, NewTask{Prompt: "by hand"}, time.Second)
	if _, err := s.Pause(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	run, err := s.RunNow(ctx, other.ID)
	if err != nil || !run.Success || run.Result != "ran while paused" {
		t.Errorf("manual run of a paused task: %+v %v", run, err)
	}
}

// Cancelled and completed tasks cannot be run by hand.
func TestRunNowRefusesFinishedTasks(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{}
	s, _ := newScheduler(t, r, Options{})
	task := createDue(t, s, NewTask{}, time.Second)
	if _, err := s.Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	var se *tasks.StateError
	if _, err := s.RunNow(ctx, task.ID); err == nil || !strings.Contains(err.Error(), "is cancelled, so it cannot run again") {
		t.Errorf("run a cancelled task: %v", err)
	} else if !errors.As(err, &se) {
		t.Errorf("not a StateError: %T", err)
	}
	once, err := s.Create(ctx, NewTask{Prompt: "p", ScheduleType: tasks.Once, TimeZone: "UTC",
		ScheduleValue: time.Now().Add(100 * time.Millisecond).Format(time.RFC3339Nano)})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	waitFor(t, "the once task to complete", func() bool {
		got, _ := s.Get(ctx, once.ID)
		return got.Status == tasks.Completed
	})
	if _, err := s.RunNow(ctx, once.ID); err == nil || !strings.Contains(err.Error(), "has completed") {
		t.Errorf("run a completed task: %v", err)
	}
	if r.count("") != 1 {
		t.Errorf("the runner ran %d times, want once (the scheduled run)", r.count(""))
	}
}

// A runner that picks the model itself reports it, and the log names it.
func TestReportedModelIsLogged(t *testing.T) {
	server := tasks.Server{Engine: "ollama", Host: "http://gpu:11434"}
	r := &fakeRunner{fn: func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		if task.Server != server {
			t.Errorf("the runner got server %v, want %v", task.Server, server)
		}
		ReportModel(ctx, "llama3.1:8b")
		return "ok", nil
	}}
	s, _ := newScheduler(t, r, Options{Server: server, Command: "tui"})
	task := createDue(t, s, NewTask{}, time.Second) // made without a server: runs on the scheduler's
	run, err := s.RunNow(context.Background(), task.ID)
	if err != nil || run.Server.Model != "llama3.1:8b" || run.Server.Host != server.Host || run.Process.Command != "tui" {
		t.Errorf("run %+v %v", run, err)
	}
}
