package eval

import "testing"

// BenchmarkBuiltinSuite runs the whole built-in suite against the fake
// server answering it right: what the suite costs jarvis itself (agent
// loop, executor, sandboxes, scoring), the target being well under 60 s.
func BenchmarkBuiltinSuite(b *testing.B) {
	root := b.TempDir()
	srv := scripted(b, "builtin-right.json", root)
	suite := mustBuiltin(b)
	b.ResetTimer()
	for b.Loop() {
		rep := runSuite(b, srv, suite, root, runOpts{})
		if r := rep.Results[0]; r.Passed != r.Total {
			b.Fatalf("%d of %d passed", r.Passed, r.Total)
		}
	}
}
