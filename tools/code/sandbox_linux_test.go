package code

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// withoutNamespaces runs f as if the kernel refused namespaces, as it does
// where unprivileged user namespaces are disabled.
func withoutNamespaces(t *testing.T, f func()) {
	t.Helper()
	nsState.Lock()
	known, usable, reason := nsState.known, nsState.usable, nsState.reason
	nsState.Unlock()
	markNamespacesUnusable(syscall.EPERM)
	defer func() {
		nsState.Lock()
		nsState.known, nsState.usable, nsState.reason = known, usable, reason
		nsState.Unlock()
	}()
	f()
}

// unconfined is testConfig with allow_unconfined set: the fallback runs.
func unconfined() Config {
	cfg := testConfig()
	cfg.AllowUnconfined = true
	return cfg
}

// By default code that cannot be isolated is not run, and the answer says
// why and how to allow it; the tools' descriptions say so too.
func TestWithoutNamespacesRefusesByDefault(t *testing.T) {
	needPython(t)
	withoutNamespaces(t, func() {
		for _, tool := range []interface {
			Execute(context.Context, tools.Args) tools.Result
			Spec() tools.Spec
		}{NewInterpreter(testConfig()), newTestREPL(t, testConfig())} {
			r := run(t, tool, "open('ran', 'w')\nprint('ran')")
			if r.Success || strings.Contains(r.Content, "--- stdout ---") {
				t.Fatalf("%s ran without isolation: %+v", tool.Spec().Name, r)
			}
			mustContain(t, r.Content, "the sandbox could not be set up", "Missing: namespaces",
				"refused user and network namespaces", "allow_unconfined = true")
			mustContain(t, tool.Spec().Description, "not available on this machine", "code is refused")
		}
	})
}

// With allow_unconfined the code runs, under its limits, and the result
// and the description say that it was not isolated and why.
func TestWithoutNamespacesAllowUnconfinedSaysSo(t *testing.T) {
	needPython(t)
	withoutNamespaces(t, func() {
		it := NewInterpreter(unconfined())
		mustContain(t, it.Spec().Description, "WARNING", "without network or file system isolation")
		r := run(t, it, "print('ran')")
		if !r.Success || r.Metadata["network_isolated"] != false {
			t.Fatalf("got %+v", r)
		}
		iso := isolationOf(t, r)
		if iso["namespaces"] != false || iso["filesystem_readonly"] != false || iso["confined"] != false {
			t.Fatalf("isolation: %v", iso)
		}
		notes, _ := iso["notes"].([]string)
		if len(notes) == 0 {
			t.Fatalf("no note says why: %v", iso)
		}
		mustContain(t, notes[0], "refused user and network namespaces")
	})
}

// require_isolation is stricter than the default and wins over
// allow_unconfined.
func TestRequireIsolationOverridesAllowUnconfined(t *testing.T) {
	needPython(t)
	cfg := unconfined()
	cfg.RequireIsolation = true
	withoutNamespaces(t, func() {
		r := run(t, NewInterpreter(cfg), "print('ran')")
		if r.Success {
			t.Fatalf("ran without isolation: %+v", r)
		}
		mustContain(t, r.Content, "require_isolation = true", "Missing: namespaces")
	})
}

// As root without namespaces the cgroup is what finds a process that left
// the group; the timeout must still leave nothing behind.
func TestFallbackTimeoutAsRootUsesTheCgroup(t *testing.T) {
	needPython(t)
	if os.Geteuid() != 0 {
		t.Skip("the pids cgroup is used only as root")
	}
	cfg := testConfig()
	cfg.Timeout = 1.5
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".75"
	cfg.AllowUnconfined = true
	withoutNamespaces(t, func() {
		o, err := runOnce(context.Background(), cfg, "import subprocess\n"+
			"subprocess.Popen(['sleep', '"+tag+"'], start_new_session=True)\nwhile True:\n    pass\n")
		if err != nil {
			t.Fatal(err)
		}
		if o.iso.processLimit != "cgroup" {
			for _, pid := range processesWith(tag) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Skipf("no pids cgroup could be created here: %v", o.iso.meta()["notes"])
		}
		if !o.timedOut {
			t.Fatalf("want a timeout: %+v", o.result())
		}
		eventually(t, "the escaped process is gone", func() bool { return len(processesWith(tag)) == 0 })
	})
}

func TestCgroupDiscoveryV1(t *testing.T) {
	dir := t.TempDir()
	mountinfo := filepath.Join(dir, "mountinfo")
	self := filepath.Join(dir, "cgroup")
	write(t, mountinfo, `22 1 0:20 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
30 22 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
31 22 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
32 22 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
`)
	write(t, self, "8:pids:/user.slice\n4:memory:/x\n0::/\n")
	got, v2, err := pidsParent(mountinfo, self)
	if err != nil || v2 || got != "/sys/fs/cgroup/pids/user.slice" {
		t.Fatalf("got %q v2=%v err=%v", got, v2, err)
	}
}

func TestCgroupDiscoveryInContainer(t *testing.T) {
	dir := t.TempDir()
	mountinfo := filepath.Join(dir, "mountinfo")
	self := filepath.Join(dir, "cgroup")
	// A container sees its own cgroup mounted as the hierarchy's root.
	write(t, mountinfo, `31 22 0:27 /docker/abc /sys/fs/cgroup/pids ro - cgroup cgroup rw,pids
`)
	write(t, self, "8:pids:/docker/abc/sub\n")
	got, _, err := pidsParent(mountinfo, self)
	if err != nil || got != "/sys/fs/cgroup/pids/sub" {
		t.Fatalf("got %q err=%v", got, err)
	}
}

func TestCgroupDiscoveryWithoutPids(t *testing.T) {
	dir := t.TempDir()
	mountinfo := filepath.Join(dir, "mountinfo")
	self := filepath.Join(dir, "cgroup")
	write(t, mountinfo, "30 22 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n")
	write(t, self, "4:memory:/\n")
	if _, _, err := pidsParent(mountinfo, self); err == nil {
		t.Fatal("found a pids hierarchy where there is none")
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/with\040space\134x`); got != `/mnt/with space\x` {
		t.Fatalf("got %q", got)
	}
}

func TestNamespaceRefused(t *testing.T) {
	for _, e := range []error{syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, &os.PathError{Op: "fork/exec", Err: syscall.EPERM}} {
		if !namespaceRefused(e) {
			t.Fatalf("%v should count as a refusal", e)
		}
	}
	for _, e := range []error{syscall.ENOENT, os.ErrNotExist, context.Canceled} {
		if namespaceRefused(e) {
			t.Fatalf("%v is not about namespaces", e)
		}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Without namespaces the process limit still holds: RLIMIT_NPROC raised by
// the user's existing processes, or the cgroup as root.
func TestFallbackForkBombIsContained(t *testing.T) {
	needPython(t)
	cfg := unconfined()
	cfg.MaxProcesses = 16
	withoutNamespaces(t, func() {
		o, err := runOnce(context.Background(), cfg, "import os, time\nn = 0\ntry:\n    while True:\n"+
			"        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n        n += 1\n"+
			"except OSError as e:\n    print('forked', n)\n")
		if err != nil {
			t.Fatal(err)
		}
		if o.iso.processLimit == "none" {
			t.Skipf("no process limit here: %v", o.iso.meta()["notes"])
		}
		r := o.result()
		mustContain(t, r.Content, "forked")
		eventually(t, "the children are gone", func() bool { return !groupExists(o.pid) })
	})
}

// A kernel that refuses the namespaces (here: an invalid flag combination,
// EINVAL) makes the first run refuse, say why, and not ask again.
func TestKernelRefusalIsRefusedAndRemembered(t *testing.T) {
	needPython(t)
	makeKernelRefuseNamespaces(t)
	r := run(t, NewInterpreter(testConfig()), "print('ran')")
	if r.Success {
		t.Fatalf("ran without namespaces: %+v", r)
	}
	mustContain(t, r.Content, "refused user and network namespaces (invalid argument)", "allow_unconfined")
	if ok, why := namespacesUsable(); ok || !strings.Contains(why, "invalid argument") {
		t.Fatalf("the refusal was not remembered: %v %q", ok, why)
	}
}

// With allow_unconfined, the same refusal falls back and is explained.
func TestKernelRefusalFallsBackWhenAllowed(t *testing.T) {
	needPython(t)
	makeKernelRefuseNamespaces(t)
	r := run(t, NewInterpreter(unconfined()), "print('ran')")
	if !r.Success || r.Metadata["network_isolated"] != false {
		t.Fatalf("got %+v", r)
	}
	notes, _ := isolationOf(t, r)["notes"].([]string)
	if len(notes) == 0 || !strings.Contains(notes[0], "invalid argument") {
		t.Fatalf("the refusal is not explained: %v", notes)
	}
	if ok, why := namespacesUsable(); ok || why != notes[0] {
		t.Fatalf("the refusal was not remembered: %v %q", ok, why)
	}
}

// makeKernelRefuseNamespaces forgets the remembered namespace probe and
// adds a clone flag the kernel rejects with CLONE_NEWUSER (EINVAL), so the
// next run meets a refusing kernel; both are restored when the test ends.
func makeKernelRefuseNamespaces(t *testing.T) {
	t.Helper()
	nsState.Lock()
	known, usable, reason := nsState.known, nsState.usable, nsState.reason
	nsState.known = false
	nsState.Unlock()
	flags := sandboxCloneFlags
	sandboxCloneFlags |= syscall.CLONE_FS
	t.Cleanup(func() {
		sandboxCloneFlags = flags
		nsState.Lock()
		nsState.known, nsState.usable, nsState.reason = known, usable, reason
		nsState.Unlock()
	})
}

// A starting jarvis sweeps only the cgroups of jarvis processes that are
// gone: another one's cgroup is empty for a moment before its code moves
// in, and removing it then made that run fail.
func TestStaleCgroupSweepSparesLiveProcesses(t *testing.T) {
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("cannot start /bin/true:", err)
	}
	st, _ := p.Wait()
	cases := map[string]bool{
		cgroupPrefix + strconv.Itoa(st.Pid()) + "-abcdef":    true,
		cgroupPrefix + strconv.Itoa(os.Getpid()) + "-abcdef": false,
		cgroupPrefix + "a1b2c3d4e5f6":                        false,
	}
	for name, gone := range cases {
		if got := cgroupOwnerGone(name); got != gone {
			t.Errorf("cgroupOwnerGone(%q) = %v, want %v", name, got, gone)
		}
	}
}
