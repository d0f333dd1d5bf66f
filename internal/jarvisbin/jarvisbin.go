// Package jarvisbin builds the jarvis binary for tests that run it as a
// person would (in a pseudo-terminal, in a pipe), once per test process
// and the way `make build` does, so that what they measure and check is
// what ships.
package jarvisbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var built struct {
	sync.Once
	dir, path string
	err       error
	out       []byte
}

// Path returns the path of the built binary, building it the first time;
// t fails if it does not build.
func Path(t testing.TB) string {
	t.Helper()
	built.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "jarvis-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "jarvis")
		// The flags of make build: a static binary, without symbol
		// tables or build paths. Built without them, the binary started
		// 0.8–1.1 ms later (medians of 320 launches), so the start-up
		// benchmarks measured something other than what ships.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", built.path, "github.com/jarvis-workbench/jarvis")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("building jarvis: %v\n%s", built.err, built.out)
	}
	return built.path
}

// Remove deletes the binary Path built, if it built one; a TestMain calls
// it after the tests have run.
func Remove() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
