package scheduler

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// seedDue stores n tasks, all due now, through a handle that is closed
// before the schedulers start.
func seedDue(t *testing.T, path string, n int) []string {
	t.Helper()
	db, err := store.Open(path, "seed")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := tasks.New(db)
	var ids []string
	for range n {
		task, err := st.Create(NewTask{Prompt: "p", ScheduleType: tasks.Interval, ScheduleValue: "3600", TimeZone: "UTC"},
			time.Now().Add(-time.Hour-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	return ids
}

func TestTwoSchedulersOneDatabaseNeverDoubleRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	ids := seedDue(t, path, 12)

	var mu sync.Mutex
	runs := map[string][]string{}
	runner := func(name string) Runner {
		return RunnerFunc(func(_ context.Context, task Task, _ tools.Confirmer) (string, error) {
			// Longer than store.IdleRelease, so a scheduler lets go of the
			// file while it runs and the other one gets its turn.
			time.Sleep(2 * store.IdleRelease)
			mu.Lock()
			runs[task.ID] = append(runs[task.ID], name)
			mu.Unlock()
			return "ok", nil
		})
	}
	// Two handles on one file lock each other exactly like two processes.
	a := New(openDB(t, path), Options{Runner: runner("a"), MaxConcurrent: 2, WatchInterval: 20 * time.Millisecond})
	b := New(openDB(t, path), Options{Runner: runner("b"), MaxConcurrent: 2, WatchInterval: 20 * time.Millisecond})
	serve(t, a)
	serve(t, b)
	waitFor(t, "every task to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs) == len(ids)
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	by := map[string]int{}
	for _, id := range ids {
		if len(runs[id]) != 1 {
			t.Errorf("task %s ran %d times (%v)", id, len(runs[id]), runs[id])
		}
		for _, who := range runs[id] {
			by[who]++
		}
	}
	if by["a"] == 0 || by["b"] == 0 {
		t.Errorf("runs per scheduler %v: the two did not compete", by)
	}
}

// TestHelperScheduler is a scheduler process for the test below; it does
// nothing in a normal test run.
func TestHelperScheduler(t *testing.T) {
	path, out := os.Getenv("JARVIS_SCHED_HELPER_DB"), os.Getenv("JARVIS_SCHED_HELPER_OUT")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := store.Open(path, "helper")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	s := New(db, Options{MaxConcurrent: 2, WatchInterval: 20 * time.Millisecond,
		Runner: RunnerFunc(func(_ context.Context, task Task, _ tools.Confirmer) (string, error) {
			time.Sleep(2 * store.IdleRelease)
			mu.Lock()
			defer mu.Unlock()
			_, err := f.WriteString(task.ID + " " + strconv.Itoa(os.Getpid()) + "\n")
			return "ok", err
		})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Stop once every task has run in one process or the other.
	want, _ := strconv.Atoi(os.Getenv("JARVIS_SCHED_HELPER_N"))
	go func() {
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") >= want {
				time.Sleep(500 * time.Millisecond) // room for a wrong second run to show
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := s.Serve(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTwoProcessesOneDatabaseNeverDoubleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	dir := t.TempDir()
	path, out := filepath.Join(dir, "jarvis.db"), filepath.Join(dir, "runs.txt")
	ids := seedDue(t, path, 12)

	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScheduler$", "-test.count=1")
		cmd.Env = append(os.Environ(), "JARVIS_SCHED_HELPER_DB="+path, "JARVIS_SCHED_HELPER_OUT="+out, "JARVIS_SCHED_HELPER_N="+strconv.Itoa(len(ids)))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Stdout = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper output:\n%s", stderr.String())
			}
		})
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	count := map[string]int{}
	byProcess := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, pid, _ := strings.Cut(sc.Text(), " ")
		count[id]++
		byProcess[pid]++
	}
	if len(byProcess) != 2 {
		t.Errorf("runs per process %v: the two did not compete", byProcess)
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Errorf("task %s ran %d times across the two processes", id, count[id])
		}
	}
	// Every run's end is in the log.
	db := openDB(t, path)
	st := tasks.New(db)
	for _, id := range ids {
		_, runs, err := st.Logs(id, 0)
		if err != nil || len(runs) != 1 || !runs[0].Success {
			t.Errorf("task %s log: %+v %v", id, runs, err)
		}
	}
}

func TestAbandonedRunsAreRecoveredAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	ids := seedDue(t, path, 2)
	db := openDB(t, path)
	st := tasks.New(db)

	// A process that has exited held the first run.
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	deadOwner := strings.ReplaceAll(host, "/", "_") + "/" + strconv.Itoa(dead.Process.Pid) + "/00000000"
	if _, err := st.ClaimManual(ids[0], time.Now(), tasks.Claimant{Owner: deadOwner}); err != nil {
		t.Fatal(err)
	}
	// Another machine holds the second: never judged from here.
	if _, err := st.ClaimManual(ids[1], time.Now(), tasks.Claimant{Owner: "elsewhere/1/00000000"}); err != nil {
		t.Fatal(err)
	}

	r := &fakeRunner{}
	s := New(db, Options{Runner: r})
	serve(t, s)
	waitFor(t, "the recovered task to run again", func() bool { return r.count(ids[0]) == 1 })

	_, runs, _ := st.Logs(ids[0], 0)
	if len(runs) != 2 || runs[1].Outcome != tasks.OutcomeInterrupted || !strings.Contains(runs[1].Error, "pid "+strconv.Itoa(dead.Process.Pid)) {
		t.Errorf("recovered log: %+v", runs)
	}
	other, _ := st.Get(ids[1])
	if !other.Running || r.count(ids[1]) != 0 {
		t.Errorf("a run held on another machine was touched: %+v", other)
	}
}
