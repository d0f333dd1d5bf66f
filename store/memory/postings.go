package memory

import (
	"math"
	"slices"
	"sort"
)

// seg is a posting segment being changed.
type seg struct {
	segRef
	ps     []posting
	loaded bool
	dirty  bool
}

// applyTerm merges one term's additions and deletions into its head and
// segments: deletions rewrite the segments (or the tail) that hold them,
// merging a shrunken segment into its predecessor when both fit in one;
// additions go to the tail, which becomes a segment when full.
func (w *writer) applyTerm(term string, d *termDelta) error {
	if len(d.del) > 0 && len(d.add) > 0 {
		// A document added and removed in the same transaction (the same
		// source twice in a batch): its postings never reach the index.
		pending := make(map[uint32]bool, len(d.add))
		for _, p := range d.add {
			pending[p.chunk] = true
		}
		cancelled := map[uint32]bool{}
		d.del = slices.DeleteFunc(d.del, func(c uint32) bool {
			if pending[c] {
				cancelled[c] = true
				return true
			}
			return false
		})
		d.add = slices.DeleteFunc(d.add, func(p posting) bool { return cancelled[p.chunk] })
	}
	raw, err := w.k.get(bucketTerms, []byte(term))
	if err != nil {
		return err
	}
	var h termHead
	if raw != nil {
		if h, err = decodeHead(raw); err != nil {
			return err
		}
	}
	segs := make([]*seg, len(h.segs))
	for i, r := range h.segs {
		segs[i] = &seg{segRef: r}
	}
	load := func(s *seg) error {
		if s.loaded {
			return nil
		}
		v, err := w.k.get(bucketPost, segKey(term, s.id))
		if err != nil {
			return err
		}
		if s.ps, err = decodePostings(s.id, v, nil); err != nil {
			return err
		}
		s.loaded = true
		return nil
	}
	var tail []posting
	tailLoaded := false
	loadTail := func() error {
		if !tailLoaded {
			if tail, err = decodePostings(0, h.tail, nil); err != nil {
				return err
			}
			tailLoaded = true
		}
		return nil
	}

	var removed []*seg
	if len(d.del) > 0 {
		slices.Sort(d.del)
		tailFirst := uint32(math.MaxUint32)
		if h.tailCount > 0 {
			if c, _, n := nextPosting(h.tail, 0); n > 0 {
				tailFirst = c
			}
		}
		for _, c := range d.del {
			if c >= tailFirst {
				if err := loadTail(); err != nil {
					return err
				}
				if j, ok := slices.BinarySearchFunc(tail, c, cmpPosting); ok {
					tail = slices.Delete(tail, j, j+1)
					h.df--
				}
				continue
			}
			i := sort.Search(len(segs), func(i int) bool { return segs[i].id > c }) - 1
			if i < 0 {
				continue
			}
			s := segs[i]
			if err := load(s); err != nil {
				return err
			}
			if j, ok := slices.BinarySearchFunc(s.ps, c, cmpPosting); ok {
				s.ps = slices.Delete(s.ps, j, j+1)
				s.dirty = true
				h.df--
			}
		}
		kept := segs[:0]
		for _, s := range segs {
			if s.loaded && len(s.ps) == 0 {
				removed = append(removed, s)
				continue
			}
			if n := len(kept); n > 0 && s.dirty {
				prev := kept[n-1]
				if err := load(prev); err != nil {
					return err
				}
				if len(prev.ps)+len(s.ps) <= segCap {
					prev.ps = append(prev.ps, s.ps...)
					prev.dirty = true
					removed = append(removed, s)
					continue
				}
			}
			kept = append(kept, s)
		}
		segs = kept
	}
	if len(d.add) > 0 {
		h.df += len(d.add)
		if !tailLoaded && h.tailCount+len(d.add) < segCap {
			// The usual case: append to the encoded tail as it is.
			h.tail = appendPostings(h.tail, h.tailLast, d.add)
			h.tailCount += len(d.add)
			h.tailLast = d.add[len(d.add)-1].chunk
		} else {
			if err := loadTail(); err != nil {
				return err
			}
			tail = append(tail, d.add...)
		}
	}
	if tailLoaded {
		for len(tail) >= segCap {
			segs = append(segs, &seg{segRef: segRef{id: tail[0].chunk}, ps: tail[:segCap:segCap], loaded: true, dirty: true})
			tail = tail[segCap:]
		}
		h.tail, h.tailCount, h.tailLast = encodePostings(0, tail), len(tail), 0
		if len(tail) > 0 {
			h.tailLast = tail[len(tail)-1].chunk
		}
	}

	for _, s := range removed {
		if err := w.k.del(bucketPost, segKey(term, s.id)); err != nil {
			return err
		}
	}
	h.segs = h.segs[:0]
	for _, s := range segs {
		if s.loaded {
			s.count = len(s.ps)
			s.last = s.ps[s.count-1].chunk
		}
		if s.dirty {
			if err := w.k.put(bucketPost, segKey(term, s.id), encodePostings(s.id, s.ps)); err != nil {
				return err
			}
		}
		h.segs = append(h.segs, s.segRef)
	}
	switch {
	case h.df <= 0:
		if raw != nil {
			w.st.Terms--
			return w.k.del(bucketTerms, []byte(term))
		}
		return nil
	case raw == nil:
		w.st.Terms++
	}
	return w.k.put(bucketTerms, []byte(term), h.encode())
}

func cmpPosting(p posting, c uint32) int { return cmpU32(p.chunk, c) }

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
