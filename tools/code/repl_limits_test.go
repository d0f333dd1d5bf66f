//go:build unix

package code

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The code cannot lift its CPU limit: the hard limit is the session's
// budget, not infinity.
func TestREPLHardCPULimitIsFinite(t *testing.T) {
	cfg := testConfig()
	cfg.CPUSeconds = 5
	cfg.SessionCPUSeconds = 40
	r := newTestREPL(t, cfg)
	res := run(t, r, `import resource
soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
print("hard", hard)
try:
    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    print("raised")
except (ValueError, OSError) as e:
    print("refused")
resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
print("soft at hard", resource.getrlimit(resource.RLIMIT_CPU) == (40, 40))
`)
	mustContain(t, res.Content, "hard 40", "refused", "soft at hard True")
	if res.Metadata["limits"].(map[string]any)["session_cpu_seconds"] != 40 {
		t.Fatalf("limits: %v", res.Metadata["limits"])
	}
}

// Processes a call starts are killed when the call ends, setsid or not.
func TestREPLProcessesDoNotOutliveTheCall(t *testing.T) {
	r := newTestREPL(t, testConfig())
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".625"
	res := run(t, r, "import subprocess\n"+
		"a = subprocess.Popen(['sleep', '"+tag+"'])\n"+
		"b = subprocess.Popen(['sleep', '"+tag+"'], start_new_session=True)\n"+
		"print('started')")
	mustContain(t, res.Content, "started")
	if res.Metadata["network_isolated"] != true {
		t.Skip("without a pid namespace only the session's processes are found")
	}
	eventually(t, "the call's processes are gone", func() bool { return len(processesWith(tag)) == 0 })
	res = run(t, r, "print(a.poll() is not None, b.poll() is not None)")
	if res.Content != "--- stdout ---\nTrue True" {
		t.Fatalf("the children are still running: %q", res.Content)
	}
}

// A thread left spinning between calls is stopped once it has used a
// call's CPU time, and the next call says so plainly (not with a
// traceback of the driver's).
func TestREPLThreadSpinningBetweenCallsIsReported(t *testing.T) {
	cfg := testConfig()
	cfg.CPUSeconds = 1
	cfg.Timeout = 30
	r := newTestREPL(t, cfg)
	res := run(t, r, "import threading\nx = 1\n"+
		"def spin():\n    while True:\n        pass\n"+
		"threading.Thread(target=spin, daemon=True).start()\nprint('left running')")
	mustContain(t, res.Content, "left running")
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("the spinning thread was not stopped between calls")
	}
	res = run(t, r, "print('x' in dir())")
	mustContain(t, res.Content, "The interpreter was stopped between calls: threads the code left running used up "+
		"the CPU time allowed between calls (1 s); state was lost.", "--- stdout ---\nFalse")
	if strings.Contains(res.Content, "Traceback") || res.Metadata["restarted"] != true {
		t.Fatalf("got %+v", res)
	}
}

// The interpreter's whole life has a CPU budget; when it is used up, the
// next call runs in a fresh interpreter and says why.
func TestREPLSessionCPUBudget(t *testing.T) {
	cfg := testConfig()
	cfg.CPUSeconds = 1
	cfg.SessionCPUSeconds = 3
	cfg.Timeout = 30
	r := newTestREPL(t, cfg)
	run(t, r, "x = 1")
	res := run(t, r, "while True:\n    pass")
	mustContain(t, res.Content, "CPUTimeLimitExceeded")
	res = run(t, r, "print('x' in dir())")
	mustContain(t, res.Content, "The interpreter used up its CPU time for the session (3 s, session_cpu_seconds); "+
		"state was lost.", "--- stdout ---\nFalse")
	if res.Metadata["restarted"] != true {
		t.Fatalf("got %+v", res)
	}
}
