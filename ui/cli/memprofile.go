package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// memProfileEnv names a file where jarvis writes a heap profile (for `go
// tool pprof`) when it exits and, where the system has it, whenever it
// gets SIGUSR1, with the runtime's memory figures beside it (the file's
// name plus ".memstats"): how its memory is spent in a real session,
// which a test's model does not show. It is for people working on jarvis
// and is not documented in --help.
const memProfileEnv = "JARVIS_MEMPROFILE"

// startMemProfile arranges for the heap profile when memProfileEnv is
// set and returns what writes it at exit.
func startMemProfile(errw func(format string, a ...any)) (atExit func()) {
	path := os.Getenv(memProfileEnv)
	if path == "" {
		return func() {}
	}
	// One sample per 16 KiB allocated rather than per 512 KiB: the
	// profile then accounts for small, numerous allocations too.
	runtime.MemProfileRate = 16 << 10
	var mu sync.Mutex
	write := func() {
		mu.Lock()
		defer mu.Unlock()
		if err := writeHeapProfile(path); err != nil {
			errw("jarvis: %s: %v\n", memProfileEnv, err)
		}
	}
	stop := onProfileSignal(write)
	return func() {
		stop()
		write()
	}
}

// writeHeapProfile writes the heap profile after a collection, so that it
// shows what is live, through a temporary file so that a reader never
// sees half of one.
func writeHeapProfile(path string) error {
	runtime.GC()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stats := fmt.Sprintf("HeapAlloc %d\nHeapInuse %d\nHeapIdle %d\nHeapReleased %d\nHeapSys %d\nStackInuse %d\nGCSys %d\nOtherSys %d\nSys %d\nNumGC %d\nNextGC %d\n",
		ms.HeapAlloc, ms.HeapInuse, ms.HeapIdle, ms.HeapReleased, ms.HeapSys, ms.StackInuse, ms.GCSys, ms.OtherSys, ms.Sys, ms.NumGC, ms.NextGC)
	if err := os.WriteFile(path+".memstats", []byte(stats), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
