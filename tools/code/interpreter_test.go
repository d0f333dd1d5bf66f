//go:build unix

package code

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestInterpreterOutputAndEcho(t *testing.T) {
	needPython(t)
	r := run(t, NewInterpreter(testConfig()), "print('hello')\nimport sys; sys.stderr.write('warn\\n')\n6 * 7")
	if !r.Success || r.Status != tools.StatusOK {
		t.Fatalf("failed: %+v", r)
	}
	if want := "--- stdout ---\nhello\n42\n\n--- stderr ---\nwarn"; r.Content != want {
		t.Fatalf("content = %q, want %q", r.Content, want)
	}
	if r.Metadata["exit_code"] != 0 || r.Metadata["truncated"] != false {
		t.Fatalf("metadata: %v", r.Metadata)
	}
	if d, _ := r.Metadata["duration_seconds"].(float64); d <= 0 {
		t.Fatalf("duration_seconds = %v", r.Metadata["duration_seconds"])
	}
	if _, ok := r.Metadata["network_isolated"].(bool); !ok {
		t.Fatalf("network_isolated missing: %v", r.Metadata)
	}
	limits, _ := r.Metadata["limits"].(map[string]any)
	if limits["memory_mb"] != 256 || limits["max_processes"] != 32 {
		t.Fatalf("limits: %v", limits)
	}
}

func TestInterpreterNoOutput(t *testing.T) {
	needPython(t)
	r := run(t, NewInterpreter(testConfig()), "x = None\nx")
	if !r.Success || r.Content != "(no output)" {
		t.Fatalf("got %+v", r)
	}
}

func TestInterpreterTraceback(t *testing.T) {
	needPython(t)
	r := run(t, NewInterpreter(testConfig()), "def f(n):\n    return n / 0\nprint('before')\nf(1)")
	if r.Success || r.Status != tools.StatusError || r.Metadata["exit_code"] != 1 {
		t.Fatalf("want a failure with exit 1: %+v", r)
	}
	mustContain(t, r.Content, "The code failed with exit status 1.", "--- stdout ---\nbefore",
		"Traceback (most recent call last):", `File "<code>", line 4, in <module>`, `File "<code>", line 2, in f`,
		"return n / 0", "ZeroDivisionError: division by zero")
	if strings.Contains(r.Content, "<string>") || strings.Contains(r.Content, "_jarvis_driver") {
		t.Fatalf("the driver's frames leak into the traceback:\n%s", r.Content)
	}
}

func TestInterpreterSyntaxErrorShowsOnlyTheError(t *testing.T) {
	needPython(t)
	r := run(t, NewInterpreter(testConfig()), "def f(:\n    pass")
	mustContain(t, r.Content, `File "<code>", line 1`, "SyntaxError")
	if strings.Contains(r.Content, "Traceback") || strings.Contains(r.Content, "ast.py") {
		t.Fatalf("a syntax error should not show the driver's frames:\n%s", r.Content)
	}
}

func TestInterpreterExitStatus(t *testing.T) {
	needPython(t)
	it := NewInterpreter(testConfig())
	r := run(t, it, "import sys\nprint('partial')\nsys.exit(3)")
	if r.Success || r.Metadata["exit_code"] != 3 {
		t.Fatalf("got %+v", r)
	}
	mustContain(t, r.Content, "exit status 3", "partial")
	if r = run(t, it, "raise SystemExit(0)"); !r.Success {
		t.Fatalf("exit(0) is success: %+v", r)
	}
}

func TestInterpreterEmptyCode(t *testing.T) {
	r := NewInterpreter(Config{}).Execute(context.Background(), tools.Args{"code": "  \n"})
	if r.Success || r.Content != "No code provided." {
		t.Fatalf("got %+v", r)
	}
}

func TestInterpreterPythonMissing(t *testing.T) {
	for _, name := range []string{"/nonexistent/bin/python3", "python3-that-does-not-exist"} {
		r := run(t, NewInterpreter(Config{Python: name}), "print(1)")
		if r.Success {
			t.Fatalf("%s: succeeded", name)
		}
		mustContain(t, r.Content, name, "was not found", "[code]\npython = ")
		if r.Metadata["network_isolated"] != false {
			t.Fatalf("metadata: %v", r.Metadata)
		}
	}
}

func TestInterpreterKeepsNoStateBetweenCalls(t *testing.T) {
	needPython(t)
	it := NewInterpreter(testConfig())
	if r := run(t, it, "x = 41\nopen('kept.txt', 'w').write('x')\nimport os; os.getcwd()"); !r.Success {
		t.Fatalf("first call: %+v", r)
	}
	r := run(t, it, "import os\nprint(os.path.exists('kept.txt'))\nprint(x)")
	mustContain(t, r.Content, "False", "NameError: name 'x' is not defined")
}

// The infinite loop is killed at the wall-clock limit together with what
// it started, including a process that left the process group.
func TestInterpreterTimeoutKillsEveryProcess(t *testing.T) {
	needPython(t)
	cfg := testConfig()
	cfg.Timeout = 1.5
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".25"
	code := "import subprocess\n" +
		"subprocess.Popen(['sleep', '" + tag + "'], start_new_session=True)\n" +
		"subprocess.Popen(['sleep', '" + tag + "'])\n" +
		"print('spinning', flush=True)\n" +
		"while True:\n    pass\n"
	o, err := runOnce(context.Background(), cfg, code)
	if err != nil {
		t.Fatal(err)
	}
	r := o.result()
	if r.Success || r.Status != tools.StatusTimeout || !o.timedOut {
		t.Fatalf("want a timeout: %+v", r)
	}
	mustContain(t, r.Content, "Execution timed out after 1.5s; the process was killed.", "spinning")
	eventually(t, "the process group is gone", func() bool { return !groupExists(o.pid) })
	if !o.iso.namespaces && o.iso.processLimit != "cgroup" {
		// Without a pid namespace or cgroup nothing can find a process that
		// called setsid: that is the documented limit of the fallback.
		for _, pid := range processesWith(tag) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Skip("no pid namespace or cgroup here: a process that leaves the group survives the timeout")
	}
	eventually(t, "the processes the code started are gone", func() bool { return len(processesWith(tag)) == 0 })
}

func TestInterpreterCancelKillsTheProcess(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(500 * time.Millisecond); cancel() }()
	o, err := runOnce(ctx, testConfig(), "while True:\n    pass")
	if err != nil {
		t.Fatal(err)
	}
	r := o.result()
	if r.Status != tools.StatusCancelled || r.Success {
		t.Fatalf("want cancelled: %+v", r)
	}
	eventually(t, "the process group is gone", func() bool { return o.pid == 0 || !groupExists(o.pid) })
}

// A fork bomb stops at the process limit, and the tool returns.
func TestInterpreterForkBombIsContained(t *testing.T) {
	needPython(t)
	cfg := testConfig()
	cfg.MaxProcesses = 16
	cfg.Timeout = 20
	code := "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n" +
		"            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n" +
		"    print('forked', n, 'then', e.strerror)\n"
	o, err := runOnce(context.Background(), cfg, code)
	if err != nil {
		t.Fatal(err)
	}
	r := o.result()
	if o.iso.processLimit == "none" {
		t.Skipf("no process limit can be enforced here: %v", o.iso.meta())
	}
	m := regexp.MustCompile(`forked (\d+) then`).FindStringSubmatch(r.Content)
	if !r.Success || m == nil {
		t.Fatalf("the fork loop did not stop with an error: %+v", r)
	}
	if n, _ := strconv.Atoi(m[1]); n >= cfg.MaxProcesses {
		t.Fatalf("forked %d processes with a limit of %d", n, cfg.MaxProcesses)
	}
	eventually(t, "the forked children are gone", func() bool { return !groupExists(o.pid) })
}

// The real thing: every process forks for ever. It is held at the limit
// until the timeout kills all of it.
func TestInterpreterEndlessForkBombTimesOut(t *testing.T) {
	needPython(t)
	cfg := testConfig()
	cfg.MaxProcesses = 16
	cfg.Timeout = 2
	o, err := runOnce(context.Background(), cfg, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n")
	if err != nil {
		t.Fatal(err)
	}
	if !o.timedOut {
		t.Fatalf("want a timeout: %+v", o.result())
	}
	if o.iso.processLimit == "none" {
		t.Skip("no process limit here")
	}
	eventually(t, "the fork bomb is gone", func() bool { return !groupExists(o.pid) })
}

func TestInterpreterMemoryHogIsContained(t *testing.T) {
	needPython(t)
	it := NewInterpreter(testConfig())
	for _, code := range []string{
		"x = bytearray(4 * 1024**3)",
		"chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024**2))",
	} {
		r := run(t, it, code)
		if r.Success {
			t.Fatalf("%q succeeded", code)
		}
		mustContain(t, r.Content, "MemoryError")
		if limits := isolationOf(t, r); limits == nil {
			t.Fatal("no isolation metadata")
		}
	}
}

func TestInterpreterFileSizeLimit(t *testing.T) {
	needPython(t)
	r := run(t, NewInterpreter(testConfig()), "open('big', 'wb').write(b'0' * (9 * 1024 * 1024))")
	if r.Success {
		t.Fatalf("wrote past the file size limit: %+v", r)
	}
	mustContain(t, r.Content, "File too large")
}

func TestInterpreterCPULimit(t *testing.T) {
	needPython(t)
	cfg := testConfig()
	cfg.CPUSeconds = 1
	cfg.Timeout = 30
	r := run(t, NewInterpreter(cfg), "while True:\n    pass")
	if r.Success || r.Status == tools.StatusTimeout {
		t.Fatalf("want the CPU limit, not the wall clock: %+v", r)
	}
	mustContain(t, r.Content, "CPU time limit")
}

func TestInterpreterHugeOutputIsCapped(t *testing.T) {
	needPython(t)
	cfg := testConfig()
	cfg.MaxOutputBytes = 4096
	r := run(t, NewInterpreter(cfg), "print('START')\nfor i in range(200000):\n    print('line', i)\nprint('END')")
	if !r.Success || r.Metadata["truncated"] != true {
		t.Fatalf("got %+v", r.Metadata)
	}
	mustContain(t, r.Content, "START", "END", "[output truncated: ")
	if len(r.Content) > 2*cfg.MaxOutputBytes {
		t.Fatalf("content is %d bytes with a 4 KiB cap", len(r.Content))
	}
}

// What the sandbox promises about files, tested as far as this machine
// enforces it (the result's isolation metadata says how far that is).
func TestInterpreterFileSystem(t *testing.T) {
	needPython(t)
	t.Setenv("JARVIS_TEST_SECRET", "hunter2")
	outsideTmp := t.TempDir()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = t.TempDir()
	}
	_ = os.MkdirAll(cache, 0o755)
	outside, err := os.MkdirTemp(cache, "jarvis-code-test-")
	if err != nil {
		outside = visibleDir(t) // no usable home directory
	} else {
		t.Cleanup(func() { _ = os.RemoveAll(outside) })
	}
	secretDir := filepath.Join(outside, "secrets")
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "token"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.HidePaths = []string{secretDir}
	code := `import os, sys
print("cwd", os.getcwd())
print("home", os.environ.get("HOME"), "tmpdir", os.environ.get("TMPDIR"))
print("env", sorted(os.environ))
print("secret-env", "hunter2" in repr(os.environ))
print("own session", os.getsid(0) == os.getpid())
try:
    open("/dev/tty").close()
    print("tty reachable")
except OSError:
    print("no tty")
open("inside.txt", "w").write("ok")
print("inside", open("inside.txt").read())
for target in sys.argv[1:] or [` + strconvQuote(outsideTmp) + `, ` + strconvQuote(outside) + `]:
    try:
        open(os.path.join(target, "escaped.txt"), "w").write("x")
        print("wrote", target)
    except OSError as e:
        print("refused", target, e.strerror)
try:
    print("secret", open(` + strconvQuote(filepath.Join(secretDir, "token")) + `).read())
except OSError as e:
    print("secret hidden", e.strerror)
`
	r := run(t, NewInterpreter(cfg), code)
	if !r.Success {
		t.Fatalf("failed: %s", r.Content)
	}
	cwd := regexp.MustCompile(`cwd (\S+)`).FindStringSubmatch(r.Content)[1]
	mustContain(t, r.Content, "home "+cwd+" tmpdir "+cwd, "secret-env False", "inside ok", "own session True", "no tty")
	mustContain(t, r.Content, "env ['HOME', 'LANG', 'LC_ALL', 'MPLBACKEND', 'PATH', 'TMPDIR']")
	if wd, _ := os.Getwd(); cwd == wd || !strings.HasPrefix(filepath.Base(cwd), "jarvis-code-") {
		t.Fatalf("the code ran in %s, not in a private directory", cwd)
	}
	if _, err := os.Stat(cwd); !os.IsNotExist(err) {
		t.Fatalf("the working directory %s was not removed: %v", cwd, err)
	}
	iso := isolationOf(t, r)
	if iso["filesystem_readonly"] != true {
		// Without a mount namespace the code has the user's own access:
		// the documented fallback. Only the private cwd and env hold.
		t.Skipf("no file system isolation here (%v): writes outside the working directory are as allowed as the user's", iso["notes"])
	}
	for _, dir := range []string{outsideTmp, outside} {
		if _, err := os.Stat(filepath.Join(dir, "escaped.txt")); err == nil {
			t.Fatalf("the code wrote into %s:\n%s", dir, r.Content)
		}
		mustContain(t, r.Content, "refused "+dir)
	}
	mustContain(t, r.Content, "secret hidden")
	if strings.Contains(r.Content, "s3cret") {
		t.Fatalf("a hidden file was readable:\n%s", r.Content)
	}
}

func TestInterpreterHasNoNetwork(t *testing.T) {
	needPython(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r := run(t, NewInterpreter(testConfig()), "import socket\n"+
		"try:\n    socket.create_connection(('127.0.0.1', "+strconv.Itoa(port)+"), timeout=3)\n    print('connected')\n"+
		"except OSError as e:\n    print('refused', e)\n")
	if r.Metadata["network_isolated"] != true {
		t.Skipf("no network namespace here: %v", isolationOf(t, r)["notes"])
	}
	mustContain(t, r.Content, "refused")
	select {
	case <-accepted:
		t.Fatal("the code reached a listener on the host's loopback")
	default:
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }
