package scheduler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

const testModel = "qwen3:8b"

// chatRunner runs a task the way the real runner does as far as the server
// is concerned: one streamed chat with the task's prompt, on the server
// the scheduler hands it.
func chatRunner() Runner {
	return RunnerFunc(func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		eng, err := ollama.New(task.Server.Host)
		if err != nil {
			return "", err
		}
		model := task.Server.Model
		if model == "" {
			model = testModel
			ReportModel(ctx, model)
		}
		resp, err := eng.Chat(ctx, engine.ChatRequest{Model: model,
			Messages: []engine.Message{{Role: engine.RoleUser, Content: task.Prompt}}}, func(engine.Chunk) {})
		return resp.Message.Content, err
	})
}

// versionReach is the reachability check the CLI uses: the server's version.
func versionReach(ctx context.Context, srv tasks.Server) error {
	eng, err := ollama.New(srv.Host)
	if err != nil {
		return err
	}
	_, err = eng.Version(ctx)
	return err
}

// TestHelperServe is a jarvis-like scheduler process for the tests below,
// configured through the environment; it does nothing in a normal run.
// It serves until the stop file appears.
func TestHelperServe(t *testing.T) {
	path := os.Getenv("JARVIS_SERVE_DB")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := store.Open(path, "helper")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	skip, _ := time.ParseDuration(os.Getenv("JARVIS_SERVE_SKIP"))
	s := New(db, Options{
		Command: os.Getenv("JARVIS_SERVE_COMMAND"), Dedicated: os.Getenv("JARVIS_SERVE_DEDICATED") == "1",
		Server: tasks.Server{Engine: "ollama", Host: os.Getenv("JARVIS_SERVE_HOST"), Model: testModel},
		Reach:  versionReach, Runner: chatRunner(), MaxConcurrent: 4, SkipAfter: skip,
		WatchInterval: 100 * time.Millisecond, ReachTTL: 300 * time.Millisecond, HeartbeatInterval: time.Second,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := os.Getenv("JARVIS_SERVE_STOP")
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(stop); err == nil {
				cancel()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if err := s.Serve(ctx); err != nil {
		t.Fatal(err)
	}
}

// helper is a scheduler process started by a test.
type helper struct {
	cmd    *exec.Cmd
	out    *strings.Builder
	stop   string
	waited bool
}

// startHelper starts TestHelperServe as command, configured for host.
func startHelper(t *testing.T, path, command, host string, env ...string) *helper {
	t.Helper()
	h := &helper{out: &strings.Builder{}, stop: filepath.Join(t.TempDir(), "stop")}
	h.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperServe$", "-test.count=1")
	h.cmd.Env = append(os.Environ(), append([]string{"JARVIS_SERVE_DB=" + path, "JARVIS_SERVE_COMMAND=" + command,
		"JARVIS_SERVE_HOST=" + host, "JARVIS_SERVE_STOP=" + h.stop}, env...)...)
	h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.wait(t)
		if t.Failed() {
			t.Logf("%s output:\n%s", command, h.out.String())
		}
	})
	return h
}

// wait stops the helper and checks it ended cleanly.
func (h *helper) wait(t *testing.T) {
	t.Helper()
	if h.waited {
		return
	}
	h.waited = true
	os.WriteFile(h.stop, nil, 0o600)
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("helper process: %v", err)
		}
	case <-time.After(20 * time.Second):
		h.cmd.Process.Kill()
		t.Errorf("helper process did not stop")
	}
}

// poll opens the database now and then (releasing it in between, so the
// helpers can write) until cond holds, failing after a generous bound.
func poll(t *testing.T, path, what string, cond func(st *tasks.Store) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := store.Open(path, "test")
		if err == nil {
			ok := cond(tasks.New(db))
			db.Close()
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(400 * time.Millisecond)
	}
}

// seedTasks stores tasks due now through a handle that is closed at once.
func seedTasks(t *testing.T, path string, nts ...NewTask) []string {
	t.Helper()
	db, err := store.Open(path, "seed")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := tasks.New(db)
	var ids []string
	for _, nt := range nts {
		if nt.ScheduleType == "" {
			nt.ScheduleType, nt.ScheduleValue = tasks.Interval, "3600"
		}
		nt.TimeZone = "UTC"
		task, err := st.Create(nt, time.Now().Add(-time.Hour-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	return ids
}

// createNow stores tasks as of now, through a handle closed at once. Like
// tasks made before tasks recorded their server, they name none.
func createNow(t *testing.T, path string, nts ...NewTask) []string {
	t.Helper()
	db, err := store.Open(path, "seed")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	for _, nt := range nts {
		nt.TimeZone = "UTC"
		task, err := tasks.New(db).Create(nt, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	return ids
}

func logsOf(st *tasks.Store, id string) []tasks.Run {
	_, runs, _ := st.Logs(id, 0)
	return runs
}

// Two jarvis processes share a database; one is configured for a server
// that answers, the other for one that is down. Tasks made before tasks
// recorded their server run on the claiming process's server, so every one
// of them must go to the process that can reach its server, and each run's
// log must name that process and server. A task recorded for the server
// that is down is run by neither: its slot is logged as skipped once, and
// the task moves on to its next slot.
func TestRunsGoToTheProcessThatReachesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	up := ot.New(t)
	up.Model(testModel, engine.CapCompletion, engine.CapTools)
	up.Default(et.Text("done on the server that answers"))
	down := ot.ClosedURL(t)

	path := filepath.Join(t.TempDir(), "jarvis.db")
	unreachable := seedTasks(t, path, NewTask{Prompt: "for the server that is down",
		Server: tasks.Server{Engine: "ollama", Host: down, Model: testModel}})[0]

	// Both serve before the tasks fall due, so they compete for them.
	good := startHelper(t, path, "helper up", up.URL, "JARVIS_SERVE_SKIP=2s")
	bad := startHelper(t, path, "helper down", down, "JARVIS_SERVE_SKIP=2s")
	poll(t, path, "both helpers to serve", func(st *tasks.Store) bool {
		peers, _ := st.Peers()
		return len(peers) == 2
	})
	var legacy []NewTask
	at := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	for i := range 4 {
		legacy = append(legacy, NewTask{Prompt: fmt.Sprintf("legacy task %d", i), ScheduleType: tasks.Once, ScheduleValue: at})
	}
	ids := createNow(t, path, legacy...)

	poll(t, path, "every task to have a finished run", func(st *tasks.Store) bool {
		for _, id := range append([]string{unreachable}, ids...) {
			runs := logsOf(st, id)
			if len(runs) == 0 || !runs[0].Finished() {
				return false
			}
		}
		return true
	})
	// Room for a wrong second skip (both processes give up on the same
	// slot) to show before the helpers stop.
	time.Sleep(2 * time.Second)
	good.wait(t)
	bad.wait(t)

	db := openDB(t, path)
	st := tasks.New(db)
	for _, id := range ids {
		runs := logsOf(st, id)
		if len(runs) != 1 {
			t.Errorf("task %s ran %d times", id, len(runs))
			continue
		}
		r := runs[0]
		if !r.Success || r.Result != "done on the server that answers" {
			t.Errorf("task %s: %+v", id, r)
		}
		if r.Process.PID != good.cmd.Process.Pid || r.Process.Command != "helper up" {
			t.Errorf("task %s was run by %s, want helper up (pid %d)", id, r.Process, good.cmd.Process.Pid)
		}
		if r.Server.Host != up.URL || r.Server.Engine != "ollama" || r.Server.Model != testModel {
			t.Errorf("task %s ran on %s, want %s", id, r.Server, up.URL)
		}
	}
	if n := len(up.Chats()); n != len(ids) {
		t.Errorf("the server that answers got %d chats, want %d", n, len(ids))
	}

	runs := logsOf(st, unreachable)
	if len(runs) != 1 {
		t.Fatalf("the unreachable task's slot was logged %d times, want once: %+v", len(runs), runs)
	}
	r := runs[0]
	if r.Outcome != tasks.OutcomeSkipped || r.Success || !strings.Contains(r.Error, "could reach "+"ollama "+down) ||
		r.Server.Host != down || !strings.HasPrefix(r.Process.Command, "helper ") {
		t.Errorf("skipped run: %+v", r)
	}
	task, _ := st.Get(unreachable)
	if task.Status != tasks.Active || task.Running || !task.NextRun.After(time.Now()) || task.LastOutcome != tasks.OutcomeSkipped {
		t.Errorf("after the skip the task should wait for its next slot: %+v", task)
	}
}

// A scheduler that cannot reach a task's server leaves it alone until the
// server answers, then runs it; without a Reach check every server is
// taken as reachable.
func TestUnreachableServerIsLeftUntilItAnswers(t *testing.T) {
	srv := tasks.Server{Engine: "ollama", Host: "http://gpu:11434"}
	var reachable atomic.Bool
	r := &fakeRunner{}
	s, _ := newScheduler(t, r, Options{SkipAfter: -1, ReachTTL: 50 * time.Millisecond, WatchInterval: 20 * time.Millisecond,
		Reach: func(ctx context.Context, got tasks.Server) error {
			if got != srv {
				return fmt.Errorf("checked %v, want the task's server %v", got, srv)
			}
			if !reachable.Load() {
				return &engine.UnreachableError{Host: got.Host, Err: fmt.Errorf("connection refused")}
			}
			return nil
		}})
	task := createDue(t, s, NewTask{Server: srv}, 61*time.Second)
	serve(t, s)
	time.Sleep(300 * time.Millisecond)
	if r.count(task.ID) != 0 {
		t.Fatal("ran a task whose server cannot be reached")
	}
	if got, _ := s.Get(context.Background(), task.ID); got.Running || got.LastOutcome != tasks.OutcomeNone {
		t.Fatalf("the task was touched: %+v", got)
	}
	reachable.Store(true)
	waitFor(t, "the run once the server answers", func() bool { return len(finishedRuns(t, s, task.ID)) == 1 })
	if run := finishedRuns(t, s, task.ID)[0]; run.Server != srv {
		t.Errorf("run logged on %v, want %v", run.Server, srv)
	}
}

// A process that has just started does not give up on a server at once,
// however late the slot: it must itself have failed to reach it for
// SkipAfter.
func TestSkipWaitsForTheServerToStayDown(t *testing.T) {
	r := &fakeRunner{}
	s, rec := newScheduler(t, r, Options{SkipAfter: 400 * time.Millisecond, ReachTTL: 50 * time.Millisecond,
		WatchInterval: 20 * time.Millisecond, Server: tasks.Server{Engine: "ollama", Host: "http://down:1"},
		Reach: func(context.Context, tasks.Server) error { return fmt.Errorf("connection refused") }})
	task := createDue(t, s, NewTask{}, 3*time.Hour) // hours late, made before servers were recorded
	start := time.Now()
	serve(t, s)
	waitFor(t, "the skipped slot", func() bool { return len(finishedRuns(t, s, task.ID)) == 1 })
	run := finishedRuns(t, s, task.ID)[0]
	if run.FinishedAt.Sub(start) < 400*time.Millisecond {
		t.Errorf("skipped %s after starting, before the server had been down for SkipAfter", run.FinishedAt.Sub(start))
	}
	if run.Outcome != tasks.OutcomeSkipped || !strings.Contains(run.Error, "http://down:1") || !strings.Contains(run.Error, "connection refused") {
		t.Errorf("skipped run: %+v", run)
	}
	if r.count("") != 0 {
		t.Error("the runner was called for a skipped slot")
	}
	skips := func() int {
		n := 0
		for _, e := range rec.Events() {
			if e.Task != nil && e.Task.TaskID == task.ID && strings.HasPrefix(e.Task.Error, "skipped:") {
				n++
			}
		}
		return n
	}
	// The event follows the log row.
	waitFor(t, "the skip event", func() bool { return skips() >= 1 })
	time.Sleep(100 * time.Millisecond)
	if n := skips(); n != 1 {
		t.Errorf("%d skip events, want 1", n)
	}
}

// A process that cannot reach its server does not skip a task that
// records none while another live process reports reaching its own: that
// one is only busy, and runs the task when a slot frees. (Its report of
// what it reaches holds for three heartbeats: long enough here, on a
// loaded machine too, for the wait of twice SkipAfter.)
func TestNoSkipWhileABusyPeerCanServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	up := tasks.Server{Engine: "ollama", Host: "http://up:11434"}
	down := tasks.Server{Engine: "ollama", Host: "http://down:11434"}
	release := make(chan struct{})
	busy := &fakeRunner{fn: func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		if task.Prompt == "long" {
			<-release
		}
		return "ok", nil
	}}
	idle := &fakeRunner{}
	a := New(openDB(t, path), Options{Runner: busy, Command: "busy", Server: up, MaxConcurrent: 1, WatchInterval: 20 * time.Millisecond,
		HeartbeatInterval: 2 * time.Second, Reach: func(_ context.Context, s tasks.Server) error {
			if s != up {
				return fmt.Errorf("%s: connection refused", s.Host)
			}
			return nil
		}})
	b := New(openDB(t, path), Options{Runner: idle, Command: "down", Server: down, SkipAfter: 1500 * time.Millisecond,
		WatchInterval: 20 * time.Millisecond, HeartbeatInterval: 2 * time.Second,
		Reach: func(_ context.Context, s tasks.Server) error { return fmt.Errorf("%s: connection refused", s.Host) }})
	long := createDue(t, a, NewTask{Prompt: "long", Server: up}, 62*time.Second)
	legacy := createDue(t, a, NewTask{Prompt: "legacy"}, 61*time.Second)
	serve(t, a)
	waitFor(t, "the long run", func() bool { return busy.count(long.ID) == 1 })
	serve(t, b)
	time.Sleep(3 * time.Second) // twice SkipAfter
	close(release)
	waitForDB(t, "the legacy task's run", func() bool { return len(finishedRuns(t, a, legacy.ID)) == 1 })
	run := finishedRuns(t, a, legacy.ID)[0]
	if !run.Success || run.Process.Command != "busy" || run.Server != up || idle.count("") != 0 {
		t.Errorf("legacy run %+v (the down process ran %d)", run, idle.count(""))
	}
}
