package code

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/jarvis-workbench/jarvis/tools"
)

// These tests each pin down one way out of the sandbox that was found
// open; each fails on a driver without the corresponding defence.

// sandboxed skips the test when this machine has no namespaces for the
// sandbox (the default policy then refuses to run code, which other tests
// check). Any other refusal is a defence that broke: the test fails.
func sandboxed(t *testing.T, r tools.Result) {
	t.Helper()
	if !r.Success && strings.Contains(r.Content, "the sandbox could not be set up") {
		if strings.Contains(r.Content, "Missing: namespaces") {
			t.Skipf("no namespaces for the sandbox on this machine: %s", r.Content)
		}
		t.Fatalf("the sandbox was incomplete: %s", r.Content)
	}
}

// The user's terminal: the code must not open a host pty, even one every
// user may open, and must still get ptys of its own.
func TestHostTerminalsAreOutOfReach(t *testing.T) {
	needPython(t)
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("cannot create a pty here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	if err := os.Chmod(slave.Name(), 0o666); err != nil {
		t.Fatal(err)
	}
	r := run(t, NewInterpreter(testConfig()), `import os, pty
name = `+strconv.Quote(slave.Name())+`
try:
    fd = os.open(name, os.O_RDWR | os.O_NOCTTY)
    os.write(fd, b"written by the sandbox\n")
    print("opened", name)
except OSError as e:
    print("refused", name, e.strerror)
print("pts", sorted(os.listdir("/dev/pts")))
m, s = pty.openpty()
print("own pty", os.ttyname(s))
print("null", open("/dev/null", "w").write("x"), "urandom", len(open("/dev/urandom", "rb").read(8)))
`)
	sandboxed(t, r)
	if !r.Success {
		t.Fatalf("failed: %s", r.Content)
	}
	if strings.Contains(r.Content, "opened") {
		t.Fatalf("the code opened the host's terminal:\n%s", r.Content)
	}
	// Its /dev/pts is its own: empty but for ptmx until it opens a pty.
	mustContain(t, r.Content, "refused "+slave.Name(), "pts ['ptmx']", "own pty /dev/pts/0", "null 1 urandom 8")
	iso := isolationOf(t, r)
	if iso["terminals_hidden"] != true || iso["private_dev"] != true {
		t.Fatalf("isolation: %v", iso)
	}
}

// The session keyring: keys jarvis's session holds must not be readable.
func TestSessionKeyringIsNotInherited(t *testing.T) {
	needPython(t)
	desc := "jarvis-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	type outcome struct {
		r    tools.Result
		skip string
	}
	done := make(chan outcome, 1)
	go func() {
		// The session keyring belongs to the thread's credentials, and a
		// child inherits the forking thread's: join a new one on a thread
		// that is never unlocked, so it ends with this goroutine and the
		// test process's own keyring is untouched.
		runtime.LockOSThread()
		if _, err := unix.KeyctlJoinSessionKeyring(desc + "-ring"); err != nil {
			done <- outcome{skip: "no kernel keyrings here: " + err.Error()}
			return
		}
		if _, err := unix.AddKey("user", desc, []byte("key-s3cret"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			done <- outcome{skip: "cannot add a key: " + err.Error()}
			return
		}
		done <- outcome{r: run(t, NewInterpreter(testConfig()), `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nr = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
key = libc.syscall(ctypes.c_long(nr), ctypes.c_long(10), ctypes.c_long(-3), b"user", `+strconv.Quote(desc)+`.encode(), ctypes.c_long(0))
if key < 0:
    print("search failed", os.strerror(ctypes.get_errno()))
else:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(ctypes.c_long(nr), ctypes.c_long(11), ctypes.c_long(key), buf, ctypes.c_long(64))
    print("read", buf.raw[:max(n, 0)])
try:
    print("proc", open("/proc/keys").read())
except OSError as e:
    print("proc refused", e.strerror)
`)}
	}()
	o := <-done
	if o.skip != "" {
		t.Skip(o.skip)
	}
	sandboxed(t, o.r)
	if !o.r.Success {
		t.Fatalf("failed: %s", o.r.Content)
	}
	mustContain(t, o.r.Content, "search failed")
	if strings.Contains(o.r.Content, "s3cret") || strings.Contains(o.r.Content, desc+"\n") || strings.Contains(o.r.Content, " "+desc) {
		t.Fatalf("the parent's key is visible:\n%s", o.r.Content)
	}
	if isolationOf(t, o.r)["keyring_private"] != true {
		t.Fatalf("isolation: %v", isolationOf(t, o.r))
	}
}

// unixSocketCode tries a host Unix socket and the things that must keep
// working under the seccomp filter.
func unixSocketCode(path string) string {
	return `import multiprocessing, os, socket, subprocess, threading
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(` + strconv.Quote(path) + `)
    print("connected")
except OSError as e:
    print("unix refused", e.strerror)
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", ` + strconv.Quote(path) + `)
    print("dgram sent")
except OSError as e:
    print("dgram refused", e.strerror)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    print("dgram pair made")
except OSError as e:
    print("dgram pair refused", e.strerror)
a, b = socket.socketpair()
a.sendall(b"ping")
print("pair", b.recv(4).decode())
print("child", subprocess.run(["echo", "ok"], capture_output=True, text=True).stdout.strip())
t = threading.Thread(target=lambda: None); t.start(); t.join()
with multiprocessing.Pool(2) as pool:
    print("pool", pool.map(abs, [-1, -2]))
`
}

// Host Unix sockets (a Docker or agent socket under the home directory,
// say): a network namespace does not cover them; the seccomp filter does.
func TestHostUnixSocketsAreRefused(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		ns   bool
	}{{"sandbox", testConfig(), true}, {"unconfined", unconfined(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(visibleDir(t), "daemon.sock")
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			_ = os.Chmod(path, 0o777)
			accepted := make(chan struct{}, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					c.Close()
					accepted <- struct{}{}
				}
			}()
			var r tools.Result
			if tc.ns {
				r = run(t, NewInterpreter(tc.cfg), unixSocketCode(path))
				sandboxed(t, r)
			} else {
				withoutNamespaces(t, func() { r = run(t, NewInterpreter(tc.cfg), unixSocketCode(path)) })
			}
			if isolationOf(t, r)["seccomp"] != true {
				t.Skipf("no seccomp filter on %s: %v", runtime.GOARCH, isolationOf(t, r)["notes"])
			}
			if !r.Success {
				t.Fatalf("failed: %s", r.Content)
			}
			mustContain(t, r.Content, "unix refused Operation not permitted", "dgram refused Operation not permitted",
				"dgram pair refused", "pair ping", "child ok", "pool [1, 2]")
			select {
			case <-accepted:
				t.Fatal("the code reached a host Unix socket")
			case <-time.After(50 * time.Millisecond):
			}
		})
	}
}

// Files named in hide_paths (as the config file and database given with
// --config and --db are) are hidden wherever they are, relative paths too.
func TestHidePathsHidesFilesOutsideTheDefaults(t *testing.T) {
	needPython(t)
	dir := visibleDir(t)
	abs, rel := filepath.Join(dir, "config.toml"), filepath.Join(dir, "jarvis.db")
	for _, f := range []string{abs, rel} {
		if err := os.WriteFile(f, []byte("token = 'hide-me-"+filepath.Base(f)+"'"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	cfg := testConfig()
	cfg.HidePaths = []string{abs, "jarvis.db"}
	r := run(t, NewInterpreter(cfg), "for p in "+`[`+strconv.Quote(abs)+`, `+strconv.Quote(rel)+`]`+":\n"+
		"    try:\n        print(p, repr(open(p).read()))\n    except OSError as e:\n        print(p, 'refused', e.strerror)\n")
	sandboxed(t, r)
	if strings.Contains(r.Content, "hide-me") {
		t.Fatalf("a hidden file was readable:\n%s", r.Content)
	}
	mustContain(t, r.Content, abs+" ''", rel+" ''")
}

// Without mount_setattr (Linux < 5.12) the file system is still made
// read-only, by remounting; when that fails too, no code runs.
func TestReadOnlyWithoutMountSetattr(t *testing.T) {
	needPython(t)
	dir := visibleDir(t)
	_ = os.Chmod(dir, 0o777)
	target := filepath.Join(dir, "escaped.txt")
	code := "open(" + strconv.Quote(target) + ", 'w').write('x')\nprint('wrote')"
	defer func() { driverFault = "" }()

	driverFault = "mount_setattr"
	r := run(t, NewInterpreter(testConfig()), code)
	sandboxed(t, r)
	mustContain(t, r.Content, "Read-only file system")
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("the code wrote outside its directory:\n%s", r.Content)
	}
	iso := isolationOf(t, r)
	if iso["readonly_method"] != "remount" || iso["filesystem_readonly"] != true || iso["confined"] != true {
		t.Fatalf("isolation: %v", iso)
	}
	if r = run(t, NewInterpreter(testConfig()), "open('inside', 'w').write('x')\nimport os\nprint(os.path.getsize('inside'))"); !r.Success {
		t.Fatalf("the working directory is not writable after remounting: %s", r.Content)
	}

	driverFault = "readonly"
	r = run(t, NewInterpreter(testConfig()), code)
	if r.Success || strings.Contains(r.Content, "wrote") {
		t.Fatalf("ran on a writable file system: %+v", r)
	}
	mustContain(t, r.Content, "Missing: a read-only file system", "mount_setattr failed", "so did remounting",
		"allow_unconfined = true")
	r = run(t, NewInterpreter(unconfined()), code)
	if !r.Success || isolationOf(t, r)["filesystem_readonly"] != false || isolationOf(t, r)["confined"] != false {
		t.Fatalf("allow_unconfined: %+v", r)
	}
	_ = os.Remove(target)
}

// As root the code runs as nobody: root's files stay closed to it, and
// RLIMIT_NPROC, which the kernel ignores for root, holds on its own.
func TestRootRunsTheCodeAsNobody(t *testing.T) {
	needPython(t)
	if os.Geteuid() != 0 {
		t.Skip("only as root: an unprivileged user's own files are readable by design")
	}
	secret := filepath.Join(visibleDir(t), "root-only")
	if err := os.WriteFile(secret, []byte("root-s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	noCgroup = true
	defer func() { noCgroup = false }()
	cfg := testConfig()
	cfg.MaxProcesses = 16
	r := run(t, NewInterpreter(cfg), `import os, time
for p in [`+strconv.Quote(secret)+`, "/etc/shadow"]:
    try:
        print(p, open(p).read())
    except OSError as e:
        print(p, "refused", e.strerror)
n = 0
try:
    while n < 200:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
    print("forked without limit")
except OSError as e:
    print("forked", n, "then", e.strerror)
`)
	sandboxed(t, r)
	mustContain(t, r.Content, secret+" refused Permission denied", "/etc/shadow refused Permission denied", "then")
	if strings.Contains(r.Content, "root-s3cret") || strings.Contains(r.Content, "without limit") {
		t.Fatalf("the code has root's powers:\n%s", r.Content)
	}
	iso := isolationOf(t, r)
	if iso["host_uid"] != nobodyID || iso["process_limit"] != "rlimit" {
		t.Fatalf("isolation: %v", iso)
	}
}

// As root, an interpreter nobody cannot run (pyenv under /root) is
// replaced by a system one, and said so; with none, the call fails and
// says how to configure one. Never does the code run as root instead.
func TestRootNeedsAPythonNobodyCanRun(t *testing.T) {
	needPython(t)
	if os.Geteuid() != 0 {
		t.Skip("only as root")
	}
	var system string
	for _, p := range systemPythons {
		if _, err := os.Stat(p); err == nil {
			system = p
			break
		}
	}
	if system == "" {
		t.Skip("no system python3 here")
	}
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(closed, "python3")
	if err := os.Symlink(system, python); err != nil {
		t.Fatal(err)
	}
	r := run(t, NewInterpreter(Config{Python: python, Timeout: 15}), "print('ran')")
	sandboxed(t, r)
	if !r.Success {
		t.Fatalf("failed: %s", r.Content)
	}
	notes, _ := isolationOf(t, r)["notes"].([]string)
	if len(notes) == 0 || !strings.Contains(notes[0], "cannot run "+python) || !strings.Contains(notes[0], "is used instead") {
		t.Fatalf("the substitution is not explained: %v", notes)
	}

	saved := systemPythons
	systemPythons = []string{"/nonexistent/python3"}
	defer func() { systemPythons = saved }()
	other := filepath.Join(closed, "python3-other")
	if err := os.Symlink(system, other); err != nil {
		t.Fatal(err)
	}
	r = run(t, NewInterpreter(Config{Python: other, Timeout: 15}), "print('ran')")
	if r.Success {
		t.Fatalf("ran: %+v", r)
	}
	mustContain(t, r.Content, "runs as the unprivileged uid 65534 (never as root)", "cannot run "+other, "[code] python")
}
