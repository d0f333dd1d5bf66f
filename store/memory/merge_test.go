package memory

import (
	"math"
	"testing"
)

// TestSegmentationDoesNotChangeResults: a memory written in many small
// transactions, with merges in steps of a few terms, blocks of a few terms
// and texts forgotten and stored again in between, ranks every query as
// one written in a single transaction, score for score.
func TestSegmentationDoesNotChangeResults(t *testing.T) {
	ins := goSources(t, "time")
	for i := range ins {
		ins[i].ChunkSize, ins[i].ChunkOverlap = 128, 16
	}
	whole, _ := openTest(t, Options{})
	if _, err := whole.AddBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}

	tinyMerges(t)
	parts, db := openTest(t, Options{})
	for i, in := range ins {
		if _, err := parts.Add(ctx, in); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 { // forgotten, then stored again: dead postings to drop
			if _, err := parts.DeleteSource(ctx, ins[i-2].Source); err != nil {
				t.Fatal(err)
			}
			if _, err := parts.Add(ctx, ins[i-2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{"parse duration", "ParseDuration", "time zone location", "the", "unix nano second", "abbrev", "Month String", "leap year"} {
		a, b := mustSearch(t, whole, q, 10), mustSearch(t, parts, q, 10)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%q: %d hits in one transaction, %d in many", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Source != b[i].Source || a[i].Chunk != b[i].Chunk || math.Abs(a[i].Score-b[i].Score) > 1e-6 {
				t.Errorf("%q hit %d: %s#%d %.6f in one transaction, %s#%d %.6f in many", q, i, a[i].Source, a[i].Chunk, a[i].Score, b[i].Source, b[i].Chunk, b[i].Score)
			}
		}
	}
	sa, err := whole.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := parts.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Terms != sb.Terms || sa.Chunks != sb.Chunks || sa.Tokens != sb.Tokens {
		t.Errorf("stats of one transaction %+v, of many %+v", sa, sb)
	}
	checkIndex(t, db)
}

func TestPickMerge(t *testing.T) {
	seg := func(kb ...int64) []segInfo {
		var out []segInfo
		for i, b := range kb {
			out = append(out, segInfo{id: uint32(i), lo: uint32(10 * i), hi: uint32(10*i + 10), bytes: b << 10})
		}
		return out
	}
	for _, c := range []struct {
		segs         []segInfo
		first, count int
	}{
		{seg(2000, 300, 300, 300), 0, 0},                    // three of a level
		{seg(2000, 300, 300, 300, 300), 1, 4},               // four
		{seg(5000, 2000, 2000, 2000, 10, 10), 0, 4},         // within a level's span
		{seg(300, 300, 300, 300, 10, 10, 10, 10, 10), 4, 4}, // the smallest merge first
		{seg(10, 50, 3, 20, 1), 0, 4},                       // all below the first level
	} {
		if first, count := pickMerge(c.segs); first != c.first || count != c.count {
			t.Errorf("pickMerge(%v) = %d, %d; want %d, %d", c.segs, first, count, c.first, c.count)
		}
	}
	many := make([]int64, maxSegments+1)
	for i := range many {
		many[i] = []int64{1, 100, 300, 2000}[i%4] // no tier has two neighbours
	}
	if first, count := pickMerge(seg(many...)); count != mergeFactor || first < 0 {
		t.Errorf("with %d segments: pickMerge = %d, %d; want a merge of %d", len(many), first, count, mergeFactor)
	}
	dead := seg(1000, 300)
	dead[1].dead = 6
	if first, count := pickMerge(dead); first != 1 || count != 1 {
		t.Errorf("a segment more than half forgotten: pickMerge = %d, %d; want it rewritten alone", first, count)
	}
}
