//go:build unix

package code

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// needPython skips a test that runs real code when the machine has no
// python3: the tools cannot be exercised there, only their failure.
func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the code tools cannot run code on this machine")
	}
}

// testConfig is the default configuration with a short wall clock, so the
// tests that hit it do not take long.
func testConfig() Config {
	return Config{Timeout: 15, MaxProcesses: 32, MemoryMB: 256, MaxFileSizeMB: 8}.withDefaults()
}

func run(t *testing.T, tool tools.Tool, code string) tools.Result {
	t.Helper()
	return tool.Execute(context.Background(), tools.Args{"code": code})
}

// mustContain fails unless every part is in s.
func mustContain(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Fatalf("missing %q in:\n%s", p, s)
		}
	}
}

// isolationOf returns a result's isolation metadata.
func isolationOf(t *testing.T, r tools.Result) map[string]any {
	t.Helper()
	iso, ok := r.Metadata["isolation"].(map[string]any)
	if !ok {
		t.Fatalf("result has no isolation metadata: %v", r.Metadata)
	}
	return iso
}

// processesWith returns the pids of live processes whose command line
// contains s: how a test finds what the code started, in any namespace.
func processesWith(s string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "%d", &pid); err == nil && pid != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// groupExists reports whether any process (zombies included) is still in
// process group pgid.
func groupExists(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// eventually polls cond until it holds or the wait is over: killed
// processes are reaped asynchronously by whoever inherits them.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still true after 10s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// visibleDir makes a directory the sandbox sees as the host does (/tmp is
// replaced by a private one), open to every user so that only the sandbox
// can be what keeps the code out.
func visibleDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "jarvis-code-test-")
	if err != nil {
		t.Skipf("no /var/tmp to put a file the sandbox can see: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
