package memory

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// markStale makes the memory in db look indexed by the analysis rules
// before the current ones, with a posting those rules never make, and
// starts its re-indexing as Store.init does.
func markStale(t testing.TB, db *store.DB) {
	t.Helper()
	err := db.Update(func(n storm.Node) error {
		putStale(t, n)
		k := openKV(n)
		st, err := k.stats()
		if err != nil {
			return err
		}
		st.Analyzer = analyzerVersion - 1
		return startRebuild(k, st)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rebuildProgress is what a test can see of a rebuild between steps.
type rebuildProgress struct {
	state    rebuildState
	running  bool
	segments int // index segments, listed or not
}

func readProgress(t *testing.T, db *store.DB) rebuildProgress {
	t.Helper()
	var p rebuildProgress
	err := db.View(func(n storm.Node) error {
		k := openKV(n)
		var err error
		if p.state, p.running, err = k.rebuildState(); err != nil {
			return err
		}
		if b, err := k.bucket(bucketSegs, false); err != nil || b == nil {
			return err
		}
		return k.n.From(bucketSegs).Select().RawEach(func(_, _ []byte) error { p.segments++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chunkBytes returns the text sizes of the live chunks numbered from..to-1.
func chunkBytes(t *testing.T, db *store.DB, from, to uint32) []int {
	t.Helper()
	var sizes []int
	err := db.View(func(n storm.Node) error {
		k := openKV(n)
		for num := from; num < to; num++ {
			text, i, err := k.chunk(num)
			if errors.Is(err, errCorrupt) {
				continue // a forgotten chunk's number
			}
			if err != nil {
				return err
			}
			sizes = append(sizes, len(text.chunk(i)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sizes
}

// TestRebuildRunsInBoundedSteps: re-indexing after a change of analysis
// rules is a series of transactions, each dropping the old index or
// indexing a bounded amount, with its progress in the database, so that
// another process can take the file between two steps and even finish the
// work.
func TestRebuildRunsInBoundedSteps(t *testing.T) {
	defer func(bytes, chunks int) {
		rebuildStepBytes, rebuildStepChunks = bytes, chunks
	}(rebuildStepBytes, rebuildStepChunks)
	rebuildStepBytes, rebuildStepChunks = 300, 4

	s, db := openTest(t, Options{ChunkSize: 12, ChunkOverlap: 2})
	var ids []string
	for i := range 30 {
		text := fmt.Sprintf("Note %d calls ParseDuration and reads max_file_size at a naïve café. %s", i, proseWithStopWords(i))
		ids = append(ids, mustAdd(t, s, Input{Content: text, Source: fmt.Sprint("n", i)}).ID)
	}
	for _, id := range ids[10:14] { // free chunk numbers in the middle
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	markStale(t, db)

	s2 := reopen(t, db, Options{})
	var clearSteps, indexSteps int
	for indexSteps < 4 {
		before := readProgress(t, db)
		done, err := s2.rebuildStep()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			t.Fatal("the rebuild finished in a handful of steps; the test wants to interrupt it")
		}
		after := readProgress(t, db)
		switch before.state.phase {
		case rebuildClear:
			clearSteps++
			if after.segments != 0 || after.state.phase != rebuildIndex {
				t.Fatalf("after the clearing step: %d segments left, phase %d", after.segments, after.state.phase)
			}
		case rebuildIndex:
			indexSteps++
			sizes := chunkBytes(t, db, before.state.next, after.state.next)
			sum := 0
			for _, n := range sizes[:len(sizes)-1] {
				sum += n
			}
			if len(sizes) == 0 || len(sizes) > rebuildStepChunks || sum >= rebuildStepBytes {
				t.Fatalf("an indexing step indexed %d chunks (%v bytes); bounds %d chunks, %d bytes", len(sizes), sizes, rebuildStepChunks, rebuildStepBytes)
			}
		default:
			t.Fatalf("phase %d in a rebuild of format %d", before.state.phase, formatVersion)
		}
		if !after.running {
			t.Fatal("the progress record disappeared mid-rebuild")
		}
	}
	if clearSteps != 1 {
		t.Errorf("clearing took %d steps, want one", clearSteps)
	}

	// Another process opens the memory mid-rebuild: it resumes from the
	// recorded progress and finishes before it searches.
	db2, err := store.Open(db.Path(), "second")
	if err != nil {
		t.Fatal(err)
	}
	s3 := reopen(t, db2, Options{})
	docs := map[string]bool{}
	for _, id := range searchIDs(t, s3, "naive cafe parse duration", MaxResults) {
		docs[id] = true
	}
	if len(docs) != 26 {
		t.Errorf("after the rebuild: %d notes found, want the 26 left", len(docs))
	}
	if got := searchIDs(t, s3, "stale", 5); len(got) != 0 {
		t.Error("a posting of the old index survived")
	}
	db2.Close()
	if p := readProgress(t, db); p.running {
		t.Errorf("progress record left after the rebuild: %+v", p.state)
	}
	checkIndex(t, db)
}

// TestRebuildOfAnEmptyMemory: nothing to index, still a clean finish.
func TestRebuildOfAnEmptyMemory(t *testing.T) {
	s, db := openTest(t, Options{})
	if _, err := s.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	markStale(t, db)
	s = reopen(t, db, Options{})
	if hits := mustSearch(t, s, "anything", 5); len(hits) != 0 {
		t.Errorf("hits in an empty memory: %v", hits)
	}
	checkIndex(t, db)
}

// TestRebuildAppliesTheNewRules: a memory indexed before accent folding
// and identifier splitting finds "naive" and "parse duration" once
// re-indexed.
func TestRebuildAppliesTheNewRules(t *testing.T) {
	s, db := openTest(t, Options{})
	id := mustAdd(t, s, Input{Content: "The naïve ParseDuration at the café."}).ID
	// Write the postings an analyzer without folding or splitting made.
	err := db.Update(func(n storm.Node) error {
		k := openKV(n)
		if err := k.dropBucket(bucketSegs); err != nil {
			return err
		}
		if err := k.del(bucketMeta, segmentsKey); err != nil {
			return err
		}
		w, err := newWriter(s, k)
		if err != nil {
			return err
		}
		for _, term := range []string{"the", "naïv", "parsedur", "at", "café"} {
			w.post(w.vocab(), 0, []termFreq{{term: w.vocab().number([]byte(term), false), tf: 1}})
		}
		w.postLo, w.postHi = 0, w.st.NextChunk
		return w.finish()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, reopen(t, db, Options{}), "naive", 5); len(got) != 0 {
		t.Fatalf("the old index already folds accents: %v", got)
	}
	markStale(t, db)
	s = reopen(t, db, Options{})
	for _, q := range []string{"naive", "cafe", "parse duration", "ParseDuration"} {
		if got := searchIDs(t, s, q, 5); !slices.Equal(got, []string{id}) {
			t.Errorf("after the rebuild, %q found %v", q, got)
		}
	}
	checkIndex(t, db)
}

// BenchmarkRebuildStep re-indexes a memory of 2,000 documents of 600
// words (4,000 chunks of the default size, 7.7 MB) and reports the
// duration of its transactions, which other processes wait for, and the
// rebuild's throughput.
func BenchmarkRebuildStep(b *testing.B) {
	s := openBench(b)
	c := newCorpus(3, 30_000, true)
	total := 0
	for i := 0; i < 2000; i += 200 {
		ins := make([]Input, 200)
		for j := range ins {
			ins[j] = Input{Content: c.text(600), Source: fmt.Sprint("doc-", i+j)}
			total += len(ins[j].Content)
		}
		if _, err := s.AddBatch(ctx, ins); err != nil {
			b.Fatal(err)
		}
	}
	var steps []time.Duration
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		markStale(b, s.db)
		start := time.Now()
		for {
			t0 := time.Now()
			done, err := s.rebuildStep()
			if err != nil {
				b.Fatal(err)
			}
			if done {
				break
			}
			steps = append(steps, time.Since(t0))
		}
		elapsed += time.Since(start)
	}
	b.StopTimer()
	slices.Sort(steps)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(len(steps))/float64(b.N), "steps")
	b.ReportMetric(ms(steps[len(steps)/2]), "p50-step-ms")
	b.ReportMetric(ms(steps[len(steps)*95/100]), "p95-step-ms")
	b.ReportMetric(ms(steps[len(steps)-1]), "max-step-ms")
	b.ReportMetric(float64(total)*float64(b.N)/1e6/elapsed.Seconds(), "MB/s")
}
