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

// normCache holds, per chunk number, BM25's length normalisation
// k1*(1-b+b*dl/avgdl) for the generation it was read at, 0 marking a free
// chunk number, and that generation's segment list.
type normCache struct {
	gen  uint64
	norm []float32
	inv1 []float32 // 1/(1+norm): the tf = 1 factor, precomputed
	segs []segInfo
}

// termPostings is a query term's entries in the segments that have one.
type termPostings struct {
	text    string
	df      int64
	entries []segEntry
	weight  float32
}

type segEntry struct {
	base     uint32 // the segment's lo: the postings are relative to it
	postings []byte
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
		n, dead, ps, err := decodeEntry(raw)
		if err != nil {
			return tp, err
		}
		tp.df += int64(n) - dead
		if n > 0 {
			tp.entries = append(tp.entries, segEntry{base: s.lo, postings: ps})
		}
	}
	return tp, nil
}

// accumulator is a search's per-chunk score table, reused across searches.
// count is how many of the query's terms each chunk holds, kept only when
// all of them are required.
type accumulator struct {
	score    []float32
	count    []uint16
	touched  []uint32
	matching []uint32 // the touched chunks holding every required term
}

type cand struct {
	chunk uint32
	score float32
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
				for num, v := range nc.norm {
					if _, seen := byChunk[uint32(num)]; v != 0 && !seen {
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

// bm25 scores every chunk holding a query term (every term, for a query
// of stop words alone) and returns the best limit, best first, with the
// query's scoreScale.
func (s *Store) bm25(k kv, st statsRecord, nc *normCache, q query, limit int) ([]cand, float64, error) {
	n := float64(st.Chunks)
	scale := 0.0
	terms := make([]termPostings, 0, len(q.terms))
	for _, qt := range q.terms {
		tp, err := k.postings(nc.segs, qt.text)
		if err != nil {
			return nil, 0, err
		}
		if tp.df <= 0 {
			if q.stopOnly {
				return nil, 0, nil // no chunk holds them all
			}
			continue
		}
		df := float64(tp.df)
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		scale += scoreScale(idf, qt.weight, n, qt.stop)
		tp.weight = float32(qt.weight * idf * (bm25K1 + 1))
		terms = append(terms, tp)
	}

	acc, _ := s.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	defer s.accs.Put(acc)
	if len(acc.score) < len(nc.norm) {
		acc.score = make([]float32, len(nc.norm)+len(nc.norm)/4)
	}
	// A query of stop words requires them all: the rarest one picks the
	// candidates, and each further term scores only the chunks that hold
	// every term before it, so the commonest words cost little.
	all := q.stopOnly && len(terms) > 1
	if all {
		if len(acc.count) < len(nc.norm) {
			acc.count = make([]uint16, len(acc.score))
		}
		slices.SortFunc(terms, func(a, b termPostings) int { return cmp.Compare(a.df, b.df) })
	}
	score, count, touched := acc.score, acc.count, acc.touched[:0]
	defer func() {
		for _, c := range touched {
			score[c] = 0
		}
		if all {
			for _, c := range touched {
				count[c] = 0
			}
		}
		acc.touched = touched[:0]
	}()
	for ti, tp := range terms {
		w := tp.weight
		for _, e := range tp.entries {
			b, prev := e.postings, e.base
			for len(b) > 0 {
				var c, tf uint32
				if b[0]&0x81 == 0x01 { // one byte, tf 1: most postings
					c, tf = prev+uint32(b[0]>>1), 1
					b = b[1:]
				} else {
					var n int
					if c, tf, n = nextPosting(b, prev); n == 0 {
						return nil, 0, fmt.Errorf("%w: postings of %q", errCorrupt, tp.text)
					}
					b = b[n:]
				}
				prev = c
				if int(c) >= len(nc.norm) {
					return nil, 0, fmt.Errorf("%w: posting of %q for chunk %d past the end", errCorrupt, tp.text, c)
				}
				if nc.norm[c] == 0 {
					continue // a forgotten chunk, not merged away yet
				}
				if all {
					if int(count[c]) != ti {
						continue // lacks an earlier term
					}
					count[c]++
				}
				if score[c] == 0 {
					touched = append(touched, c)
				}
				if tf == 1 {
					score[c] += w * nc.inv1[c]
				} else {
					f := float32(tf)
					score[c] += w * f / (f + nc.norm[c])
				}
			}
		}
	}
	matching := touched
	if all {
		matching = acc.matching[:0]
		for _, c := range touched {
			if int(count[c]) == len(terms) {
				matching = append(matching, c)
			}
		}
		acc.matching = matching[:0]
	}
	return topK(score, matching, limit), scale, nil
}

// topK selects the limit best of the touched chunks with a min-heap, ties
// going to the older chunk.
func topK(score []float32, touched []uint32, limit int) []cand {
	worse := func(a, b cand) bool { return a.score < b.score || (a.score == b.score && a.chunk > b.chunk) }
	heap := make([]cand, 0, limit)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(heap) && worse(heap[l], heap[m]) {
				m = l
			}
			if r := l + 1; r < len(heap) && worse(heap[r], heap[m]) {
				m = r
			}
			if m == i {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for _, c := range touched {
		x := cand{chunk: c, score: score[c]}
		if len(heap) < limit {
			heap = append(heap, x)
			for i := len(heap) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(heap[i], heap[p]) {
					break
				}
				heap[i], heap[p] = heap[p], heap[i]
				i = p
			}
			continue
		}
		if worse(heap[0], x) {
			heap[0] = x
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b cand) int {
		if worse(b, a) {
			return -1
		}
		if worse(a, b) {
			return 1
		}
		return 0
	})
	return heap
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
	c := &normCache{gen: st.Gen, norm: make([]float32, st.NextChunk), inv1: make([]float32, st.NextChunk), segs: segs}
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
			c.norm[base+uint32(i/2)] = float32(norm)
			c.inv1[base+uint32(i/2)] = float32(1 / (1 + norm))
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
