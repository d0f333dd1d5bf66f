package scheduler

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
)

// TestHelperBlockingRun is a scheduler process whose runs never end: the
// test below kills it with SIGKILL in the middle of one.
func TestHelperBlockingRun(t *testing.T) {
	path, started := os.Getenv("JARVIS_CRASH_DB"), os.Getenv("JARVIS_CRASH_STARTED")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := store.Open(path, "crash helper")
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, Options{Runner: RunnerFunc(func(ctx context.Context, task Task, _ tools.Confirmer) (string, error) {
		// Written whole, then renamed into place: the test reads the id as
		// soon as the file exists and kills this process at once.
		os.WriteFile(started+".tmp", []byte(task.ID), 0o600)
		os.Rename(started+".tmp", started)
		<-ctx.Done() // runs until killed
		return "", ctx.Err()
	})})
	s.Serve(context.Background())
}

// TestKilledDuringARunLosesNothing kills a scheduler process with SIGKILL
// while a task runs, then checks that the database opens and passes
// bbolt's consistency check, that every task is intact, and that the next
// scheduler records the run as interrupted. The slot is not run again: a
// slot runs at most once, and the task goes on at its next run.
func TestKilledDuringARunLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a process")
	}
	dir := t.TempDir()
	path, started := filepath.Join(dir, "jarvis.db"), filepath.Join(dir, "started")
	ids := seedDue(t, path, 3)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBlockingRun$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JARVIS_CRASH_DB="+path, "JARVIS_CRASH_STARTED="+started)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper never started a run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// The file opens and passes bbolt's consistency check.
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("database does not open after SIGKILL: %v", err)
	}
	if err := bdb.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("database damaged after SIGKILL: %v", err)
	}
	bdb.Close()
	db := openDB(t, path)
	st := tasks.New(db)
	for _, id := range ids {
		if _, err := st.Get(id); err != nil {
			t.Fatalf("task %s lost: %v", id, err)
		}
	}
	killed, _ := os.ReadFile(started)

	// The next scheduler finds the abandoned run and logs it.
	r := &fakeRunner{}
	s := New(db, Options{Runner: r})
	serve(t, s)
	var runs []tasks.Run
	waitFor(t, "the killed run to be logged as interrupted", func() bool {
		_, runs, _ = st.Logs(string(killed), 0)
		return len(runs) == 1 && runs[0].Outcome == tasks.OutcomeInterrupted && strings.Contains(runs[0].Error, "pid")
	})
	task, err := st.Get(string(killed))
	if err != nil || task.Running || task.Status != tasks.Active || !task.NextRun.After(time.Now()) {
		t.Fatalf("the killed task after recovery: %+v %v", task, err)
	}
	if r.count(string(killed)) != 0 {
		t.Fatal("the interrupted slot ran again")
	}
}

// A run left by a process that dies while this scheduler serves is found
// without a restart, and the task runs again at its next slot.
func TestAbandonedRunFoundWhileServing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	ids := seedDue(t, path, 1)
	db := openDB(t, path)
	st := tasks.New(db)
	r := &fakeRunner{}
	s := New(db, Options{Runner: r, WatchInterval: 20 * time.Millisecond, RecoverInterval: 50 * time.Millisecond})
	serve(t, s)
	waitFor(t, "the first run", func() bool { return r.count(ids[0]) == 1 })

	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	owner := strings.ReplaceAll(host, "/", "_") + "/" + strconv.Itoa(dead.Process.Pid) + "/00000000"
	if _, err := st.ClaimManual(ids[0], time.Now(), tasks.Claimant{Owner: owner}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead process's run to be recorded as interrupted", func() bool {
		task, err := st.Get(ids[0])
		return err == nil && !task.Running && task.LastOutcome == tasks.OutcomeInterrupted
	})
}
