package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Segments are merged as in a size-tiered LSM tree: when mergeFactor
// neighbouring segments are of one size tier, they are merged into one of
// the next, so a posting is rewritten about log4 of the index's size
// times and a search reads a few segments per tier. A merge runs in steps,
// each in a write transaction after that transaction's own writes, taking
// a range of terms with a budget of bytes read proportional to what the
// transaction wrote: the database is never held for long, other processes
// get it between writes, and merges keep up with the writes that cause
// them. The merge's progress is in the meta record "merge"; its output is
// listed, and its inputs dropped, by the step that finishes it, so
// searches see the inputs until then.
const (
	mergeFactor = 4
	// mergeMaxInputs bounds a merge of a run of one tier that grew long
	// while a larger merge ran.
	mergeMaxInputs = 16
	// maxSegments is how many segments make merging urgent: each step then
	// gets mergeUrgentBudget, so searches never read many more.
	maxSegments = 24
)

// Budgets of a merge step, in bytes of input entries. Variables so that
// tests can make merges run in many steps.
var (
	// mergeTierBytes is the size below which segments are of the first
	// tier; each tier above holds segments mergeFactor times larger.
	mergeTierBytes int64 = 64 << 10
	// A step reads mergeRatio times what its transaction wrote, at least
	// mergeMinBudget.
	mergeRatio        int64 = 8
	mergeMinBudget    int64 = 64 << 10
	mergeUrgentBudget int64 = 8 << 20
)

func tier(bytes int64) int {
	t := 0
	for b := mergeTierBytes; bytes >= b; b *= mergeFactor {
		t++
	}
	return t
}

// pickMerge chooses the next merge: the longest run of neighbouring
// segments of the smallest tier that has mergeFactor of them; else, with
// too many segments, the mergeFactor neighbours that are smallest
// together; else a segment whose range is more than half forgotten, which
// is rewritten alone to drop the dead postings. It returns the index of
// the first input in segs and their number, 0 when nothing needs merging.
func pickMerge(segs []segInfo) (first, count int) {
	best, bestTier := -1, 0
	for i := 0; i < len(segs); {
		t, j := tier(segs[i].bytes), i+1
		for j < len(segs) && tier(segs[j].bytes) == t {
			j++
		}
		if j-i >= mergeFactor && (best < 0 || t < bestTier) {
			best, bestTier, count = i, t, min(j-i, mergeMaxInputs)
		}
		i = j
	}
	if best >= 0 {
		return best, count
	}
	if len(segs) > maxSegments {
		var least int64 = -1
		for i := 0; i+mergeFactor <= len(segs); i++ {
			var sum int64
			for _, s := range segs[i : i+mergeFactor] {
				sum += s.bytes
			}
			if least < 0 || sum < least {
				least, first = sum, i
			}
		}
		return first, mergeFactor
	}
	for i, s := range segs {
		if s.hi > s.lo && int64(s.dead)*2 > int64(s.hi-s.lo) {
			return i, 1
		}
	}
	return 0, 0
}

// mergeState is a merge in progress: its inputs, consecutive in the
// segment list from the one with id first, the output segment being
// written, and the first term not merged yet.
type mergeState struct {
	out     uint32
	first   uint32
	count   int
	next    []byte // nil before the first step
	bytes   int64  // written to the output so far
	entries int
	// deadBefore is the inputs' dead count when the merge started: what
	// it drops. The chunks forgotten while it runs stay counted.
	deadBefore int
}

func (m mergeState) encode() []byte {
	b := make([]byte, 0, 32+len(m.next))
	for _, v := range []uint64{uint64(m.out), uint64(m.first), uint64(m.count), uint64(m.bytes), uint64(m.entries), uint64(m.deadBefore)} {
		b = binary.AppendUvarint(b, v)
	}
	return append(b, m.next...)
}

func decodeMerge(b []byte) (mergeState, error) {
	r := reader{b: b}
	m := mergeState{out: uint32(r.uvarint()), first: uint32(r.uvarint()), count: int(r.uvarint()),
		bytes: int64(r.uvarint()), entries: int(r.uvarint()), deadBefore: int(r.uvarint())}
	if r.err || m.count == 0 {
		return m, fmt.Errorf("%w: merge progress record", errCorrupt)
	}
	if len(r.b) > 0 {
		m.next = r.b
	}
	return m, nil
}

// merge spends up to budget bytes of input on merges, going on with the
// one in progress or starting the one pickMerge chooses.
func (w *writer) merge(budget int64) error {
	if len(w.segs) > maxSegments {
		budget = max(budget, mergeUrgentBudget)
	}
	for budget > 0 {
		raw, err := w.k.get(bucketMeta, mergeKey)
		if err != nil {
			return err
		}
		var m mergeState
		if raw != nil {
			if m, err = decodeMerge(raw); err != nil {
				return err
			}
		} else {
			first, count := pickMerge(w.segs)
			if count == 0 {
				return nil
			}
			m = mergeState{out: uint32(w.st.NextSeg), first: w.segs[first].id, count: count}
			w.st.NextSeg++
			for _, s := range w.segs[first : first+count] {
				m.deadBefore += s.dead
			}
			if _, err := w.k.segBucket(m.out, true); err != nil {
				return err
			}
		}
		used, err := w.mergeStep(&m, budget)
		if err != nil {
			return err
		}
		budget -= used
	}
	return nil
}

// mergeStep merges the inputs' terms from m.next on until it has read
// budget bytes, and records where it stopped, or finishes the merge.
func (w *writer) mergeStep(m *mergeState, budget int64) (used int64, err error) {
	at := -1
	for i, s := range w.segs {
		if s.id == m.first {
			at = i
		}
	}
	if at < 0 || at+m.count > len(w.segs) {
		return 0, fmt.Errorf("%w: the merge's input segments are not listed", errCorrupt)
	}
	in := w.segs[at : at+m.count]
	lo := in[0].lo
	b, err := w.k.segBucket(m.out, false)
	if err != nil {
		return 0, err
	}
	b.FillPercent = 1
	out := &blockWriter{b: b, bytes: m.bytes, entries: m.entries}
	tc, err := w.k.termCursor(in, m.next)
	if err != nil {
		return 0, err
	}
	// The postings of forgotten chunks go, and so does their dead count;
	// while the inputs have none, entries are joined as they are.
	drop := false
	for _, s := range in {
		drop = drop || s.dead > 0
	}
	var buf []posting
	var parts []mergePart
	for {
		term := tc.next()
		if term == nil || used >= budget {
			if err := out.flush(); err != nil {
				return used, err
			}
			m.bytes, m.entries = out.bytes, out.entries
			if term == nil {
				return used, w.finishMerge(m, at)
			}
			m.next = bytes.Clone(term)
			return used, w.k.put(bucketMeta, mergeKey, m.encode())
		}
		parts = parts[:0]
		err := tc.entries(func(s segInfo, e []byte) error {
			used += int64(len(term) + len(e))
			n, d, ps, err := decodeEntry(e)
			parts = append(parts, mergePart{base: s.lo, n: n, dead: d, postings: ps})
			return err
		})
		if err != nil {
			return used, err
		}
		var e []byte
		if drop {
			e, buf, err = w.mergeDropping(lo, parts, buf)
		} else {
			e, err = mergeJoin(lo, parts)
		}
		if err != nil {
			return used, err
		}
		if e == nil {
			continue
		}
		if err := out.add(term, e); err != nil {
			return used, err
		}
	}
}

// mergePart is a term's entry in one input of a merge.
type mergePart struct {
	base     uint32
	n        int
	dead     int64
	postings []byte
}

// mergeJoin joins a term's entries into one, the postings relative to lo:
// each part's first posting is encoded again, the rest copied.
func mergeJoin(lo uint32, parts []mergePart) ([]byte, error) {
	n, size, dead := 0, 0, int64(0)
	for _, p := range parts {
		n, size, dead = n+p.n, size+len(p.postings), dead+p.dead
	}
	if n == 0 && dead == 0 {
		return nil, nil
	}
	e := binary.AppendUvarint(make([]byte, 0, size+24), uint64(n))
	e = binary.AppendVarint(e, dead)
	prev := lo
	for _, p := range parts {
		if p.n == 0 {
			continue
		}
		c, tf, k := nextPosting(p.postings, p.base)
		if k == 0 {
			return nil, fmt.Errorf("%w: postings", errCorrupt)
		}
		e = appendPostings(e, prev, []posting{{chunk: c, tf: tf}})
		e = append(e, p.postings[k:]...)
		last, err := lastPosting(p.postings[k:], c)
		if err != nil {
			return nil, err
		}
		prev = last
	}
	return e, nil
}

// lastPosting returns the chunk of the last posting of b, encoded after
// chunk prev.
func lastPosting(b []byte, prev uint32) (uint32, error) {
	for len(b) > 0 {
		if b[0]&0x81 == 0x01 { // one byte, tf 1
			prev += uint32(b[0] >> 1)
			b = b[1:]
			continue
		}
		c, _, k := nextPosting(b, prev)
		if k == 0 {
			return 0, fmt.Errorf("%w: postings", errCorrupt)
		}
		prev, b = c, b[k:]
	}
	return prev, nil
}

// mergeDropping merges a term's entries without the postings of forgotten
// chunks; buf is scratch space, returned for the next term.
func (w *writer) mergeDropping(lo uint32, parts []mergePart, buf []posting) ([]byte, []posting, error) {
	buf = buf[:0]
	var dead int64
	for _, p := range parts {
		from := len(buf)
		var err error
		if buf, err = decodePostings(p.base, p.postings, buf); err != nil {
			return nil, buf, err
		}
		if len(buf)-from != p.n {
			return nil, buf, fmt.Errorf("%w: postings entry of %d postings says %d", errCorrupt, len(buf)-from, p.n)
		}
		dead += p.dead
	}
	kept := buf[:0]
	for _, p := range buf {
		if live, err := w.isLive(p.chunk); err != nil {
			return nil, buf, err
		} else if live {
			kept = append(kept, p)
		} else {
			dead--
		}
	}
	if len(kept) == 0 && dead == 0 {
		return nil, buf, nil
	}
	return appendEntry(nil, lo, dead, kept), buf, nil
}

// finishMerge lists the output in place of the inputs and drops them.
func (w *writer) finishMerge(m *mergeState, at int) error {
	in := w.segs[at : at+m.count]
	merged := segInfo{id: m.out, lo: in[0].lo, hi: in[len(in)-1].hi, bytes: m.bytes, entries: m.entries, dead: -m.deadBefore}
	for _, s := range in {
		merged.dead += s.dead
		if err := w.k.dropSeg(s.id); err != nil {
			return err
		}
	}
	merged.dead = max(merged.dead, 0)
	if merged.entries == 0 { // every posting was of forgotten chunks
		if err := w.k.dropSeg(m.out); err != nil {
			return err
		}
		w.segs = append(w.segs[:at], w.segs[at+m.count:]...)
	} else {
		w.segs = append(append(w.segs[:at], merged), w.segs[at+m.count:]...)
	}
	w.segsChanged = true
	return w.k.del(bucketMeta, mergeKey)
}
