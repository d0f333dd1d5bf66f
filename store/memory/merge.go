package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Segments are merged as Lucene's LogByteSizeMergePolicy merges its own,
// which keeps merged segments neighbours as ours must (a term's postings
// are the concatenation of its entries in segment order): a segment's
// level is the logarithm base mergeFactor of its size, segments within
// levelSpan of the largest level among them and those after them are of
// one level, and mergeFactor neighbours of one level are merged into one
// of the next. So a posting is rewritten about log4 of the index's size
// times, and a search reads at most mergeFactor-1 segments per level. A
// merge runs in steps, each in a write transaction after that
// transaction's own writes, taking a range of terms with a budget of bytes
// read proportional to what the transaction wrote: the database is never
// held for long, other processes get it between writes, and merges keep up
// with the writes that cause them. The merge's progress is in the meta
// record "merge"; its output is listed, and its inputs dropped, by the
// step that finishes it, so searches see the inputs until then.
const (
	mergeFactor = 4
	levelSpan   = 0.75
	// maxSegments is how many segments make merging urgent: each step then
	// gets mergeUrgentBudget, so searches never read many more.
	maxSegments = 24
)

// Budgets of a merge step, in bytes of input entries. Variables so that
// tests can make merges run in many steps.
var (
	// mergeTierBytes is the size of the segments of level 0; smaller ones
	// are of level 0 too.
	mergeTierBytes int64 = 64 << 10
	// A step reads mergeRatio times what its transaction wrote, at least
	// mergeMinBudget.
	mergeRatio        int64 = 8
	mergeMinBudget    int64 = 64 << 10
	mergeUrgentBudget int64 = 8 << 20
)

func level(bytes int64) float64 {
	return max(0, math.Log(float64(bytes)/float64(mergeTierBytes))/math.Log(mergeFactor))
}

// pickMerge chooses the next merge: of the runs of mergeFactor neighbours
// of one level, the smallest; else, with too many segments, the
// mergeFactor neighbours that are smallest together; else a segment whose
// range is more than half forgotten, which is rewritten alone to drop the
// dead postings. It returns the index of the first input in segs and their
// number, 0 when nothing needs merging.
func pickMerge(segs []segInfo) (first, count int) {
	levels := make([]float64, len(segs))
	for i, s := range segs {
		levels[i] = level(s.bytes)
	}
	var least int64 = -1
	window := func(from int) {
		var sum int64
		for _, s := range segs[from : from+mergeFactor] {
			sum += s.bytes
		}
		if least < 0 || sum < least {
			least, first, count = sum, from, mergeFactor
		}
	}
	for start := 0; start < len(segs); {
		top := slices.Max(levels[start:])
		floor := top - levelSpan
		if top < levelSpan {
			floor = -1 // the smallest are all of one level
		}
		upto := start
		for i := start; i < len(segs); i++ {
			if levels[i] >= floor {
				upto = i
			}
		}
		for from := start; from+mergeFactor <= upto+1; from += mergeFactor {
			window(from)
		}
		start = upto + 1
	}
	if count > 0 {
		return first, count
	}
	if len(segs) > maxSegments {
		for i := 0; i+mergeFactor <= len(segs); i++ {
			window(i)
		}
		return first, count
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
	// avgdl is the average chunk length the output's impacts are for
	// (see segInfo).
	avgdl float64
}

func (m mergeState) encode() []byte {
	b := make([]byte, 0, 40+len(m.next))
	for _, v := range []uint64{uint64(m.out), uint64(m.first), uint64(m.count), uint64(m.bytes), uint64(m.entries), uint64(m.deadBefore), math.Float64bits(m.avgdl)} {
		b = binary.AppendUvarint(b, v)
	}
	return append(b, m.next...)
}

func decodeMerge(b []byte) (mergeState, error) {
	r := reader{b: b}
	m := mergeState{out: uint32(r.uvarint()), first: uint32(r.uvarint()), count: int(r.uvarint()),
		bytes: int64(r.uvarint()), entries: int(r.uvarint()), deadBefore: int(r.uvarint()), avgdl: math.Float64frombits(r.uvarint())}
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
			m = mergeState{out: uint32(w.st.NextSeg), first: w.segs[first].id, count: count, avgdl: w.avgdl()}
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
	// The postings of forgotten chunks go, and so does their dead count.
	var buf, kept []posting
	var e []byte
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
		buf = buf[:0]
		var dead int64
		err := tc.entries(func(s segInfo, raw []byte) error {
			used += int64(len(term) + len(raw))
			en, err := decodeEntry(raw, s.lo, false)
			if err != nil {
				return err
			}
			dead += en.dead
			from := len(buf)
			if buf, err = decodePostings(s.lo, en.postings, buf); err != nil {
				return err
			}
			if len(buf)-from != en.n {
				return fmt.Errorf("%w: postings entry of %d postings says %d", errCorrupt, len(buf)-from, en.n)
			}
			return nil
		})
		if err != nil {
			return used, err
		}
		kept = kept[:0]
		for _, p := range buf {
			if _, live, err := w.getLen(p.chunk); err != nil {
				return used, err
			} else if live {
				kept = append(kept, p)
			} else {
				dead--
			}
		}
		if len(kept) == 0 && dead == 0 {
			continue
		}
		if e, err = w.appendEntry(e[:0], lo, dead, kept, m.avgdl); err != nil {
			return used, err
		}
		if err := out.add(term, e); err != nil {
			return used, err
		}
	}
}

// finishMerge lists the output in place of the inputs and drops them.
func (w *writer) finishMerge(m *mergeState, at int) error {
	in := w.segs[at : at+m.count]
	merged := segInfo{id: m.out, lo: in[0].lo, hi: in[len(in)-1].hi, bytes: m.bytes, entries: m.entries, dead: -m.deadBefore, avgdl: m.avgdl}
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
