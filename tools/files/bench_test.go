package files

import "testing"

// BenchmarkSecretsFile is the cost of the sensitive-file rules for one
// file of an indexed tree, checked under both of its names.
func BenchmarkSecretsFile(b *testing.B) {
	s := NewSecrets()
	const p = "/home/someone/projects/jarvis/tools/memory/testdata/notes/2024/march/meeting-notes.md"
	for b.Loop() {
		if s.File(p, p) != "" {
			b.Fatal("refused")
		}
	}
}
