package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// segInfo is one live segment as the segment list describes it.
type segInfo struct {
	id uint32
	// lo and hi bound the chunk numbers of its postings: [lo, hi).
	lo, hi uint32
	// bytes is the size of its keys and entries, entries their number.
	bytes   int64
	entries int
	// dead counts the chunks of its range forgotten since it was written
	// (exactly, but for those forgotten while a merge wrote it), which a
	// rewrite would drop.
	dead int
	// avgdl is the average chunk length its entries' impacts are for.
	avgdl float64
}

// The segment list: uvarint count, then per segment uvarints id, lo,
// hi-lo, bytes, entries, dead and the bits of avgdl. Segments are listed
// by chunk range.
func encodeSegs(segs []segInfo) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 4+20*len(segs)), uint64(len(segs)))
	for _, s := range segs {
		for _, v := range []uint64{uint64(s.id), uint64(s.lo), uint64(s.hi - s.lo), uint64(s.bytes), uint64(s.entries), uint64(s.dead), math.Float64bits(s.avgdl)} {
			b = binary.AppendUvarint(b, v)
		}
	}
	return b
}

func decodeSegs(b []byte) ([]segInfo, error) {
	if b == nil {
		return nil, nil
	}
	r := reader{b: b}
	n := r.uvarint()
	if r.err || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: segment list", errCorrupt)
	}
	segs := make([]segInfo, n)
	for i := range segs {
		s := &segs[i]
		s.id, s.lo = uint32(r.uvarint()), uint32(r.uvarint())
		s.hi = s.lo + uint32(r.uvarint())
		s.bytes, s.entries, s.dead = int64(r.uvarint()), int(r.uvarint()), int(r.uvarint())
		s.avgdl = math.Float64frombits(r.uvarint())
	}
	if r.err {
		return nil, fmt.Errorf("%w: segment list", errCorrupt)
	}
	return segs, nil
}

func (k kv) segments() ([]segInfo, error) {
	raw, err := k.get(bucketMeta, segmentsKey)
	if err != nil {
		return nil, err
	}
	return decodeSegs(raw)
}

// segBucket returns a segment's bucket; with create, a new one, whose
// keys are written in order (so its pages are filled whole).
func (k kv) segBucket(id uint32, create bool) (*bolt.Bucket, error) {
	parent, err := k.bucket(bucketSegs, create)
	if err != nil || parent == nil {
		return nil, err
	}
	if create {
		b, err := parent.CreateBucket(u32key(id))
		if err != nil {
			return nil, fmt.Errorf("creating index segment %d: %w", id, err)
		}
		b.FillPercent = 1
		return b, nil
	}
	b := parent.Bucket(u32key(id))
	if b == nil {
		return nil, fmt.Errorf("%w: index segment %d is missing", errCorrupt, id)
	}
	return b, nil
}

func (k kv) dropSeg(id uint32) error {
	parent, err := k.bucket(bucketSegs, false)
	if err != nil || parent == nil {
		return err
	}
	return parent.DeleteBucket(u32key(id))
}

// termCursor walks the terms of several segments at once, in order: the
// k-way merge behind merges and the distinct-term count.
type termCursor struct {
	segs []segInfo
	cur  []segCursor
	term []byte // the current term
}

func (k kv) termCursor(segs []segInfo, from []byte) (*termCursor, error) {
	tc := &termCursor{segs: segs, cur: make([]segCursor, len(segs))}
	for i, s := range segs {
		b, err := k.segBucket(s.id, false)
		if err != nil {
			return nil, err
		}
		tc.cur[i].c = b.Cursor()
		if err := tc.cur[i].seek(from); err != nil {
			return nil, err
		}
	}
	return tc, nil
}

// next returns the smallest current term, nil when every segment is done.
// It is valid until the next call.
func (tc *termCursor) next() []byte {
	var first []byte
	for i := range tc.cur {
		if c := &tc.cur[i]; !c.end && (first == nil || bytes.Compare(c.r.term, first) < 0) {
			first = c.r.term
		}
	}
	if first == nil {
		return nil
	}
	tc.term = append(tc.term[:0], first...)
	return tc.term
}

// entries calls fn with the entry of the current term in each segment
// that has one, in the segments' order, and moves those segments on.
func (tc *termCursor) entries(fn func(seg segInfo, entry []byte) error) error {
	for i := range tc.cur {
		c := &tc.cur[i]
		if c.end || !bytes.Equal(c.r.term, tc.term) {
			continue
		}
		if err := fn(tc.segs[i], c.r.entry); err != nil {
			return err
		}
		if err := c.next(); err != nil {
			return err
		}
	}
	return nil
}

// liveTerms counts the terms of segs from term from on (nil: the first),
// up to limit of them, whose document frequency is not 0, and returns
// where to go on (nil when done).
func (k kv) liveTerms(segs []segInfo, from []byte, limit int) (count int, next []byte, err error) {
	tc, err := k.termCursor(segs, from)
	if err != nil {
		return 0, nil, err
	}
	for range limit {
		if tc.next() == nil {
			return count, nil, nil
		}
		df := int64(0)
		err := tc.entries(func(s segInfo, raw []byte) error {
			e, err := decodeEntry(raw, s.lo, false)
			df += int64(e.n) - e.dead
			return err
		})
		if err != nil {
			return 0, nil, err
		}
		if df > 0 {
			count++
		}
	}
	if term := tc.next(); term != nil {
		return count, bytes.Clone(term), nil
	}
	return count, nil, nil
}
