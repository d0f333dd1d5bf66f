package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// splitCommand splits an example command line on spaces outside double
// quotes (all the examples need).
func splitCommand(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// Every example in `scheduler create --help` works whenever it is read:
// none uses a date that has passed.
func TestSchedulerCreateExamplesWork(t *testing.T) {
	a := &cmdline{}
	cmd := a.schedCreateCommand()
	db := filepath.Join(t.TempDir(), "jarvis.db")
	n := 0
	for _, line := range strings.Split(cmd.Example, "\n") {
		args := splitCommand(strings.TrimSpace(line))
		if len(args) < 3 || args[0] != "jarvis" {
			continue
		}
		n++
		out, errOut, code := runCLI(t, "", append([]string{"--db", db}, args[1:]...)...)
		if code != ExitOK || !createdRe.MatchString(out) {
			t.Errorf("example %q: code %d out %q err %q", line, code, out, errOut)
		}
	}
	if n != 3 {
		t.Errorf("found %d examples, want 3", n)
	}
}

func TestSchedulerCreateAgentTimeoutAndServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := sched(t, db, "create", "p", "--type", "interval", "--value", "1h", "--tools", "calculator", "--timeout", "5m")
	m := createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil || m[6] != "orchestrator" || m[7] != "5m" || !strings.HasPrefix(m[5], "ollama http://") {
		t.Errorf("tools without an agent: %d %q %q", code, out, errOut)
	}
	if strings.Contains(errOut, "simple agent") {
		t.Errorf("warned about an agent not given: %q", errOut)
	}

	out, errOut, code = sched(t, db, "create", "p", "--type", "interval", "--value", "1h", "--tools", "calculator", "--agent", "simple")
	m = createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil || m[6] != "simple" || m[7] != "10m (default)" ||
		!strings.Contains(errOut, "Note: the simple agent never calls tools, so calculator will not be used") {
		t.Errorf("simple with tools: %d %q %q", code, out, errOut)
	}

	out, _, _ = sched(t, db, "create", "p", "--type", "once", "--value", "+2h", "--timeout", "90s", "--json", "--model", "qwen3:8b")
	var task tasks.Task
	if err := json.Unmarshal([]byte(out), &task); err != nil || task.Timeout != 90*time.Second || task.Server.Model != "qwen3:8b" ||
		task.Server.Engine != "ollama" || time.Until(task.NextRun) < 119*time.Minute || time.Until(task.NextRun) > 2*time.Hour {
		t.Errorf("once +2h --json: %q %v", out, err)
	}

	for _, bad := range [][]string{{"--timeout", "1ms"}, {"--timeout", "soon"}} {
		_, errOut, code := sched(t, db, append([]string{"create", "p", "--type", "interval", "--value", "1h"}, bad...)...)
		if code != ExitUsage || errOut == "" {
			t.Errorf("%v: code %d err %q", bad, code, errOut)
		}
	}
}

// Tasks made before tasks recorded their server are shown as running
// anywhere, and the list says who serves the database.
func TestSchedulerListShowsServersAndWhoServes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	h, err := store.Open(db, "test")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := tasks.New(h).Create(tasks.NewTask{Prompt: "old task", ScheduleType: tasks.Interval, ScheduleValue: "1h", TimeZone: "UTC"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	me := tasks.ThisProcess("scheduler start")
	err = tasks.New(h).Beat(tasks.Peer{ID: "x", Process: me, Dedicated: true, Started: time.Now(), Beat: time.Now(), Expires: time.Now().Add(time.Minute)})
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := sched(t, db, "list")
	if code != ExitOK || !strings.Contains(out, legacy.ID) || !strings.Contains(out, "any*") ||
		!strings.Contains(out, "* any: the task was created before tasks recorded their server") {
		t.Errorf("legacy task: %q", out)
	}
	if want := "Served by scheduler start (pid " + strconv.Itoa(me.PID) + "), which owns the schedule."; !strings.Contains(out, want) {
		t.Errorf("list does not say %q:\n%s", want, out)
	}
	out, _, _ = sched(t, db, "logs", legacy.ID)
	if !strings.Contains(out, "Server: none recorded (it runs on the server of whichever jarvis process claims it)") {
		t.Errorf("logs of a legacy task: %q", out)
	}
}

// `scheduler run` refuses cancelled and completed tasks with exit 1.
func TestSchedulerRunRefusesFinishedTasks(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	id := createTask(t, db, "p", "--type", "interval", "--value", "1h")
	sched(t, db, "cancel", id)
	out, errOut, code := sched(t, db, "run", id)
	if code != ExitFailed || out != "" || !strings.Contains(errOut, "is cancelled, so it cannot run again") {
		t.Errorf("run a cancelled task: %d %q %q", code, out, errOut)
	}

	h, err := store.Open(db, "test")
	if err != nil {
		t.Fatal(err)
	}
	st := tasks.New(h)
	once, _ := st.Create(tasks.NewTask{Prompt: "q", ScheduleType: tasks.Once, ScheduleValue: "+1m", TimeZone: "UTC"}, time.Now().Add(-time.Hour))
	c, err := st.ClaimDue(time.Now(), 1, tasks.Claimant{Owner: "test"})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	st.Finish(c[0], tasks.Finish{At: time.Now(), Success: true})
	h.Close()
	_, errOut, code = sched(t, db, "run", once.ID)
	if code != ExitFailed || !strings.Contains(errOut, "has completed: its one-time run is over") {
		t.Errorf("run a completed task: %d %q", code, errOut)
	}
}

// `scheduler cancel` of a task running in another process says a run was
// in progress, where, and that it stopped.
func TestSchedulerCancelReachesARunningRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	id := createTask(t, db, "watch the build", "--type", "interval", "--value", "1h")

	// The process running it: another handle on the file, as in another
	// process.
	h, err := store.Open(db, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	started := make(chan struct{})
	s := scheduler.New(h, scheduler.Options{Command: "scheduler start", WatchInterval: 50 * time.Millisecond,
		Runner: scheduler.RunnerFunc(func(ctx context.Context, _ scheduler.Task, _ tools.Confirmer) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		})})
	done := make(chan tasks.Run, 1)
	go func() {
		run, _ := s.RunNow(context.Background(), id)
		done <- run
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not start")
	}

	out, errOut, code := sched(t, db, "cancel", id)
	want := fmt.Sprintf("Task %s cancelled.\nA run was in progress in scheduler start (pid %d); it was asked to stop.\nIt stopped: cancelled.\n", id, s.Process().PID)
	if code != ExitOK || out != want {
		t.Errorf("cancel: %d %q (err %q), want %q", code, out, errOut, want)
	}
	select {
	case run := <-done:
		if run.Outcome != tasks.OutcomeCancelled {
			t.Errorf("run %+v", run)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	// Cancelling again changes nothing and stops nothing.
	if out, _, code := sched(t, db, "cancel", id); code != ExitOK || out != "Task "+id+" cancelled.\n" {
		t.Errorf("second cancel: %d %q", code, out)
	}
}

// A task runs on the server it was created for, not on the one the
// running process is configured for, and its log names both the process
// and that server.
func TestSchedulerRunUsesTheTasksServer(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("say hi")).Reply(et.Text("hi from the task's server"))
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, errOut, code := runCLI(t, "", "--db", db, "--host", srv.URL, "--model", "qwen3:8b",
		"scheduler", "create", "say hi", "--type", "interval", "--value", "1h")
	m := createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil || m[5] != "ollama "+srv.URL+" · qwen3:8b" {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	id := m[1]

	// This process is configured for a server that is down.
	out, errOut, code = runCLI(t, "", "--db", db, "--host", ot.ClosedURL(t), "scheduler", "run", id)
	if code != ExitOK || out != "hi from the task's server\n" || !strings.Contains(errOut, "Running task "+id+" on ollama "+srv.URL) {
		t.Fatalf("run: %d %q %q", code, out, errOut)
	}
	out, _, _ = sched(t, db, "logs", id)
	want := fmt.Sprintf("  by scheduler run (pid %d) on ollama %s · qwen3:8b\n", os.Getpid(), srv.URL)
	if !strings.Contains(out, want) {
		t.Errorf("logs lack %q:\n%s", want, out)
	}
}
