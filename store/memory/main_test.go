package memory

import (
	"os"
	"testing"
)

// cleanups run after all tests and benchmarks (shared benchmark corpora).
var cleanups []func()

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		return
	}
	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}
