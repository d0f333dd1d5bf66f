package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// withMemProfile sets JARVIS_MEMPROFILE to path for one test and returns
// what startMemProfile will have reported and the function it reports
// with.
func withMemProfile(t *testing.T, path string) (*strings.Builder, func(string, ...any)) {
	t.Helper()
	t.Setenv(memProfileEnv, path)
	rate := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = rate })
	var errs strings.Builder
	return &errs, func(format string, a ...any) { fmt.Fprintf(&errs, format, a...) }
}

func TestMemProfileIsWrittenAtExit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	errs, errw := withMemProfile(t, path)
	startMemProfile(errw)()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) { // pprof's gzipped protobuf
		t.Errorf("the profile is not one pprof reads: % x", data[:min(len(data), 8)])
	}
	stats, err := os.ReadFile(path + ".memstats")
	if err != nil || !strings.Contains(string(stats), "HeapAlloc ") {
		t.Errorf("memory figures: %q, %v", stats, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	if errs.Len() > 0 {
		t.Errorf("errors: %s", errs)
	}
}

func TestMemProfileUnsetDoesNothing(t *testing.T) {
	t.Setenv(memProfileEnv, "")
	rate := runtime.MemProfileRate
	startMemProfile(func(string, ...any) { t.Error("reported something") })()
	if runtime.MemProfileRate != rate {
		t.Errorf("the sampling rate changed to %d without the variable", runtime.MemProfileRate)
	}
}

func TestMemProfileUnwritableSaysWhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "heap.pprof")
	errs, errw := withMemProfile(t, path)
	startMemProfile(errw)()
	if !strings.Contains(errs.String(), memProfileEnv) || !strings.Contains(errs.String(), "missing") {
		t.Errorf("error = %q, want the variable and the path named", errs)
	}
}
