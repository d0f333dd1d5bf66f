package memory

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSources returns the Go files (tests excluded) of the standard
// library packages dirs, from the toolchain running the tests.
func goSources(tb testing.TB, dirs ...string) []Input {
	tb.Helper()
	var ins []Input
	for _, dir := range dirs {
		root := filepath.Join(build.Default.GOROOT, "src", dir)
		entries, err := os.ReadDir(root)
		if err != nil {
			tb.Skipf("Go sources not available: %v", err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				tb.Fatal(err)
			}
			ins = append(ins, Input{Content: string(b), Source: filepath.Join(dir, name), Replace: true})
		}
	}
	return ins
}

// TestGoSourceIdentifiers searches the time package's sources as people
// search code: by the words of an identifier, or by the identifier.
func TestGoSourceIdentifiers(t *testing.T) {
	s, _ := openTest(t, Options{ChunkSize: 128, ChunkOverlap: 16})
	if _, err := s.AddBatch(ctx, goSources(t, "time")); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"parse duration":        "func ParseDuration(",
		"ParseDuration":         "func ParseDuration(",
		"time.ParseDuration":    "func ParseDuration(",
		"parse_duration":        "func ParseDuration(",
		"append format":         "func (t Time) AppendFormat(",
		"unix milli":            "func (t Time) UnixMilli(",
		"zone abbreviation":     "abbrev",
		"ErrLocation not found": "errLocation",
	} {
		hits := mustSearch(t, s, q, 3)
		found := false
		for _, h := range hits {
			found = found || strings.Contains(h.Content, want)
		}
		if !found {
			var got []string
			for _, h := range hits {
				got = append(got, fmt.Sprintf("%s#%d", h.Source, h.Chunk))
			}
			t.Errorf("query %q: no chunk with %q in the top 3 (%v)", q, want, got)
		}
	}
}

// BenchmarkIndexGoSource measures indexing throughput on code, where
// identifiers are split into their words: the net/http, time and strconv
// packages (1.2 MB), in 128-word chunks, 200 files per transaction.
func BenchmarkIndexGoSource(b *testing.B) {
	ins := goSources(b, "net/http", "time", "strconv")
	total := 0
	for i := range ins {
		ins[i].ChunkSize, ins[i].ChunkOverlap = 128, 16
		total += len(ins[i].Content)
	}
	b.SetBytes(int64(total))
	for range b.N {
		b.StopTimer()
		s := openBench(b)
		b.StartTimer()
		for j := 0; j < len(ins); j += 200 {
			if _, err := s.AddBatch(ctx, ins[j:min(j+200, len(ins))]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
