//go:build unix

package shell

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// runner calls shell_exec through an executor that approves, collecting
// its live output.
type runner struct {
	t    *testing.T
	exec *tools.Executor
	mu   sync.Mutex
	live strings.Builder
}

func (r *runner) Publish(e events.Event) {
	if e.Type == events.ToolOutput {
		r.mu.Lock()
		r.live.WriteString(e.Text)
		r.mu.Unlock()
	}
}

func newRunner(t *testing.T, s tools.Settings) *runner {
	t.Helper()
	r := &runner{t: t}
	e, err := tools.NewExecutor([]tools.Tool{New(tools.Deps{Settings: map[string]tools.Settings{Name: s}})},
		tools.ExecutorOptions{Confirmer: tools.AllowAll, Bus: r})
	if err != nil {
		t.Fatal(err)
	}
	r.exec = e
	return r
}

func (r *runner) run(ctx context.Context, args tools.Args) tools.Result {
	r.t.Helper()
	b, _ := json.Marshal(args)
	return r.exec.Execute(ctx, tools.Call{ID: "c", Name: Name, Arguments: string(b)})
}

func TestExitCodeStreamsAndFailure(t *testing.T) {
	t.Chdir(t.TempDir())
	r := newRunner(t, tools.Settings{})
	res := r.run(context.Background(), tools.Args{"command": "echo out; echo err >&2; pwd"})
	if !res.Success || res.Metadata["exit_code"] != 0 || !strings.Contains(res.Content, "--- stdout ---\nout") || !strings.Contains(res.Content, "--- stderr ---\nerr") {
		t.Fatalf("result = %+v", res)
	}
	wd, _ := filepath.EvalSymlinks(".")
	if abs, _ := filepath.Abs(wd); !strings.Contains(res.Content, abs) {
		t.Fatalf("it must run in the working directory %s: %q", abs, res.Content)
	}
	res = r.run(context.Background(), tools.Args{"command": "echo partial; exit 3"})
	if res.Success || res.Metadata["exit_code"] != 3 || !strings.HasPrefix(res.Content, "Exit code 3.") {
		t.Fatalf("a failed command must be a failed result: %+v", res)
	}
	if !strings.Contains(r.live.String(), "partial") {
		t.Fatalf("live output = %q", r.live.String())
	}
}

func TestEnvironmentIsCleanWithPassEnv(t *testing.T) {
	t.Setenv("JARVIS_TEST_SECRET", "s3cret")
	t.Setenv("JARVIS_TEST_PASSED", "yes")
	r := newRunner(t, tools.Settings{PassEnv: []string{"JARVIS_TEST_PASSED"}})
	res := r.run(context.Background(), tools.Args{"command": "env"})
	if strings.Contains(res.Content, "s3cret") || !strings.Contains(res.Content, "JARVIS_TEST_PASSED=yes") {
		t.Fatalf("env = %q", res.Content)
	}
}

// alive reports whether a process exists (and is not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(b), ") Z ")
}

func TestTimeoutAndCancelKillTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := "sleep 60 & echo $! > " + pidFile + "; wait"
	r := newRunner(t, tools.Settings{})
	res := r.run(context.Background(), tools.Args{"command": cmd, "timeout": 1})
	if res.Status != tools.StatusTimeout || !strings.Contains(res.Content, "timed out after 1 s") || res.Metadata["timed_out"] != true {
		t.Fatalf("result = %+v", res)
	}
	waitDead(t, pidFile)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() { done <- r.run(ctx, tools.Args{"command": cmd}) }()
	waitFile(t, pidFile)
	cancel()
	res = <-done
	if res.Status != tools.StatusCancelled {
		t.Fatalf("cancelled: %+v", res)
	}
	waitDead(t, pidFile)
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command did not start")
}

func waitDead(t *testing.T, pidFile string) {
	t.Helper()
	waitFile(t, pidFile)
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the background process %d outlived the call", pid)
	}
	os.Remove(pidFile)
}

func TestOutputIsCappedHeadAndTail(t *testing.T) {
	r := newRunner(t, tools.Settings{})
	res := r.run(context.Background(), tools.Args{"command": "echo FIRST; head -c 300000 /dev/zero | tr '\\0' x; echo; echo LAST"})
	if !res.Success || !strings.Contains(res.Content, "FIRST") || !strings.Contains(res.Content, "LAST") ||
		!strings.Contains(res.Content, "[output truncated:") || len(res.Content) > maxOutput+1024 || res.Metadata["truncated"] != true {
		t.Fatalf("len %d, truncated %v", len(res.Content), res.Metadata["truncated"])
	}
}

func TestRefusalsComeBeforeAnyoneIsAsked(t *testing.T) {
	asked := 0
	e, _ := tools.NewExecutor([]tools.Tool{New(tools.Deps{})}, tools.ExecutorOptions{Confirmer: tools.ConfirmFunc(
		func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
			asked++
			return tools.AllowOnce, nil
		})})
	res := e.Execute(context.Background(), tools.Call{Name: Name, Arguments: `{"command":"rm -rf ~"}`})
	if res.Status != tools.StatusDenied || !strings.Contains(res.Content, "deletes ~") || asked != 0 {
		t.Fatalf("result %+v asked %d", res, asked)
	}
	res = e.Execute(context.Background(), tools.Call{Name: Name, Arguments: `{"command":"echo hi","timeout":301}`})
	if res.Success || !strings.Contains(res.Content, "between 1 and 300") {
		t.Fatalf("timeout bound: %+v", res)
	}
}

func TestWorkingDirMustBeInTheReach(t *testing.T) {
	work, other := t.TempDir(), t.TempDir()
	t.Chdir(work)
	os.Mkdir(filepath.Join(work, "sub"), 0o755)
	var reasons []string
	e, _ := tools.NewExecutor([]tools.Tool{New(tools.Deps{})}, tools.ExecutorOptions{Confirmer: tools.ConfirmFunc(
		func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
			reasons = append(reasons, req.Reason)
			return tools.AllowOnce, nil
		})})
	res := e.Execute(context.Background(), tools.Call{Name: Name, Arguments: `{"command":"pwd","working_dir":"sub"}`})
	if !res.Success || !strings.Contains(res.Content, filepath.Join("sub")) {
		t.Fatalf("sub: %+v", res)
	}
	b, _ := json.Marshal(map[string]any{"command": "pwd", "working_dir": other})
	e.Execute(context.Background(), tools.Call{Name: Name, Arguments: string(b)})
	if len(reasons) != 2 || reasons[0] != "runs in sub" || !strings.Contains(reasons[1], "outside the working directory") {
		t.Fatalf("reasons = %q", reasons)
	}
	limited, _ := tools.NewExecutor([]tools.Tool{New(tools.Deps{Settings: map[string]tools.Settings{Name: {AllowedDirs: []string{work}}}})},
		tools.ExecutorOptions{Confirmer: tools.AllowAll})
	res = limited.Execute(context.Background(), tools.Call{Name: Name, Arguments: string(b)})
	if res.Status != tools.StatusDenied || !strings.Contains(res.Content, "outside the allowed directories") {
		t.Fatalf("past allowed_dirs: %+v", res)
	}
}

func TestSandboxHasNoNetworkAndItsOwnProcesses(t *testing.T) {
	r := newRunner(t, tools.Settings{Sandbox: true})
	res := r.run(context.Background(), tools.Args{"command": "echo $$; grep -c : /proc/net/dev"})
	if !res.Success {
		if strings.Contains(res.Content, "the kernel refused") {
			t.Skipf("namespaces are not allowed here: %s", res.Content)
		}
		t.Fatalf("sandbox: %+v", res)
	}
	// The shell is the init of its pid namespace, and the only network
	// interface is the loopback.
	if !strings.Contains(res.Content, "--- stdout ---\n1\n1") {
		t.Fatalf("the shell must be pid 1 and see only lo: %q", res.Content)
	}
}
