package fts5

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/jarvis-workbench/jarvis/internal/benchdata"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/memory"
)

var ctx = context.Background()

// index is one side of the comparison: an index being built in path.
type index interface {
	// add stores a batch of files in one transaction, which may still be
	// under way when it returns.
	add(files []benchdata.File) error
	// done waits for the transactions add started.
	done() error
	// search returns the number of hits of the 5 best for q.
	search(q string) (int, error)
	close() error
}

// corpora are the texts compared: the Go distribution's standard library
// in chunks of jarvis's default size, and all its .go files in small
// chunks; with JARVIS_BENCH_1M=1, also about a million chunks (see
// million), which takes minutes on each side.
var corpora = []corpus{
	{name: "std", which: benchdata.Std, size: memory.DefaultChunkSize, overlap: memory.DefaultChunkOverlap},
	{name: "all", which: benchdata.All, size: 128, overlap: 16},
}

// searchedCorpora are the corpora BenchmarkSearch searches: the 120,000
// chunks of "all", and the million chunks when asked for.
var searchedCorpora = []string{"all"}

func init() {
	if os.Getenv("JARVIS_BENCH_1M") == "1" {
		corpora = append(corpora, corpus{name: "1m", which: benchdata.All, size: 128, overlap: 16, million: true})
		searchedCorpora = append(searchedCorpora, "1m")
	}
}

type corpus struct {
	name          string
	which         string
	size, overlap int
	// million repeats the files, each copy under paths of its own, until
	// they make about a million chunks. Copies keep what a memory of that
	// size holds: chunks of the size people index code in, with the
	// vocabulary and term statistics of real code, as in many checkouts of
	// related repositories (forks, vendored modules, versions of one
	// project). Cutting the same files into chunks of a dozen words would
	// reach the count too, but with chunks nobody searches and postings
	// lists shaped unlike any real index. The copies share their text, so
	// the corpus costs no more memory than the files once.
	million bool
}

// files returns the corpus's texts.
func (c corpus) files() ([]benchdata.File, error) {
	files, err := benchdata.GoSources(c.which)
	if err != nil || !c.million {
		return files, err
	}
	chunks := 0
	for _, f := range files {
		cs, err := memory.Chunks(f.Text, c.size, c.overlap)
		if err != nil {
			return nil, err
		}
		chunks += len(cs)
	}
	copies := (1_000_000 + chunks - 1) / chunks
	out := make([]benchdata.File, 0, copies*len(files))
	for i := range copies {
		for _, f := range files {
			out = append(out, benchdata.File{Path: fmt.Sprintf("copy%d/%s", i, f.Path), Text: f.Text})
		}
	}
	return out, nil
}

// sides are the two indexes, built on the same chunks in the same
// transactions.
var sides = []struct {
	name string
	open func(path string, size, overlap int) (index, error)
}{
	{"jarvis", openJarvis},
	{"fts5", openFTS5},
}

// BenchmarkIndex builds each index from nothing, a megabyte of files per
// transaction as `jarvis memory index` commits them, and reports the
// throughput and the size of the file left (uncompacted: no VACUUM, no
// FTS5 'optimize').
func BenchmarkIndex(b *testing.B) {
	for _, c := range corpora {
		files, err := c.files()
		if err != nil {
			b.Skipf("Go sources not available: %v", err)
		}
		for _, side := range sides {
			b.Run(c.name+"/"+side.name, func(b *testing.B) {
				b.SetBytes(int64(benchdata.Bytes(files)))
				var size int64
				for range b.N {
					b.StopTimer()
					path := filepath.Join(b.TempDir(), "index.db")
					idx, err := side.open(path, c.size, c.overlap)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					build(b, idx, files)
					b.StopTimer()
					if err := idx.close(); err != nil {
						b.Fatal(err)
					}
					fi, err := os.Stat(path)
					if err != nil {
						b.Fatal(err)
					}
					size = fi.Size()
					b.StartTimer()
				}
				b.ReportMetric(float64(size)/1e6, "db-MB")
			})
		}
	}
}

// BenchmarkSearch measures the latency of searches for one to three words
// of the code (the 5 best chunks) in the index of every .go file (about
// 120,000 chunks; and about a million with JARVIS_BENCH_1M=1), and reports
// its percentiles, with the time the index took to build and its size
// (the same build as BenchmarkIndex's, which a million chunks make worth
// not doing twice).
func BenchmarkSearch(b *testing.B) {
	for _, c := range corpora {
		if !slices.Contains(searchedCorpora, c.name) {
			continue
		}
		files, err := c.files()
		if err != nil {
			b.Skipf("Go sources not available: %v", err)
		}
		queries := benchdata.Queries(files, 1000, 7)
		for _, side := range sides {
			b.Run(c.name+"/"+side.name, func(b *testing.B) {
				s := built(b, c.name+"/"+side.name, side.open, c.size, c.overlap, files)
				for _, q := range queries[:50] { // warm the page cache
					if _, err := s.idx.search(q); err != nil {
						b.Fatal(err)
					}
				}
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					q := queries[i%len(queries)]
					t0 := time.Now()
					n, err := s.idx.search(q)
					lat = append(lat, time.Since(t0))
					if err != nil || n == 0 {
						b.Fatalf("search %q: %v, %d hits", q, err, n)
					}
				}
				b.StopTimer()
				slices.Sort(lat)
				ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
				b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
				b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
				b.ReportMetric(s.took.Seconds(), "build-s")
				b.ReportMetric(float64(s.size)/1e6, "db-MB")
			})
		}
	}
}

// searched holds the indexes BenchmarkSearch built, by corpus and side:
// the testing package calls a benchmark function several times, and an
// index of 120,000 chunks is built once.
var searched = map[string]*searchedIndex{}

type searchedIndex struct {
	idx  index
	took time.Duration // to build it
	size int64         // of its file once built
}

func built(b *testing.B, key string, open func(string, int, int) (index, error), size, overlap int, files []benchdata.File) *searchedIndex {
	if s := searched[key]; s != nil {
		return s
	}
	dir, err := os.MkdirTemp("", "jarvis-fts5-bench-")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "index.db")
	idx, err := open(path, size, overlap)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	build(b, idx, files)
	s := &searchedIndex{idx: idx, took: time.Since(t0)}
	if fi, err := os.Stat(path); err == nil {
		s.size = fi.Size()
	}
	searched[key] = s
	cleanups = append(cleanups, func() { idx.close(); os.RemoveAll(dir) })
	return s
}

// cleanups run when the benchmarks are done.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

func build(tb testing.TB, idx index, files []benchdata.File) {
	for _, batch := range benchdata.Batches(files) {
		if err := idx.add(batch); err != nil {
			tb.Fatal(err)
		}
	}
	if err := idx.done(); err != nil {
		tb.Fatal(err)
	}
}

// jarvisIndex is the memory as `jarvis memory index` fills it: a batch
// is prepared (its analysis started) while the one before is written.
type jarvisIndex struct {
	db            *store.DB
	s             *memory.Store
	size, overlap int
	writing       chan error // the batch being written, if any
}

func openJarvis(path string, size, overlap int) (index, error) {
	db, err := store.Open(path, "bench")
	if err != nil {
		return nil, err
	}
	if err := db.KeepOpen(); err != nil {
		return nil, err
	}
	s, err := memory.New(db, memory.Options{})
	if err != nil {
		return nil, err
	}
	return &jarvisIndex{db: db, s: s, size: size, overlap: overlap}, nil
}

func (j *jarvisIndex) add(files []benchdata.File) error {
	ins := make([]memory.Input, len(files))
	for i, f := range files {
		ins[i] = memory.Input{Content: f.Text, Source: f.Path, Replace: true, ChunkSize: j.size, ChunkOverlap: j.overlap}
	}
	b, err := j.s.Prepare(ctx, ins)
	if err != nil {
		return err
	}
	if err := j.done(); err != nil {
		b.Discard()
		return err
	}
	j.writing = make(chan error, 1)
	go func(ch chan<- error) {
		_, err := b.Write()
		ch <- err
	}(j.writing)
	return nil
}

func (j *jarvisIndex) done() error {
	if j.writing == nil {
		return nil
	}
	err := <-j.writing
	j.writing = nil
	return err
}

func (j *jarvisIndex) search(q string) (int, error) {
	res, err := j.s.Search(ctx, q, 5)
	return len(res.Hits), err
}

func (j *jarvisIndex) close() error { return j.db.Close() }

// ftsIndex is an FTS5 table of the same chunks, with SQLite's default
// durability (a rollback journal, synchronous FULL), as bbolt syncs every
// commit.
type ftsIndex struct {
	db            *sql.DB
	size, overlap int
}

func openFTS5(path string, size, overlap int) (index, error) {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE chunks USING fts5(source UNINDEXED, text, tokenize = 'porter unicode61')`); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating the FTS5 table (is the driver built with -tags sqlite_fts5?): %w", err)
	}
	return &ftsIndex{db: db, size: size, overlap: overlap}, nil
}

func (f *ftsIndex) add(files []benchdata.File) error {
	tx, err := f.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO chunks (source, text) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	for _, file := range files {
		chunks, err := memory.Chunks(file.Text, f.size, f.overlap)
		if err != nil {
			return err
		}
		for _, c := range chunks {
			if _, err := ins.Exec(file.Path, c); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// search ORs the query's words, as jarvis does, each quoted so that FTS5
// reads no operator in them.
func (f *ftsIndex) search(q string) (int, error) {
	words := strings.Fields(q)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	rows, err := f.db.Query(`SELECT source, text FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT 5`, strings.Join(words, " OR "))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var source, text string
		if err := rows.Scan(&source, &text); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func (f *ftsIndex) done() error { return nil } // add commits

func (f *ftsIndex) close() error { return f.db.Close() }
