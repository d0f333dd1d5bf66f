package tui_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// These benchmarks run the built binary in a pseudo-terminal, as a person
// would, and report what they measure as metrics. Each iteration is one
// launch, so run them with a small -benchtime (make bench does).

// cpuSeconds is the user+system CPU time a process has used so far.
func cpuSeconds(b testing.TB, pid int) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// Fields after the command name (which may contain spaces).
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}

func benchServer(b *testing.B) *ot.Server { return benchServer2(b) }

func benchServer2(b testing.TB) *ot.Server {
	srv := ot.New(b)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("stream test")).Reply(et.Flood(20000), et.Text(" END-OF-STREAM"))
	srv.Default(et.Text("ok"))
	return srv
}

// BenchmarkStartupFirstFrame is the time from launching jarvis to its first
// frame on the screen (target: under 50 ms).
func BenchmarkStartupFirstFrame(b *testing.B) {
	srv := benchServer(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		term := startTerminal(asT(b), 120, 40, "--host", srv.URL, "--model", "qwen3:8b")
		term.waitFor(10*time.Second, "Ask anything")
		total += time.Since(start)
		term.cmd.Process.Kill()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-frame")
}

// BenchmarkEndToEndStream20k streams 20,000 tokens from a loopback server
// into the TUI in a real pseudo-terminal and reports how long after the
// first token the last one is on screen, and the CPU time jarvis used for
// the whole answer (targets: under 0.6 s and under 0.6 CPU-seconds).
func BenchmarkEndToEndStream20k(b *testing.B) {
	srv := benchServer(b)
	var lag, cpu time.Duration
	for i := 0; i < b.N; i++ {
		// The answer is 20,000 tokens: a window that holds it.
		term := startTerminal(asT(b), 120, 40, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "--num-ctx", "32768")
		term.waitFor(10*time.Second, "Ask anything", "●")
		time.Sleep(300 * time.Millisecond) // let start-up settle
		before := cpuSeconds(b, term.cmd.Process.Pid)
		term.typeText("stream test\r")
		first := term.waitFor(10*time.Second, "quick brown fox")
		_ = first
		t0 := time.Now()
		term.waitFor(30*time.Second, "END-OF-STREAM", "ready")
		lag += time.Since(t0)
		cpu += time.Duration((cpuSeconds(b, term.cmd.Process.Pid) - before) * float64(time.Second))
		term.cmd.Process.Kill()
	}
	b.ReportMetric(lag.Seconds()/float64(b.N), "s/first-to-last-token")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/answer")
}

// BenchmarkIdleCPU measures the CPU jarvis uses while nothing happens
// (target: under 1%).
func BenchmarkIdleCPU(b *testing.B) {
	srv := benchServer(b)
	var pct float64
	for i := 0; i < b.N; i++ {
		term := startTerminal(asT(b), 120, 40, "--host", srv.URL, "--model", "qwen3:8b")
		term.waitFor(10*time.Second, "Ask anything", "●")
		time.Sleep(2 * time.Second) // start-up work (server check, scheduler recovery) is done
		before := cpuSeconds(b, term.cmd.Process.Pid)
		const window = 5 * time.Second
		time.Sleep(window)
		pct += (cpuSeconds(b, term.cmd.Process.Pid) - before) / window.Seconds() * 100
		term.cmd.Process.Kill()
	}
	b.ReportMetric(pct/float64(b.N), "%cpu-idle")
}
