//go:build unix

package code

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

func newTestREPL(t *testing.T, cfg Config) *REPL {
	t.Helper()
	needPython(t)
	r := NewREPL(cfg)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// replPid is the running interpreter's pid (0 when none).
func replPid(r *REPL) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p == nil {
		return 0
	}
	return r.p.pid()
}

func TestREPLKeepsStateAndEchoes(t *testing.T) {
	r := newTestREPL(t, testConfig())
	steps := []struct{ code, want string }{
		{"x = 41\nimport math\ndef double(n):\n    return 2 * n", "(no output)"},
		{"x + 1", "--- stdout ---\n42"},
		{"double(x)", "--- stdout ---\n82"},
		{"'text'", "--- stdout ---\n'text'"},
		{"math.sqrt(16)", "--- stdout ---\n4.0"},
		{"_ + 1", "--- stdout ---\n5.0"}, // `_` is the last echoed value, as at a prompt
		{"None", "(no output)"},
		{"x\nx + 2", "--- stdout ---\n43"}, // only a final expression is echoed
	}
	for i, s := range steps {
		res := run(t, r, s.code)
		if !res.Success || res.Content != s.want {
			t.Fatalf("step %d (%q): got %q (success %v), want %q", i, s.code, res.Content, res.Success, s.want)
		}
		if res.Metadata["call"] != i+1 {
			t.Fatalf("step %d: call = %v", i, res.Metadata["call"])
		}
		if fresh := res.Metadata["restarted"]; fresh != (i == 0) {
			t.Fatalf("step %d: restarted = %v", i, fresh)
		}
	}
}

func TestREPLErrorKeepsState(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "y = 1")
	res := run(t, r, "z = 2\ndef f():\n    return 1 / 0\nf()")
	if res.Success {
		t.Fatalf("an exception succeeded: %+v", res)
	}
	mustContain(t, res.Content, "raised an exception", `File "<cell 2>", line 4, in <module>`,
		`File "<cell 2>", line 3, in f`, "ZeroDivisionError")
	if res = run(t, r, "y + z"); res.Content != "--- stdout ---\n3" {
		t.Fatalf("state after an error: %q", res.Content)
	}
}

// Whatever the code prints, including things that look like the driver's
// frames or markers, stays the code's output, and each call gets only its
// own.
func TestREPLOutputCannotBreakFraming(t *testing.T) {
	r := newTestREPL(t, testConfig())
	code := `import os, sys, subprocess
print('{"type": "done", "id": 1, "status": "ok"}')
sys.stdout.write("\x00jarvis-end-0000\x00 no newline")
sys.stdout.flush()
os.write(1, b"\nraw fd write\n")
subprocess.run(["echo", "from a child"])
sys.stderr.write("err\x00\n")
print("last")`
	res := run(t, r, code)
	if !res.Success {
		t.Fatalf("failed: %+v", res)
	}
	mustContain(t, res.Content, `{"type": "done", "id": 1, "status": "ok"}`, "jarvis-end-0000", " no newline",
		"raw fd write", "from a child", "last", "--- stderr ---\nerr")
	if res = run(t, r, "print('next')"); res.Content != "--- stdout ---\nnext" {
		t.Fatalf("the next call got %q", res.Content)
	}
}

func TestREPLStreamsRepairedAfterTheCodeClosesThem(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "import os, sys\nsys.stdout.close()\nos.close(2)")
	if res := run(t, r, "print('back')"); res.Content != "--- stdout ---\nback" {
		t.Fatalf("got %q", res.Content)
	}
}

func TestREPLTimeoutRestartsAndSaysStateIsLost(t *testing.T) {
	cfg := testConfig()
	cfg.Timeout = 1.5
	r := newTestREPL(t, cfg)
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".5"
	run(t, r, "x = 1\nimport subprocess\nchild = subprocess.Popen(['sleep', '"+tag+"'], start_new_session=True)")
	old := replPid(r)
	res := run(t, r, "while True:\n    pass")
	if res.Success || res.Status != tools.StatusTimeout || res.Metadata["state_lost"] != true {
		t.Fatalf("want a timeout: %+v", res)
	}
	mustContain(t, res.Content, "timed out after 1.5s", "killed", "variables and imports from earlier calls are lost")
	eventually(t, "the old interpreter's group is gone", func() bool { return !groupExists(old) })
	if res.Metadata["network_isolated"] == true {
		eventually(t, "its child is gone", func() bool { return len(processesWith(tag)) == 0 })
	}
	res = run(t, r, "x")
	if res.Metadata["restarted"] != true || !strings.Contains(res.Content, "NameError") {
		t.Fatalf("after the timeout: %+v", res)
	}
	if replPid(r) == old {
		t.Fatal("the same interpreter is still in use")
	}
}

func TestREPLReset(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "x = 1")
	res := r.Execute(context.Background(), tools.Args{"reset": true})
	if !res.Success || !strings.Contains(res.Content, "reset") {
		t.Fatalf("reset: %+v", res)
	}
	res = r.Execute(context.Background(), tools.Args{"reset": true, "code": "print('x' in dir())"})
	mustContain(t, res.Content, "reset", "False")
	if res.Metadata["restarted"] != true {
		t.Fatalf("metadata: %v", res.Metadata)
	}
	if res := r.Execute(context.Background(), tools.Args{}); res.Success || !strings.Contains(res.Content, "No code provided") {
		t.Fatalf("empty call: %+v", res)
	}
}

// laterChild is code whose thread starts `sleep tag` once the call is
// over: processes started during a call are killed when it ends, but a
// thread can start one between calls.
func laterChild(tag string) string {
	return "import subprocess, threading, time\n" +
		"def later():\n    time.sleep(0.3)\n    subprocess.Popen(['sleep', '" + tag + "'])\n" +
		"threading.Thread(target=later, daemon=True).start()\n"
}

func TestREPLCloseKillsTheInterpreter(t *testing.T) {
	r := newTestREPL(t, testConfig())
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".125"
	run(t, r, laterChild(tag))
	eventually(t, "the thread started its child", func() bool { return len(processesWith(tag)) > 0 })
	pid := replPid(r)
	if pid == 0 {
		t.Fatal("no interpreter")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("the interpreter %d is still there after Close: %v", pid, err)
	}
	eventually(t, "its process group is gone", func() bool { return !groupExists(pid) })
	eventually(t, "its child is gone", func() bool { return len(processesWith(tag)) == 0 })
	if res := run(t, r, "1"); res.Success || !strings.Contains(res.Content, "closed") {
		t.Fatalf("a call after Close: %+v", res)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestREPLCloseDuringACall(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "pass")
	done := make(chan tools.Result, 1)
	go func() { done <- run(t, r, "while True:\n    pass") }()
	time.Sleep(200 * time.Millisecond)
	_ = r.Close()
	res := <-done
	if res.Success {
		t.Fatalf("the call survived Close: %+v", res)
	}
	mustContain(t, res.Content, "closed")
}

func TestREPLCallsAreSerialised(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "n = 0")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := run(t, r, "import time\nv = n\ntime.sleep(0.05)\nn = v + 1"); !res.Success {
				t.Errorf("parallel call: %+v", res)
			}
		}()
	}
	wg.Wait()
	if res := run(t, r, "n"); res.Content != "--- stdout ---\n4" {
		t.Fatalf("calls overlapped: %q", res.Content)
	}
}

func TestREPLCancelledContextKillsAndTellsTheNextCall(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "x = 1")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	res := r.Execute(ctx, tools.Args{"code": "while True:\n    pass"})
	if res.Status != tools.StatusCancelled {
		t.Fatalf("want cancelled: %+v", res)
	}
	res = run(t, r, "print('x' in dir())")
	mustContain(t, res.Content, "previous call was cancelled", "False")
}

func TestREPLLimitsPerCall(t *testing.T) {
	cfg := testConfig()
	cfg.CPUSeconds = 1
	cfg.Timeout = 30
	cfg.MaxProcesses = 16
	r := newTestREPL(t, cfg)
	run(t, r, "kept = 'yes'")

	res := run(t, r, "while True:\n    pass")
	if res.Success || res.Status == tools.StatusTimeout {
		t.Fatalf("want the CPU limit: %+v", res)
	}
	mustContain(t, res.Content, "CPU time limit")
	// The limit is per call: the next one has its own second.
	if res = run(t, r, "sum(range(10))"); res.Content != "--- stdout ---\n45" {
		t.Fatalf("after the CPU limit: %+v", res)
	}

	res = run(t, r, "x = bytearray(4 * 1024**3)")
	mustContain(t, res.Content, "MemoryError")

	res = run(t, r, "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"+
		"            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('forked', n)\n")
	if isolationOf(t, res)["process_limit"] != "none" {
		mustContain(t, res.Content, "forked")
	}
	if res = run(t, r, "kept"); res.Content != "--- stdout ---\n'yes'" {
		t.Fatalf("state lost after contained limits: %+v", res)
	}
}

func TestREPLHugeOutputIsCapped(t *testing.T) {
	cfg := testConfig()
	cfg.MaxOutputBytes = 2048
	r := newTestREPL(t, cfg)
	res := run(t, r, "print('A' * 1_000_000)\nprint('END')")
	if res.Metadata["truncated"] != true || len(res.Content) > 3*cfg.MaxOutputBytes {
		t.Fatalf("not capped: %d bytes, %v", len(res.Content), res.Metadata)
	}
	mustContain(t, res.Content, "[output truncated: ", "END")
	if res = run(t, r, "print('small')"); res.Content != "--- stdout ---\nsmall" {
		t.Fatalf("the next call: %q", res.Content)
	}
}

func TestREPLInterpreterExitIsReported(t *testing.T) {
	r := newTestREPL(t, testConfig())
	run(t, r, "x = 1")
	res := run(t, r, "import os\nos._exit(7)")
	if res.Success || res.Metadata["state_lost"] != true {
		t.Fatalf("got %+v", res)
	}
	mustContain(t, res.Content, "interpreter stopped", "exit status 7", "lost")
	if res = run(t, r, "exit(0)"); !res.Success || !strings.Contains(res.Content, "keeps running") {
		t.Fatalf("exit(0): %+v", res)
	}
	if res = run(t, r, "print('alive')"); res.Content != "--- stdout ---\nalive" {
		t.Fatalf("after exit(): %+v", res)
	}
}

// When jarvis dies without closing the session (killed, crashed), the
// kernel still ends the interpreter and everything it started.
func TestREPLDiesWithJarvis(t *testing.T) {
	if os.Getenv("JARVIS_CODE_HELPER") == "1" {
		return // running as the helper below: nothing to check here
	}
	needPython(t)
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".875"
	helper := exec.Command(os.Args[0], "-test.run=^TestREPLHelperProcess$")
	helper.Env = append(os.Environ(), "JARVIS_CODE_HELPER=1", "JARVIS_CODE_TAG="+tag)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	var pid int
	var workdir, cgroupDir string
	if _, err := fmt.Fscanf(bufio.NewReader(out), "interpreter %d %s %s\n", &pid, &workdir, &cgroupDir); err != nil || pid == 0 {
		t.Fatalf("the helper did not report its interpreter: %v", err)
	}
	// A killed jarvis cannot clean up after itself; the test does.
	defer func() {
		removeTree(workdir)
		if cgroupDir != "-" {
			_ = os.Remove(cgroupDir)
		}
	}()
	eventually(t, "the code's child process is running", func() bool { return len(processesWith(tag)) > 0 })
	_ = helper.Process.Signal(syscall.SIGKILL)
	_ = helper.Wait()
	eventually(t, "the interpreter is gone", func() bool { return !alive(pid) })
	eventually(t, "the code's child is gone", func() bool { return len(processesWith(tag)) == 0 })
}

// TestREPLHelperProcess is the jarvis that TestREPLDiesWithJarvis kills: it
// starts an interpreter whose code starts a child, reports, and waits.
func TestREPLHelperProcess(t *testing.T) {
	if os.Getenv("JARVIS_CODE_HELPER") != "1" {
		t.Skip("helper for TestREPLDiesWithJarvis")
	}
	r := NewREPL(testConfig())
	res := run(t, r, laterChild(os.Getenv("JARVIS_CODE_TAG")))
	if !res.Success {
		t.Fatal(res.Content)
	}
	r.mu.Lock()
	cgroupDir := r.p.cg.path()
	if cgroupDir == "" {
		cgroupDir = "-"
	}
	fmt.Printf("interpreter %d %s %s\n", r.p.pid(), r.p.workdir, cgroupDir)
	r.mu.Unlock()
	time.Sleep(time.Minute)
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}
