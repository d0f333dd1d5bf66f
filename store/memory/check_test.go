package memory

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
	bolt "go.etcd.io/bbolt"

	"github.com/jarvis-workbench/jarvis/store"
)

// openTest opens a memory in a fresh database file.
func openTest(t testing.TB, opts Options) (*Store, *store.DB) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

// checkIndex closes db and verifies, with bbolt directly, every invariant
// of the memory's layout: each document's text record holds its content
// and chunk spans; the live chunks' postings in the segments are exactly
// the terms of their texts, each once, with only forgotten chunks' postings
// besides; every term's entries sum to its document frequency; segments
// cover ascending, disjoint ranges and are what the segment list (and a
// merge in progress) says; lengths and counters match the chunks; and
// documents, texts and source lists agree.
func checkIndex(t *testing.T, db *store.DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(db.Path(), 0o600, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	an := newAnalyzer()
	err = bdb.View(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte(rootBucket))
		if root == nil {
			t.Fatal("no memory bucket")
		}
		get := func(name string, key []byte) []byte {
			if b := root.Bucket([]byte(name)); b != nil {
				return b.Get(key)
			}
			return nil
		}
		each := func(name string, fn func(k, v []byte)) {
			b := root.Bucket([]byte(name))
			if b == nil {
				return
			}
			b.ForEach(func(k, v []byte) error {
				if v != nil { // storm keeps its own metadata in sub-buckets
					fn(k, v)
				}
				return nil
			})
		}
		st, err := decodeStats(root.Bucket([]byte(bucketMeta)).Get(statsKey))
		if err != nil {
			t.Fatal(err)
		}
		if st.Format != formatVersion || st.Analyzer != analyzerVersion {
			t.Errorf("stats say format %d analyzer %d", st.Format, st.Analyzer)
		}
		for _, old := range []string{format1Chunks, format1Terms, format1Post} {
			if root.Bucket([]byte(old)) != nil {
				t.Errorf("bucket %q of format 1 left", old)
			}
		}

		// Documents.
		docs := map[string]docRecord{}
		sources := map[string][]string{}
		each(bucketDocs, func(k, v []byte) {
			var rec docRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				t.Errorf("document %s: %v", k, err)
				return
			}
			docs[rec.ID] = rec
			if rec.Source != "" {
				sources[rec.Source] = append(sources[rec.Source], rec.ID)
			}
		})
		if uint64(len(docs)) != st.Docs {
			t.Errorf("stats say %d documents, bucket has %d", st.Docs, len(docs))
		}

		// Texts and chunks: what the index should hold.
		want := map[string]map[uint32]uint32{} // term -> chunk -> tf
		chunkDoc := map[uint32]string{}
		var tokens uint64
		texts := 0
		each(bucketTexts, func(k, v []byte) {
			texts++
			first := binary.BigEndian.Uint32(k)
			tv, err := decodeText(v)
			if err != nil {
				t.Errorf("text %d: %v", first, err)
				return
			}
			rec, ok := docs[string(tv.docID)]
			if !ok || rec.FirstChunk != first || rec.Chunks != len(tv.spans) || rec.Source != string(tv.source) {
				t.Errorf("text %d of document %s (%d chunks, source %q) does not match its record %+v", first, tv.docID, len(tv.spans), tv.source, rec)
			}
			if hashOf(string(tv.content)) != rec.Hash || len(tv.content) != rec.Bytes {
				t.Errorf("text %d: content is not the document's (%d bytes, record says %d)", first, len(tv.content), rec.Bytes)
			}
			if rec.Chunks > 0 && (tv.spans[0].start != 0 || tv.spans[len(tv.spans)-1].end != len(tv.content)) {
				t.Errorf("text %d: spans %v do not cover its %d bytes", first, tv.spans, len(tv.content))
			}
			for i, sp := range tv.spans {
				if sp.start > sp.end || (i > 0 && (sp.start <= tv.spans[i-1].start || sp.start > tv.spans[i-1].end)) {
					t.Errorf("text %d: spans %v do not tile", first, tv.spans)
				}
				num := first + uint32(i)
				if num >= st.NextChunk {
					t.Errorf("chunk %d at or past NextChunk %d", num, st.NextChunk)
				}
				chunkDoc[num] = rec.ID
				tf, dl := an.frequencies(string(tv.chunk(i)))
				tokens += uint64(dl)
				for term, n := range tf {
					if want[term] == nil {
						want[term] = map[uint32]uint32{}
					}
					want[term][num] = n
				}
				blk := get(bucketLens, u32key(num/lensPerBlock))
				if blk == nil {
					t.Errorf("chunk %d has no length block", num)
					continue
				}
				if got := binary.LittleEndian.Uint16(blk[2*(num%lensPerBlock):]); int(got) != min(dl, 65534)+1 {
					t.Errorf("chunk %d: stored length %d, want %d", num, int(got)-1, dl)
				}
			}
		})
		for id, rec := range docs {
			if rec.Chunks > 0 && get(bucketTexts, u32key(rec.FirstChunk)) == nil {
				t.Errorf("document %s has no text", id)
			}
		}
		if uint64(len(chunkDoc)) != st.Chunks || tokens != st.Tokens {
			t.Errorf("stats say %d chunks / %d tokens; texts have %d / %d", st.Chunks, st.Tokens, len(chunkDoc), tokens)
		}
		each(bucketLens, func(k, v []byte) {
			base := binary.BigEndian.Uint32(k) * lensPerBlock
			for i := 0; i < lensPerBlock; i++ {
				if binary.LittleEndian.Uint16(v[2*i:]) != 0 && chunkDoc[base+uint32(i)] == "" {
					t.Errorf("length slot %d is live but chunk %d does not exist", base+uint32(i), base+uint32(i))
				}
			}
		})

		lens := func(c uint32) int {
			blk := get(bucketLens, u32key(c/lensPerBlock))
			if blk == nil {
				return -1
			}
			return int(binary.LittleEndian.Uint16(blk[2*(c%lensPerBlock):])) - 1
		}

		// Segments: exactly what the chunks say, once, plus postings of
		// forgotten chunks; document frequencies exact.
		segs, err := decodeSegs(root.Bucket([]byte(bucketMeta)).Get(segmentsKey))
		if err != nil {
			t.Fatal(err)
		}
		parent := root.Bucket([]byte(bucketSegs))
		buckets := map[uint32]bool{}
		if parent != nil {
			parent.ForEachBucket(func(k []byte) error {
				buckets[binary.BigEndian.Uint32(k)] = true
				return nil
			})
		}
		if raw := root.Bucket([]byte(bucketMeta)).Get(mergeKey); raw != nil {
			m, err := decodeMerge(raw)
			if err != nil {
				t.Fatal(err)
			}
			at := slices.IndexFunc(segs, func(s segInfo) bool { return s.id == m.first })
			if at < 0 || at+m.count > len(segs) || !buckets[m.out] {
				t.Errorf("merge %+v: inputs or output missing from %+v", m, segs)
			}
			delete(buckets, m.out)
		}
		df := map[string]int64{}
		got := map[string]map[uint32]uint32{}
		for i, sg := range segs {
			if sg.lo > sg.hi || sg.hi > st.NextChunk || (i > 0 && sg.lo < segs[i-1].hi) || uint64(sg.id) >= st.NextSeg {
				t.Errorf("segment %+v out of order (segments %+v, next chunk %d)", sg, segs, st.NextChunk)
			}
			if !buckets[sg.id] {
				t.Errorf("segment %d is listed but missing", sg.id)
				continue
			}
			delete(buckets, sg.id)
			checkEntry := func(term string, v []byte) {
				e, err := decodeEntry(v, sg.lo, true)
				if err != nil {
					t.Errorf("segment %d term %q: %v", sg.id, term, err)
					return
				}
				n, dead := e.n, e.dead
				ps, err := decodePostings(sg.lo, e.postings, nil)
				if err != nil || len(ps) != n || (n == 0 && dead == 0) {
					t.Errorf("segment %d term %q: %d postings (%v), entry says %d, dead %d", sg.id, term, len(ps), err, n, dead)
				}
				checkBlocks(t, e, ps, sg, lens)
				df[term] += int64(n) - dead
				for j, p := range ps {
					if p.chunk < sg.lo || p.chunk >= sg.hi || (j > 0 && p.chunk <= ps[j-1].chunk) {
						t.Errorf("segment %d term %q: chunk %d out of order or range", sg.id, term, p.chunk)
					}
					if chunkDoc[p.chunk] == "" {
						continue // forgotten, not merged away yet
					}
					if got[term] == nil {
						got[term] = map[uint32]uint32{}
					}
					if _, twice := got[term][p.chunk]; twice {
						t.Errorf("term %q: chunk %d posted twice", term, p.chunk)
					}
					got[term][p.chunk] = p.tf
				}
			}
			var bytes int64
			entries := 0
			var last []byte
			parent.Bucket(u32key(sg.id)).ForEach(func(k, v []byte) error {
				bytes += int64(len(k) + len(v))
				r := blockReader{b: v}
				for first := true; ; first = false {
					ok, err := r.next()
					if err != nil {
						t.Errorf("segment %d block %q: %v", sg.id, k, err)
					}
					if !ok {
						break
					}
					if (first && string(r.term) != string(k)) || (last != nil && string(r.term) <= string(last)) {
						t.Errorf("segment %d block %q: term %q out of order (after %q)", sg.id, k, r.term, last)
					}
					last = append(last[:0], r.term...)
					entries++
					checkEntry(string(r.term), r.entry)
				}
				return nil
			})
			if entries != sg.entries || bytes != sg.bytes {
				t.Errorf("segment %d: %d entries of %d bytes, list says %d of %d", sg.id, entries, bytes, sg.entries, sg.bytes)
			}
		}
		for id := range buckets {
			t.Errorf("orphan segment %d", id)
		}
		for term, w := range want {
			if !mapsEqual(got[term], w) {
				t.Errorf("term %q: postings %v, want %v", term, got[term], w)
			}
		}
		for term, n := range df {
			if n != int64(len(want[term])) {
				t.Errorf("term %q: document frequency %d, %d live chunks hold it", term, n, len(want[term]))
			}
		}

		// Source lists and vectors.
		listed := 0
		each(bucketSources, func(k, v []byte) {
			r := reader{b: v}
			var ids []string
			for len(r.b) > 0 && !r.err {
				ids = append(ids, r.string())
			}
			listed++
			a, b := slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(sources[string(k)]))
			if !slices.Equal(a, b) {
				t.Errorf("source %q lists %v, documents say %v", k, a, b)
			}
		})
		if listed != len(sources) {
			t.Errorf("%d source lists for %d sources", listed, len(sources))
		}
		vectors := 0
		each(bucketVecs, func(k, _ []byte) {
			vectors++
			if chunkDoc[binary.BigEndian.Uint32(k)] == "" {
				t.Errorf("vector of missing chunk %d", binary.BigEndian.Uint32(k))
			}
		})
		if uint64(vectors) != st.Vectors {
			t.Errorf("stats say %d vectors, bucket has %d", st.Vectors, vectors)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// putStale writes, in the transaction of n, a segment with a posting no
// text makes ("stale", for chunk 0), as an index written by other
// analysis rules would hold.
func putStale(t testing.TB, n storm.Node) {
	t.Helper()
	k := openKV(n)
	w, err := newWriter(&Store{an: newAnalyzer()}, k)
	if err != nil {
		t.Fatal(err)
	}
	v := w.vocab()
	w.post(v, 0, []termFreq{{term: v.number([]byte("stale"), false), tf: 1}})
	w.postLo, w.postHi = 0, max(w.st.NextChunk, 1)
	if _, err := w.writeSegment(); err != nil {
		t.Fatal(err)
	}
	if err := k.put(bucketMeta, segmentsKey, encodeSegs(w.segs)); err != nil {
		t.Fatal(err)
	}
	if err := k.put(bucketMeta, statsKey, w.st.encode()); err != nil {
		t.Fatal(err)
	}
}

func mapsEqual(a, b map[uint32]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// reopen opens the memory again after checkIndex closed the file.
func reopen(t *testing.T, db *store.DB, opts Options) *Store {
	t.Helper()
	s, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// search is Search for tests: the hits' document ids in order.
func searchIDs(t *testing.T, s *Store, q string, k int) []string {
	t.Helper()
	res, err := s.Search(context.Background(), q, k)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.DocID)
	}
	return ids
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// tinyMerges makes every four neighbouring segments merge, in steps
// of a term or two, and index blocks hold a few terms, for the test's
// duration.
func tinyMerges(t *testing.T) {
	t.Helper()
	tierBytes, ratio, minBudget, block := mergeTierBytes, mergeRatio, mergeMinBudget, blockBytes
	t.Cleanup(func() { mergeTierBytes, mergeRatio, mergeMinBudget, blockBytes = tierBytes, ratio, minBudget, block })
	mergeTierBytes, mergeRatio, mergeMinBudget, blockBytes = 1<<40, 1, 16, 40
}

// checkBlocks verifies an entry's blocks against its postings: blocks of
// blockPostings for longer lists, ending where the table says, each with
// the largest impact of its postings for the segment's average chunk
// length (that of the chunks' lengths now, when they are live).
func checkBlocks(t *testing.T, e entry, ps []posting, sg segInfo, dl func(uint32) int) {
	t.Helper()
	want := (len(ps) + blockPostings - 1) / blockPostings
	if len(ps) <= blockPostings {
		want = 0
	}
	if len(e.blocks) != want {
		t.Errorf("segment %d: %d blocks for %d postings", sg.id, len(e.blocks), len(ps))
		return
	}
	prev := sg.lo
	for i, b := range e.blocks {
		blk := ps[i*blockPostings : min((i+1)*blockPostings, len(ps))]
		start := 0
		if i > 0 {
			start = e.blocks[i-1].end
		}
		got, err := decodePostings(prev, e.postings[start:b.end], nil)
		if err != nil || len(got) != len(blk) || got[len(got)-1] != blk[len(blk)-1] || b.last != blk[len(blk)-1].chunk {
			t.Errorf("segment %d block %d: ends at %d (chunk %d), postings %v", sg.id, i, b.end, b.last, blk)
		}
		top, live := uint8(0), true
		for _, p := range blk {
			if d := dl(p.chunk); d >= 0 {
				top = max(top, impact(p.tf, d, sg.avgdl))
			} else {
				live = false
			}
		}
		if live && b.impact != top {
			t.Errorf("segment %d block %d: impact %d, its postings' largest is %d", sg.id, i, b.impact, top)
		}
		prev = b.last
	}
}
