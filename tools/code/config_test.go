//go:build unix

package code

import (
	"math"
	"strings"
	"testing"
)

// Negative and non-numeric limits are problems; zero keeps the default.
func TestCheckReportsLimitsThatCannotBeMeant(t *testing.T) {
	cfg := Config{Timeout: -1, CPUSeconds: 0, MemoryMB: -512, SessionCPUSeconds: -1,
		Docker: DockerConfig{CPUs: math.NaN(), PidsLimit: -2, Timeout: 0}}
	var keys []string
	cfg.Check(func(key, problem, fix string) {
		keys = append(keys, key)
		if !strings.HasPrefix(problem, "must be a positive number") || !strings.HasPrefix(fix, "leave it out for the default (") {
			t.Errorf("%s: %q; %q", key, problem, fix)
		}
	})
	want := "memory_mb session_cpu_seconds docker.pids_limit timeout docker.cpus"
	if strings.Join(keys, " ") != want {
		t.Fatalf("keys %v, want %s", keys, want)
	}
	Config{}.Check(func(key, _, _ string) { t.Errorf("the zero configuration has a problem at %s", key) })
}
