package command

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// gone reports whether pid has ended: no such process, or a zombie
// waiting to be reaped (dead, but init may be slow to collect it, or may
// not collect it at all in a container).
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// waitGone waits (bounded) for pid to end: the kill is sent before Execute
// returns, but the kernel tears a process down asynchronously.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the helper wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := helperSpec(t, "spawn", pidFile, "sleep")
	s.Timeout = 1
	off := false
	s.Confirm = &off
	c := mustCompile(t, s)
	// Through the executor, as a model's call runs: the spec's timeout.
	exec, err := tools.NewExecutor([]tools.Tool{New(c)}, tools.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), tools.Call{Name: "probe", Arguments: "{}"})
	if r.Success || r.Status != tools.StatusTimeout {
		t.Fatalf("%+v, want a timeout", r)
	}
	// The executor answers at the deadline; the tool kills the group
	// right after. The grandchild (sleeping, holding stdout) dies too.
	waitGone(t, readPid(t, pidFile))

	// Called directly with a deadline, Execute returns only once the
	// group is killed, and says why it stopped.
	pidFile2 := filepath.Join(t.TempDir(), "pid")
	c = mustCompile(t, helperSpec(t, "spawn", pidFile2, "sleep"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r = New(c).Execute(ctx, nil)
	if r.Status != tools.StatusTimeout || !strings.Contains(r.Content, "killed") {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, pidFile2))
}

func TestWhatTheProgramLeavesRunningIsKilledWhenItExits(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := mustCompile(t, helperSpec(t, "spawn", pidFile, "exit"))
	// The grandchild holds stdout open; the call must still end.
	r := call(t, c, nil)
	if !r.Success || r.Content != "started" {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestCancellingTheRunKillsTheProgram(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := mustCompile(t, helperSpec(t, "spawn", pidFile, "sleep"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result)
	go func() { done <- New(c).Execute(ctx, nil) }()
	// Cancel once the program is up (its pid is written: the file exists
	// a moment before).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(pidFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.Status != tools.StatusCancelled {
		t.Fatalf("%+v", r)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestCPULimitKillsASpinningProgram(t *testing.T) {
	s := helperSpec(t, "spin")
	s.CPUSeconds = 1
	r := call(t, mustCompile(t, s), nil)
	if r.Success || !strings.Contains(r.Content, "killed by signal") {
		t.Fatalf("%+v", r)
	}
}

func TestFileSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	s := helperSpec(t, "write", path, "2")
	s.MaxFileSizeMB = 1
	call(t, mustCompile(t, s), nil)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 1<<20 {
		t.Fatalf("the program wrote %d bytes past a 1 MiB limit", info.Size())
	}
}
