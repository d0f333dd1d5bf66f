package memory

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A search scores the chunks a window of scoreWindow chunk numbers at a
// time, every query term's postings for the window in turn (their
// segments are in chunk order): the window's scores and lengths stay in
// the processor's cache, where scattering a term's postings over the whole
// memory's score table missed it at every posting. Within a window, the
// terms are split as in MaxScore (Turtle and Flood, 1995), with the bounds
// of the blocks of postings the window holds (block-max, Ding and Suel,
// 2011): once the best chunks so far are known, the terms whose bounds
// together do not reach the last of them cannot bring a chunk in on their
// own, so their postings only add to the chunks the other terms found;
// and a window where no term can is skipped, its blocks left undecoded.
const scoreWindow = 1024

// accumulator is a search's scores for one window, reused across
// searches. count is how many of the query's terms each chunk holds,
// kept only when all of them are required.
type accumulator struct {
	score   [scoreWindow]float32
	count   [scoreWindow]uint16
	touched []uint16
}

type cand struct {
	chunk uint32
	score float32
}

// postingCursor reads a term's postings across its segments' entries, in
// chunk order.
type postingCursor struct {
	tp   *termPostings
	e    int // the entry being read
	b    []byte
	prev uint32
	blk  int // the entry's block holding the next posting
	// scale turns the entry's impacts into bounds of what a posting adds
	// to a score: the term's weight over 255, times how much longer the
	// average chunk is now than when the impacts were computed (a
	// posting's share of its weight grows with it).
	scale float32
}

func (c *postingCursor) done() bool { return c.e >= len(c.tp.entries) }

// nextEntry moves to the cursor's next entry.
func (c *postingCursor) nextEntry(avgdl float64) {
	c.e++
	c.blk = 0
	if c.e < len(c.tp.entries) {
		e := &c.tp.entries[c.e]
		c.b, c.prev = e.postings, e.base
		c.scale = c.tp.weight / 255 * float32(max(1, avgdl/e.avgdl))
	}
}

// syncBlock moves blk to the block holding the next posting.
func (c *postingCursor) syncBlock() {
	e := &c.tp.entries[c.e]
	read := len(e.postings) - len(c.b)
	for c.blk < len(e.blocks) && e.blocks[c.blk].end <= read {
		c.blk++
	}
}

// bound returns an upper bound of what the cursor's postings before chunk
// hi add to a chunk's score: the largest bound of the blocks holding them,
// the term's weight for an entry without blocks.
func (c *postingCursor) bound(hi uint32) float32 {
	if c.done() {
		return 0
	}
	w, best := c.tp.weight, float32(0)
	c.syncBlock()
	for i, j := c.e, c.blk; i < len(c.tp.entries); i, j = i+1, 0 {
		e := &c.tp.entries[i]
		if i > c.e && e.base >= hi {
			break
		}
		if len(e.blocks) == 0 {
			return w
		}
		scale := c.scale
		if i > c.e {
			scale = w / 255 * float32(max(1, c.tp.avgdl/e.avgdl))
		}
		for ; j < len(e.blocks); j++ {
			best = max(best, float32(e.blocks[j].impact)*scale)
			if e.blocks[j].last >= hi {
				return min(best, w)
			}
		}
	}
	return min(best, w)
}

// peek returns the chunk of the cursor's next posting, MaxUint32 when it
// has none.
func (c *postingCursor) peek() (uint32, error) {
	for !c.done() {
		if len(c.b) > 0 {
			ch, _, n := nextPosting(c.b, c.prev)
			if n == 0 {
				return 0, fmt.Errorf("%w: postings of %q", errCorrupt, c.tp.text)
			}
			return ch, nil
		}
		c.nextEntry(c.tp.avgdl)
	}
	return math.MaxUint32, nil
}

// skip moves the cursor to its first posting at or after chunk hi,
// stepping over whole blocks without decoding them.
func (c *postingCursor) skip(hi uint32) error {
	for !c.done() {
		e := &c.tp.entries[c.e]
		c.syncBlock()
		for c.blk < len(e.blocks) && e.blocks[c.blk].last < hi {
			c.b, c.prev = e.postings[e.blocks[c.blk].end:], e.blocks[c.blk].last
			c.blk++
		}
		for len(c.b) > 0 {
			ch, _, n := nextPosting(c.b, c.prev)
			if n == 0 {
				return fmt.Errorf("%w: postings of %q", errCorrupt, c.tp.text)
			}
			if ch >= hi {
				return nil
			}
			c.b, c.prev = c.b[n:], ch
		}
		c.nextEntry(c.tp.avgdl)
	}
	return nil
}

// bm25 scores the chunks holding a query term (every term, for a query of
// stop words alone) and returns the best limit, best first, with the
// query's scoreScale.
func (s *Store) bm25(k kv, st statsRecord, nc *normCache, q query, limit int) ([]cand, float64, error) {
	n := float64(st.Chunks)
	avgdl := float64(st.Tokens) / n
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
		tp.avgdl = avgdl
		terms = append(terms, tp)
	}
	if len(terms) == 0 {
		return nil, scale, nil
	}
	// A query of stop words requires them all: the rarest one picks the
	// candidates, and each further term scores only the chunks that hold
	// every term before it.
	all := q.stopOnly && len(terms) > 1
	if all {
		slices.SortFunc(terms, func(a, b termPostings) int { return cmp.Compare(a.df, b.df) })
	}
	curs := make([]postingCursor, len(terms))
	for i := range terms {
		curs[i] = postingCursor{tp: &terms[i], e: -1}
		curs[i].nextEntry(avgdl)
	}
	acc, _ := s.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	defer s.accs.Put(acc)
	top := topK{limit: limit}
	chunks := uint32(len(nc.pairs))
	bounds := make([]float32, len(curs))
	order := make([]int, len(curs))
	for lo := uint32(0); lo < chunks; lo += scoreWindow {
		// Windows without postings are passed over at once.
		next := uint32(math.MaxUint32)
		for i := range curs {
			ch, err := curs[i].peek()
			if err != nil {
				return nil, 0, err
			}
			next = min(next, ch)
		}
		if next >= chunks {
			break
		}
		lo = max(lo, next/scoreWindow*scoreWindow)
		hi := min(lo+scoreWindow, chunks)
		var err error
		if all {
			err = acc.required(curs, nc, lo, hi)
			for _, off := range acc.touched {
				if int(acc.count[off]) == len(curs) {
					top.offer(cand{chunk: lo + uint32(off), score: acc.score[off]})
				}
				acc.score[off], acc.count[off] = 0, 0
			}
			acc.touched = acc.touched[:0]
			if err != nil {
				return nil, 0, err
			}
			continue
		}
		// The terms by their bounds in the window, the smallest first;
		// those before split cannot bring a chunk in by themselves (the
		// sums are taken a little high, for the rounding of sums added up
		// in another order).
		for i := range curs {
			bounds[i], order[i] = curs[i].bound(hi), i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(bounds[a], bounds[b]) })
		split := 0
		if theta, full := top.threshold(); full {
			sum := float32(0)
			for split < len(order) {
				if sum += bounds[order[split]]; sum*(1+1e-5) >= theta {
					break
				}
				split++
			}
		}
		if split == len(order) { // no chunk of the window can get in
			for i := range curs {
				if err := curs[i].skip(hi); err != nil {
					return nil, 0, err
				}
			}
			continue
		}
		// A block of a term can be skipped when its bound and the other
		// terms' cannot reach the best chunks'.
		theta, full := top.threshold()
		total := float32(0)
		for _, b := range bounds {
			total += b
		}
		for i := len(order) - 1; i >= 0 && err == nil; i-- {
			floor := float32(0)
			if full {
				floor = theta/(1+1e-5) - (total - bounds[order[i]])
			}
			err = acc.add(&curs[order[i]], nc, lo, hi, i >= split, floor)
		}
		for _, off := range acc.touched {
			top.offer(cand{chunk: lo + uint32(off), score: acc.score[off]})
			acc.score[off] = 0
		}
		acc.touched = acc.touched[:0]
		if err != nil {
			return nil, 0, err
		}
	}
	for i := range curs {
		if c := &curs[i]; !c.done() {
			return nil, 0, fmt.Errorf("%w: postings of %q past the last chunk", errCorrupt, c.tp.text)
		}
	}
	return top.sorted(), scale, nil
}

// add adds the cursor's postings for chunks lo..hi-1 to the window's
// scores; when touch is false, only to chunks another term already has.
// Its blocks whose bounds are under floor are skipped: no chunk of theirs
// can get in, whatever the other terms add.
func (a *accumulator) add(c *postingCursor, nc *normCache, lo, hi uint32, touch bool, floor float32) error {
	w := c.tp.weight
	for !c.done() {
		e := &c.tp.entries[c.e]
		b, prev := c.b, c.prev
		if len(e.blocks) > 0 {
			// One block at a time, each skipped when it cannot matter.
			c.syncBlock()
			if c.blk < len(e.blocks) {
				blk := &e.blocks[c.blk]
				if blk.last < hi && float32(blk.impact)*c.scale < floor {
					c.b, c.prev = e.postings[blk.end:], blk.last
					c.blk++
					continue
				}
				b = b[:len(b)-(len(e.postings)-blk.end)]
			}
		}
		if len(b) == 0 {
			c.nextEntry(c.tp.avgdl)
			continue
		}
		all, rest := c.b, c.b[len(b):] // rest: past the block being read
		for len(b) > 0 {
			ch, tf, n := uint32(0), uint32(1), 1
			if b[0]&0x81 == 0x01 { // one byte, tf 1: most postings
				ch = prev + uint32(b[0]>>1)
			} else if ch, tf, n = nextPosting(b, prev); n == 0 {
				return fmt.Errorf("%w: postings of %q", errCorrupt, c.tp.text)
			}
			if ch >= hi {
				c.b, c.prev = all[len(all)-len(b)-len(rest):], prev
				return nil
			}
			b, prev = b[n:], ch
			if ch < lo {
				return fmt.Errorf("%w: postings of %q out of order", errCorrupt, c.tp.text)
			}
			p := nc.pairs[ch]
			off := ch - lo
			switch {
			case p.norm == 0:
				continue // a forgotten chunk, not merged away yet
			case a.score[off] == 0:
				if !touch {
					continue
				}
				a.touched = append(a.touched, uint16(off))
			}
			a.score[off] += p.part(w, tf)
		}
		c.b, c.prev = rest, prev
	}
	return nil
}

// required scores chunks lo..hi-1 for a query whose terms are all
// required, the rarest first: each term counts only in the chunks that
// hold every term before it.
func (a *accumulator) required(curs []postingCursor, nc *normCache, lo, hi uint32) error {
	for ti := range curs {
		c := &curs[ti]
		w := c.tp.weight
		b, prev := c.b, c.prev
		for !c.done() {
			if len(b) == 0 {
				c.nextEntry(c.tp.avgdl)
				b, prev = c.b, c.prev
				continue
			}
			ch, tf, n := uint32(0), uint32(1), 1
			if b[0]&0x81 == 0x01 {
				ch = prev + uint32(b[0]>>1)
			} else if ch, tf, n = nextPosting(b, prev); n == 0 {
				return fmt.Errorf("%w: postings of %q", errCorrupt, c.tp.text)
			}
			if ch >= hi {
				break
			}
			b, prev = b[n:], ch
			if ch < lo {
				return fmt.Errorf("%w: postings of %q out of order", errCorrupt, c.tp.text)
			}
			p, off := nc.pairs[ch], ch-lo
			if p.norm == 0 || int(a.count[off]) != ti {
				continue // forgotten, or lacks an earlier term
			}
			if ti == 0 {
				a.touched = append(a.touched, uint16(off))
			}
			a.count[off]++
			a.score[off] += p.part(w, tf)
		}
		c.b, c.prev = b, prev
	}
	return nil
}

// topK keeps the limit best candidates offered, in a min-heap, ties going
// to the older chunk.
type topK struct {
	limit int
	heap  []cand
}

func worse(a, b cand) bool { return a.score < b.score || (a.score == b.score && a.chunk > b.chunk) }

// threshold is the score a chunk must beat to enter, once the heap is
// full.
func (t *topK) threshold() (float32, bool) {
	if len(t.heap) < t.limit {
		return 0, false
	}
	return t.heap[0].score, true
}

func (t *topK) offer(x cand) {
	h := t.heap
	if len(h) < t.limit {
		h = append(h, x)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.heap = h
		return
	}
	if !worse(h[0], x) {
		return
	}
	h[0] = x
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && worse(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && worse(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted returns the candidates, best first.
func (t *topK) sorted() []cand {
	slices.SortFunc(t.heap, func(a, b cand) int {
		if worse(b, a) {
			return -1
		}
		if worse(a, b) {
			return 1
		}
		return 0
	})
	return t.heap
}
