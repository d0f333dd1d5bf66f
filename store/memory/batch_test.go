package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPreparedBatches writes batches the way `jarvis memory index` does,
// the next one prepared (its analysis under way) while one is written,
// and checks that each is stored whole, that a discarded one leaves
// nothing, and that a batch is written once.
func TestPreparedBatches(t *testing.T) {
	s, db := openTest(t, Options{})
	batch := func(n int, word string) []Input {
		var ins []Input
		for i := range n {
			ins = append(ins, Input{Source: fmt.Sprintf("%s/%d.txt", word, i), Replace: true, ChunkSize: 16, ChunkOverlap: 2,
				Content: strings.Repeat(fmt.Sprintf("%s parseDuration number%d café ", word, i), 40)})
		}
		return ins
	}
	first, err := s.Prepare(ctx, batch(30, "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := first.Write(); done <- err }()
	second, err := s.Prepare(ctx, batch(30, "beta"))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	added, err := second.Write()
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 30 || added[0].Chunks == 0 {
		t.Fatalf("second batch: %+v", added)
	}
	if _, err := second.Write(); err == nil {
		t.Error("a batch was written twice")
	}
	dropped, err := s.Prepare(ctx, batch(5, "gamma"))
	if err != nil {
		t.Fatal(err)
	}
	dropped.Discard()
	if _, err := dropped.Write(); err == nil {
		t.Error("a discarded batch was written")
	}
	for q, want := range map[string]string{"alpha": "alpha/", "beta": "beta/", "duration cafe": ""} {
		hits := mustSearch(t, s, q, 3)
		if len(hits) == 0 || !strings.HasPrefix(hits[0].Source, want) {
			t.Errorf("search %q: %+v", q, hits)
		}
	}
	if hits := mustSearch(t, s, "gamma", 3); len(hits) != 0 {
		t.Errorf("the discarded batch was stored: %+v", hits)
	}
	checkIndex(t, db)
}

// TestCancelledBatch checks that a batch cancelled before its analysis
// ends stores nothing and says why.
func TestCancelledBatch(t *testing.T) {
	s, db := openTest(t, Options{})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b, err := s.Prepare(cctx, []Input{{Source: "a.txt", Content: strings.Repeat("delta epsilon ", 5000)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled batch: %v", err)
	}
	if hits := mustSearch(t, s, "delta", 3); len(hits) != 0 {
		t.Errorf("the cancelled batch was stored: %+v", hits)
	}
	checkIndex(t, db)
}

// A batch's analysis starts once the batch prepared before it has taken
// all its inputs: the earlier one is what its transaction waits for, and
// sharing the processors with the next batch held it up.
func TestBatchesAreAnalysedInTurn(t *testing.T) {
	s, _ := openTest(t, Options{})
	var big []Input
	for i := range 200 {
		big = append(big, Input{Source: fmt.Sprintf("big/%d.txt", i), Content: strings.Repeat(fmt.Sprintf("word%d parseDuration café ", i), 300)})
	}
	first, err := s.Prepare(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Discard()
	second, err := s.Prepare(ctx, []Input{{Source: "small.txt", Content: "one small text"}})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Discard()
	if err := second.an.wait(0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.an.taken:
	default:
		t.Fatal("the second batch was analysed before the first had taken its inputs")
	}

	// A batch discarded before its turn does not hold up the ones after it.
	third, err := s.Prepare(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	third.Discard()
	fourth, err := s.Prepare(ctx, []Input{{Source: "after.txt", Content: "after the discarded batch"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fourth.Write(); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, s, "discarded", 3); len(hits) != 1 {
		t.Fatalf("the batch after a discarded one: %+v", hits)
	}
}
