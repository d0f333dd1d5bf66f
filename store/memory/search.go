package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/asdine/storm/v3"
)

// BM25 parameters (the usual Okapi values, as in SQLite FTS5 and Lucene).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Semantic candidates: the best BM25 chunks (at least semanticPool, or
// 10 times top_k), plus every embedded chunk while the memory holds at most
// bruteForceVectors of them, so that a query sharing no word with a chunk
// can still find it by meaning in a small or medium memory.
const (
	semanticPool      = 100
	bruteForceVectors = 20_000
)

// Hit is one search result: a chunk and its scores.
type Hit struct {
	DocID   string `json:"id"`
	Source  string `json:"source,omitempty"`
	Chunk   int    `json:"chunk"` // position in its document, from 0
	Content string `json:"content"`
	// Score (0..1) ranks the hits: Lexical alone, or blended with Semantic
	// when embeddings took part.
	Score float64 `json:"score"`
	// Lexical is the BM25 score on the 0..1 scale of scoreScale.
	Lexical float64 `json:"bm25"`
	// Semantic is the cosine similarity of the query's and the chunk's
	// embeddings, when both exist.
	Semantic *float64 `json:"semantic,omitempty"`
}

// Results are a search's hits and how they were ranked.
type Results struct {
	Hits []Hit `json:"hits"`
	// Semantic is true when embeddings took part in the ranking.
	Semantic bool `json:"semantic"`
	// Warning says why they did not although a model is configured.
	Warning string `json:"warning,omitempty"`
}

// normCache holds, per chunk number, BM25's length normalisation for the
// generation it was read at, and that generation's segment list.
type normCache struct {
	gen   uint64
	pairs []normPair
	segs  []segInfo
}

// normPair is a chunk's k1*(1-b+b*dl/avgdl), 0 for a free chunk number,
// and 1/(1+norm), the factor of a term found once: side by side, as a
// search reads them.
type normPair struct{ norm, inv1 float32 }

// part is a posting's share of its term's weight w, BM25's tf/(tf+norm);
// inv1 spares the division for the commonest case, tf 1.
func (p normPair) part(w float32, tf uint32) float32 {
	if tf == 1 {
		return w * p.inv1
	}
	f := float32(tf)
	return w * f / (f + p.norm)
}

// termPostings is a query term's entries in the segments that have one.
type termPostings struct {
	text    string
	df      int64
	entries []segEntry
	weight  float32
	avgdl   float64 // the memory's average chunk length
}

// segEntry is a term's entry in one segment.
type segEntry struct {
	entry
	base  uint32  // the segment's lo: the postings are relative to it
	avgdl float64 // the segment's, for which the impacts were computed
}

// postings finds a term's entries in segs and sums its document
// frequency.
func (k kv) postings(segs []segInfo, term string) (termPostings, error) {
	tp := termPostings{text: term}
	key := []byte(term)
	var buf []byte
	for _, s := range segs {
		b, err := k.segBucket(s.id, false)
		if err != nil {
			return tp, err
		}
		var raw []byte
		if raw, buf, err = lookup(b, key, buf); err != nil || raw == nil {
			if err != nil {
				return tp, err
			}
			continue
		}
		e, err := decodeEntry(raw, s.lo, true)
		if err != nil {
			return tp, err
		}
		tp.df += int64(e.n) - e.dead
		if e.n > 0 {
			tp.entries = append(tp.entries, segEntry{entry: e, base: s.lo, avgdl: s.avgdl})
		}
	}
	return tp, nil
}

// MaxResults bounds a search's k.
const MaxResults = 1000

// Search returns the k chunks that best match query (k <= 0 means 5, at
// most MaxResults). A chunk matches when it holds any of the query's words;
// stop words are left out when the query has other words. A query made
// only of stop words ("the who", "to be or not to be") finds the chunks
// that hold every one of them. A query without index terms (empty, or only
// punctuation) finds nothing.
func (s *Store) Search(ctx context.Context, query string, k int) (Results, error) {
	if err := s.ensure(); err != nil {
		return Results{}, err
	}
	if k <= 0 {
		k = 5
	}
	k = min(k, MaxResults)
	var res Results
	if strings.TrimSpace(query) == "" {
		return res, nil
	}
	q := s.an.query(query)
	var qvec []float32
	if s.Semantic() {
		v, err := s.opts.Embedder.Embed(ctx, s.opts.EmbedModel, []string{query})
		switch {
		case err != nil:
			res.Warning = fmt.Sprintf("semantic ranking skipped: embedding the query with %s failed (%v)", s.opts.EmbedModel, err)
		case len(v) != 1 || len(v[0]) == 0:
			res.Warning = fmt.Sprintf("semantic ranking skipped: %s returned no embedding for the query", s.opts.EmbedModel)
		default:
			qvec = v[0]
		}
	}
	if len(q.terms) == 0 && qvec == nil {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	err := s.db.View(func(n storm.Node) error {
		kvs := openKV(n)
		st, err := kvs.stats()
		if err != nil || st.Chunks == 0 {
			return err
		}
		nc, err := s.normsFor(kvs, st)
		if err != nil {
			return err
		}
		limit := k
		if qvec != nil {
			limit = max(semanticPool, 10*k)
		}
		cands, maxScore, err := s.bm25(kvs, st, nc, q, limit)
		if err != nil {
			return err
		}
		hits := make([]Hit, 0, len(cands))
		byChunk := make(map[uint32]int, len(cands))
		for _, c := range cands {
			byChunk[c.chunk] = len(hits)
			hits = append(hits, Hit{Lexical: clamp01(float64(c.score) / maxScore)})
		}
		nums := make([]uint32, len(cands))
		for i, c := range cands {
			nums[i] = c.chunk
		}
		if qvec != nil {
			res.Semantic = true
			if st.Vectors <= bruteForceVectors {
				for num, p := range nc.pairs {
					if _, seen := byChunk[uint32(num)]; p.norm != 0 && !seen {
						byChunk[uint32(num)] = len(hits)
						hits = append(hits, Hit{})
						nums = append(nums, uint32(num))
					}
				}
			}
			if err := s.blend(ctx, kvs, qvec, nums, hits); err != nil {
				return err
			}
		} else {
			for i := range hits {
				hits[i].Score = hits[i].Lexical
			}
		}
		order := make([]int, len(hits))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case hits[a].Score > hits[b].Score:
				return -1
			case hits[a].Score < hits[b].Score:
				return 1
			}
			return cmp.Compare(nums[a], nums[b])
		})
		for _, i := range order[:min(k, len(order))] {
			if qvec != nil && hits[i].Score <= 0 {
				break
			}
			t, seq, err := kvs.chunk(nums[i])
			if err != nil {
				return err
			}
			h := hits[i]
			h.DocID, h.Source, h.Chunk, h.Content = string(t.docID), string(t.source), seq, string(bytes.TrimSpace(t.chunk(seq)))
			res.Hits = append(res.Hits, h)
		}
		return nil
	})
	return res, err
}

// scoreScale is what a search's BM25 scores are divided by to put them on
// the 0..1 scale: the score a chunk would reach by matching every query
// term as strongly as a term can be matched (each term's idf × (k1+1),
// times its weight). A term's idf counts here as at least ln 2, the idf of
// a term in half the chunks, and a stop word's as at least the idf of a
// term in one chunk. So a term that says little about a chunk (it is in
// most of them) cannot reach a high score on its own: scores of different
// queries stay comparable, and a query of common words never outscores a
// rare word's match.
func scoreScale(idf, weight, chunks float64, stop bool) float64 {
	floor := math.Ln2
	if stop {
		floor = max(floor, math.Log(1+(chunks-0.5)/1.5))
	}
	return weight * max(idf, floor) * (bm25K1 + 1)
}

// normsFor returns the length normalisation for st's generation, reading
// the length blocks again when the memory has changed since the last read.
func (s *Store) normsFor(k kv, st statsRecord) (*normCache, error) {
	if c := s.norms.Load(); c != nil && c.gen == st.Gen {
		return c, nil
	}
	avgdl := float64(st.Tokens) / float64(st.Chunks)
	if avgdl <= 0 {
		avgdl = 1
	}
	segs, err := k.segments()
	if err != nil {
		return nil, err
	}
	c := &normCache{gen: st.Gen, pairs: make([]normPair, st.NextChunk), segs: segs}
	for blk := uint32(0); blk*lensPerBlock < st.NextChunk; blk++ {
		raw, err := k.get(bucketLens, u32key(blk))
		if err != nil {
			return nil, err
		}
		base := blk * lensPerBlock
		for i := 0; i+1 < len(raw) && base+uint32(i/2) < st.NextChunk; i += 2 {
			v := binary.LittleEndian.Uint16(raw[i:])
			if v == 0 {
				continue
			}
			dl := float64(v - 1)
			norm := bm25K1 * (1 - bm25B + bm25B*dl/avgdl)
			c.pairs[base+uint32(i/2)] = normPair{norm: float32(norm), inv1: float32(1 / (1 + norm))}
		}
	}
	s.norms.Store(c)
	return c, nil
}

// blend sets each hit's Semantic and Score: Score = (1-w)*Lexical +
// w*max(0, cosine), w = Options.SemanticWeight. A chunk without a
// comparable vector (stored before the model was configured, or with
// another model) keeps its lexical score, so it is neither boosted nor
// buried.
func (s *Store) blend(ctx context.Context, k kv, qvec []float32, nums []uint32, hits []Hit) error {
	w := s.opts.SemanticWeight
	for i, num := range nums {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		raw, err := k.get(bucketVecs, u32key(num))
		if err != nil {
			return err
		}
		v, ok := decodeVec(raw, s.opts.EmbedModel)
		if raw == nil || !ok || len(v) != len(qvec) {
			hits[i].Score = hits[i].Lexical
			continue
		}
		cos := cosine(qvec, v)
		hits[i].Semantic = &cos
		hits[i].Score = (1-w)*hits[i].Lexical + w*math.Max(0, cos)
	}
	return nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func clamp01(f float64) float64 {
	switch {
	case math.IsNaN(f) || f < 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}
