//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGUSR1 writes the profile of a process still running.
func TestMemProfileOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	_, errw := withMemProfile(t, path)
	stop := startMemProfile(errw)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatal("no profile written after SIGUSR1")
}
