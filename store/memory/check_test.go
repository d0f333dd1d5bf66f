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
// of the memory's layout: each live chunk's postings are exactly the terms
// of its text, each posting belongs to a live chunk, term heads match their
// segments, lengths and counters match the chunks, and documents, chunks
// and source lists agree.
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

		// Chunks: what the index should hold.
		want := map[string]map[uint32]uint32{} // term -> chunk -> tf
		chunkDoc := map[uint32]string{}
		var tokens uint64
		each(bucketChunks, func(k, v []byte) {
			num := binary.BigEndian.Uint32(k)
			if num >= st.NextChunk {
				t.Errorf("chunk %d at or past NextChunk %d", num, st.NextChunk)
			}
			c, err := decodeChunk(v)
			if err != nil {
				t.Errorf("chunk %d: %v", num, err)
				return
			}
			chunkDoc[num] = c.DocID
			tf, dl := an.frequencies(c.Text, nil)
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
				return
			}
			if got := binary.LittleEndian.Uint16(blk[2*(num%lensPerBlock):]); int(got) != min(dl, 65534)+1 {
				t.Errorf("chunk %d: stored length %d, want %d", num, int(got)-1, dl)
			}
		})
		if uint64(len(chunkDoc)) != st.Chunks || tokens != st.Tokens {
			t.Errorf("stats say %d chunks / %d tokens; chunks bucket has %d / %d", st.Chunks, st.Tokens, len(chunkDoc), tokens)
		}
		each(bucketLens, func(k, v []byte) {
			base := binary.BigEndian.Uint32(k) * lensPerBlock
			for i := 0; i < lensPerBlock; i++ {
				if binary.LittleEndian.Uint16(v[2*i:]) != 0 && chunkDoc[base+uint32(i)] == "" {
					t.Errorf("length slot %d is live but chunk %d does not exist", base+uint32(i), base+uint32(i))
				}
			}
		})

		// Terms and postings: exactly what the chunks say.
		referenced := map[string]bool{}
		terms := 0
		each(bucketTerms, func(k, v []byte) {
			terms++
			term := string(k)
			h, err := decodeHead(v)
			if err != nil {
				t.Errorf("term %q: %v", term, err)
				return
			}
			got := map[uint32]uint32{}
			for i, sg := range h.segs {
				key := segKey(term, sg.id)
				referenced[string(key)] = true
				raw := get(bucketPost, key)
				if raw == nil {
					t.Errorf("term %q: segment %d missing", term, sg.id)
					continue
				}
				ps, err := decodePostings(sg.id, raw, nil)
				if err != nil {
					t.Errorf("term %q: %v", term, err)
					continue
				}
				if len(ps) != sg.count || len(ps) == 0 || len(ps) > segCap {
					t.Errorf("term %q segment %d: %d postings, head says %d", term, sg.id, len(ps), sg.count)
				}
				if ps[len(ps)-1].chunk != sg.last {
					t.Errorf("term %q segment %d: last chunk %d, head says %d", term, sg.id, ps[len(ps)-1].chunk, sg.last)
				}
				for j, p := range ps {
					if p.chunk < sg.id || (i+1 < len(h.segs) && p.chunk >= h.segs[i+1].id) || (j > 0 && p.chunk <= ps[j-1].chunk) {
						t.Errorf("term %q segment %d: chunk %d out of order or range", term, sg.id, p.chunk)
					}
					got[p.chunk] = p.tf
				}
			}
			tail, err := decodePostings(0, h.tail, nil)
			if err != nil {
				t.Errorf("term %q tail: %v", term, err)
			}
			if len(tail) != h.tailCount || h.tailCount >= segCap || (len(tail) > 0 && tail[len(tail)-1].chunk != h.tailLast) {
				t.Errorf("term %q: tail of %d postings, head says %d ending at %d", term, len(tail), h.tailCount, h.tailLast)
			}
			for j, p := range tail {
				if (len(h.segs) > 0 && p.chunk <= h.segs[len(h.segs)-1].last) || (j > 0 && p.chunk <= tail[j-1].chunk) {
					t.Errorf("term %q: tail chunk %d out of order", term, p.chunk)
				}
				got[p.chunk] = p.tf
			}
			if h.df != len(got) {
				t.Errorf("term %q: df %d, %d postings", term, h.df, len(got))
			}
			if !mapsEqual(got, want[term]) {
				t.Errorf("term %q: postings %v, want %v", term, got, want[term])
			}
		})
		for term := range want {
			if get(bucketTerms, []byte(term)) == nil {
				t.Errorf("term %q of a stored chunk is not indexed", term)
			}
		}
		each(bucketPost, func(k, _ []byte) {
			if !referenced[string(k)] {
				t.Errorf("orphan posting segment %q", k)
			}
		})
		if uint64(terms) != st.Terms {
			t.Errorf("stats say %d terms, index has %d", st.Terms, terms)
		}

		// Documents, their chunk ranges and the source lists.
		docs := 0
		sources := map[string][]string{}
		each(bucketDocs, func(k, v []byte) {
			docs++
			var rec docRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				t.Errorf("document %s: %v", k, err)
				return
			}
			for i := 0; i < rec.Chunks; i++ {
				if got := chunkDoc[rec.FirstChunk+uint32(i)]; got != rec.ID {
					t.Errorf("document %s: chunk %d belongs to %q", rec.ID, rec.FirstChunk+uint32(i), got)
				}
			}
			if rec.Source != "" {
				sources[rec.Source] = append(sources[rec.Source], rec.ID)
			}
		})
		if uint64(docs) != st.Docs {
			t.Errorf("stats say %d documents, bucket has %d", st.Docs, docs)
		}
		for _, id := range chunkDoc {
			if get(bucketDocs, []byte(id)) == nil {
				t.Errorf("chunk of missing document %s", id)
			}
		}
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
