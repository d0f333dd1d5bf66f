package memory

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/internal/benchdata"
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

// BenchmarkIndexGoDistribution measures what `jarvis memory index` on the
// Go distribution's sources costs: the time to build the index from
// nothing, about a megabyte of files per transaction as the indexer
// commits them, and the size of the database file it leaves (uncompacted).
// std is the standard library without tests in chunks of the default size
// (about 12,000 chunks), all every .go file in chunks of 128 words (about
// 120,000). bench/fts5 runs the same batches through SQLite FTS5.
func BenchmarkIndexGoDistribution(b *testing.B) {
	for _, c := range goCorpora {
		b.Run(c.name, func(b *testing.B) {
			files, err := benchdata.GoSources(c.which)
			if err != nil {
				b.Skipf("Go sources not available: %v", err)
			}
			b.SetBytes(int64(benchdata.Bytes(files)))
			var size int64
			chunks := 0
			for range b.N {
				b.StopTimer()
				s := openBench(b)
				b.StartTimer()
				chunks = indexFiles(b, s, files, c.size, c.overlap)
				b.StopTimer()
				fi, err := os.Stat(s.db.Path())
				if err != nil {
					b.Fatal(err)
				}
				size = fi.Size()
				b.StartTimer()
			}
			b.ReportMetric(float64(size)/1e6, "db-MB")
			b.ReportMetric(float64(chunks), "chunks")
		})
	}
}

// BenchmarkAnalyseGoSource measures the part of indexing the standard
// library that needs no database: chunking each file and analysing its
// chunks into terms (BenchmarkIndexGoDistribution/std is the whole of
// it), on one goroutine, to tell the cost of the text from the cost of
// the writes. Each run starts from a new analyzer, as a new index does,
// so numbering the words met first is measured too.
func BenchmarkAnalyseGoSource(b *testing.B) {
	files, err := benchdata.GoSources(benchdata.Std)
	if err != nil {
		b.Skipf("Go sources not available: %v", err)
	}
	s := openBench(b)
	b.SetBytes(int64(benchdata.Bytes(files)))
	b.ResetTimer()
	for range b.N {
		s.an = newAnalyzer()
		vocab := s.an.takeVocab(benchdata.BatchBytes)
		for _, f := range files {
			s.analyse(&prepared{in: Input{Content: f.Text}, size: DefaultChunkSize, overlap: DefaultChunkOverlap}, vocab)
		}
	}
}

// goCorpora are the code corpora of the index benchmarks.
var goCorpora = []struct {
	name          string
	which         string
	size, overlap int
}{
	{"std", benchdata.Std, DefaultChunkSize, DefaultChunkOverlap},
	{"all", benchdata.All, 128, 16},
}

// indexFiles stores files as `jarvis memory index` does, a batch per
// transaction, and returns the number of chunks.
func indexFiles(tb testing.TB, s *Store, files []benchdata.File, size, overlap int) int {
	chunks := 0
	for _, batch := range benchdata.Batches(files) {
		ins := make([]Input, len(batch))
		for i, f := range batch {
			ins[i] = Input{Content: f.Text, Source: f.Path, Replace: true, ChunkSize: size, ChunkOverlap: overlap}
		}
		out, err := s.AddBatch(ctx, ins)
		if err != nil {
			tb.Fatal(err)
		}
		for _, a := range out {
			chunks += a.Chunks
		}
	}
	return chunks
}
