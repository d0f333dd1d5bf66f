package cli

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// BenchmarkHeadlessStart is what a headless command costs from launch to
// exit, output into a pipe as in a script or a git hook (targets: version
// and tools list under 10 ms; ask within 15 ms of curl sending a chat
// request to the same server, which curl reports as ask-minus-curl-ms).
// Each iteration is one launch of the built binary.
func BenchmarkHeadlessStart(b *testing.B) {
	srv := ot.New(b)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.Default(et.Text("ok"))
	jarvis := func(args ...string) func() *exec.Cmd {
		return func() *exec.Cmd { return jarvisCommand(b, args...) }
	}
	// Each reports its mean (ms/run) and its median: on a shared machine a
	// few launches that wait for the processor move the mean, not the
	// median.
	run := func(b *testing.B, cmd func() *exec.Cmd) time.Duration {
		var total time.Duration
		each := make([]time.Duration, 0, b.N)
		for range b.N {
			c := cmd()
			start := time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", c.Args, err, out)
			}
			d := time.Since(start)
			total += d
			each = append(each, d)
		}
		slices.Sort(each)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(total)/float64(b.N), "ms/run")
		b.ReportMetric(ms(each[len(each)/2]), "median-ms")
		return total / time.Duration(b.N)
	}
	b.Run("version", func(b *testing.B) { run(b, jarvis("version")) })
	b.Run("tools-list", func(b *testing.B) { run(b, jarvis("tools", "list")) })
	b.Run("ask", func(b *testing.B) {
		curl, err := exec.LookPath("curl")
		if err != nil {
			b.Skip("no curl to compare with")
		}
		ask := run(b, jarvis("ask", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "hello"))
		var base time.Duration
		for range b.N {
			start := time.Now()
			out, err := exec.Command(curl, "-sS", "-d", `{"model":"qwen3:8b","messages":[{"role":"user","content":"hello"}]}`, srv.URL+"/api/chat").CombinedOutput()
			if err != nil {
				b.Fatalf("curl: %v\n%s", err, out)
			}
			base += time.Since(start)
		}
		base /= time.Duration(b.N)
		b.ReportMetric(float64((ask-base).Microseconds())/1000, "ask-minus-curl-ms")
	})
}
