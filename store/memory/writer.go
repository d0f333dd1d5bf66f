package memory

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// writer applies changes inside one transaction. The postings it makes
// are gathered by term and written in finish as one new segment, with
// the dead counts of the terms of the chunks it forgot; then it spends a
// budget on merges.
type writer struct {
	s    *Store
	k    kv
	st   statsRecord
	segs []segInfo
	// segsChanged: the segment list is to be written back.
	segsChanged bool

	// The transaction's terms (by index: names, dead) and postings, in
	// chunk order. index finds a term by its text; it is built only once
	// a second dict's terms arrive (see term), since one dict numbers
	// distinct terms already and most transactions meet only one.
	index map[string]uint32
	names []string
	dead  []int64
	adds  []batchPosting
	// dicts map a dict's term numbers to the transaction's term indexes,
	// plus one (0: not looked up yet).
	dicts map[*dict]*termMap
	// The chunk range of the postings (see segInfo), set by whoever adds
	// them; postHi == 0 means none.
	postLo, postHi uint32
	// firstNew is the first chunk number this transaction allocates:
	// chunks from there on have no postings in any segment yet.
	firstNew uint32
	// freedNew are chunks this transaction allocated and forgot again (a
	// source stored twice in one batch): their postings are not written.
	freedNew map[uint32]bool

	// lens are the lens blocks read or written in this transaction, by
	// block number (nil: not read yet). Merges ask about every posting, so
	// finding a block is an index, not a map lookup.
	lens  [][]byte
	dirty map[uint32]bool
	v     *vocab // analyses the chunks of forgotten texts
	// merged is what the transaction's merges have read so far.
	merged int64
}

type batchPosting struct{ term, chunk, tf uint32 }

func newWriter(s *Store, k kv) (*writer, error) {
	st, err := k.stats()
	if err != nil {
		return nil, err
	}
	segs, err := k.segments()
	if err != nil {
		return nil, err
	}
	return &writer{s: s, k: k, st: st, segs: segs, dicts: map[*dict]*termMap{},
		firstNew: st.NextChunk, dirty: map[uint32]bool{}}, nil
}

// termMap maps a dict's term numbers to the transaction's term indexes.
type termMap struct {
	names []string // the dict's terms
	index []uint32 // number -> index + 1; 0: not looked up yet
}

// termMap returns the map of d, covering its terms up to number n.
func (w *writer) termMap(d *dict, n uint32) *termMap {
	m := w.dicts[d]
	if m == nil {
		if len(w.dicts) == 1 && w.index == nil {
			w.index = make(map[string]uint32, len(w.names))
			for i, t := range w.names {
				w.index[t] = uint32(i)
			}
		}
		m = &termMap{}
		w.dicts[d] = m
	}
	if int(n) >= len(m.names) {
		m.names = d.names()
		m.index = append(m.index, make([]uint32, len(m.names)-len(m.index))...)
	}
	return m
}

// term returns the transaction's index of term number n of m.
func (w *writer) term(m *termMap, n uint32) uint32 {
	if m.index[n] == 0 {
		t := m.names[n]
		i, ok := w.index[t] // a nil index finds nothing
		if !ok {
			i = uint32(len(w.names))
			if w.index != nil {
				w.index[t] = i
			}
			w.names = append(w.names, t)
			w.dead = append(w.dead, 0)
		}
		m.index[n] = i + 1
	}
	return m.index[n] - 1
}

// post adds the postings of chunk num: its terms tfs, numbers in v's
// dict.
func (w *writer) post(v *vocab, num uint32, tfs []termFreq) {
	var m *termMap
	for _, f := range tfs {
		if m == nil || int(f.term) >= len(m.index) {
			m = w.termMap(v.d, f.term)
		}
		w.adds = append(w.adds, batchPosting{term: w.term(m, f.term), chunk: num, tf: f.tf})
	}
}

// vocab returns the writer's own vocab, which analyses the texts it
// forgets.
func (w *writer) vocab() *vocab {
	if w.v == nil {
		w.v = w.s.an.takeVocab(0)
	}
	return w.v
}

// store writes one prepared input (or finds it unchanged).
func (w *writer) store(p *prepared, now time.Time) (Added, error) {
	added := Added{Source: p.in.Source, EmbedError: p.embedErr}
	if p.in.Replace && p.in.Source != "" {
		old, err := w.k.bySource(p.in.Source)
		if err != nil {
			return added, err
		}
		same, err := w.s.sameAs(w.k, old, p)
		if err != nil {
			return added, err
		}
		if same != nil {
			added.ID, added.Chunks, added.Unchanged, added.EmbedError = same.ID, same.Chunks, true, ""
			return added, nil
		}
		if p.unchanged { // unchanged before, changed since: analyse now
			w.s.analyse(p, w.vocab())
		}
		for _, rec := range old {
			if err := w.removeDoc(rec); err != nil {
				return added, err
			}
		}
		added.Replaced = len(old)
	}
	if uint64(w.st.NextChunk)+uint64(len(p.spans)) > 1<<32-1 {
		return added, errors.New("the memory is full (4 billion chunks); start another database with --db")
	}
	id := p.id
	if id == "" {
		var err error
		if id, err = newID(); err != nil {
			return added, err
		}
	}
	rec := docRecord{ID: id, Source: p.in.Source, Metadata: p.in.Metadata, Created: now, Hash: p.hash,
		Bytes: len(p.in.Content), FirstChunk: w.st.NextChunk, Chunks: len(p.spans), ChunkSize: p.size, ChunkOverlap: p.overlap}
	if len(p.spans) > 0 {
		t := textRecord{DocID: id, Source: p.in.Source, Spans: p.spans, Content: p.in.Content}
		if err := w.k.put(bucketTexts, u32key(rec.FirstChunk), t.encode()); err != nil {
			return added, err
		}
	}
	start := 0
	for i := range p.spans {
		num := w.st.NextChunk
		w.st.NextChunk++
		w.post(p.v, num, p.tfs[start:p.ends[i]])
		start = p.ends[i]
		if err := w.setLen(num, p.lens[i]); err != nil {
			return added, err
		}
		w.st.Chunks++
		w.st.Tokens += uint64(p.lens[i])
		if p.vecs != nil {
			if err := w.k.put(bucketVecs, u32key(num), encodeVec(w.s.opts.EmbedModel, p.vecs[i])); err != nil {
				return added, err
			}
			w.st.Vectors++
		}
	}
	if w.st.NextChunk > w.firstNew {
		w.postLo, w.postHi = w.firstNew, w.st.NextChunk
	}
	if err := w.putDoc(rec); err != nil {
		return added, err
	}
	w.st.Docs++
	added.ID, added.Chunks = id, rec.Chunks
	return added, nil
}

// removeDoc deletes a document, its text, lengths and vectors. Its
// postings stay in their segments until a merge drops them (searches skip
// them: their length slots are free); the terms of its chunks, found by
// analysing them again (the analyser version is part of the index, so
// this gives the terms that were indexed), get a dead count each, so that
// document frequencies stay exact.
func (w *writer) removeDoc(rec docRecord) error {
	if rec.Chunks > 0 {
		key := u32key(rec.FirstChunk)
		raw, err := w.k.get(bucketTexts, key)
		if err != nil {
			return err
		}
		if raw != nil && rec.FirstChunk < w.firstNew {
			t, err := decodeText(raw)
			if err != nil {
				return err
			}
			var tfs []termFreq
			for i := range t.spans {
				if _, live, err := w.getLen(rec.FirstChunk + uint32(i)); err != nil || !live {
					if err != nil {
						return err
					}
					continue
				}
				v := w.vocab()
				tfs, _ = v.count(string(t.chunk(i)), tfs[:0])
				for _, f := range tfs {
					w.dead[w.term(w.termMap(v.d, f.term), f.term)]++
				}
			}
		}
		if raw != nil {
			if err := w.k.del(bucketTexts, key); err != nil {
				return err
			}
		}
	}
	for i := 0; i < rec.Chunks; i++ {
		num := rec.FirstChunk + uint32(i)
		dl, live, err := w.getLen(num)
		if err != nil {
			return err
		}
		if live {
			w.st.Chunks--
			w.st.Tokens -= uint64(dl)
			if err := w.setFree(num); err != nil {
				return err
			}
			w.forgot(num)
		}
		key := u32key(num)
		if v, err := w.k.get(bucketVecs, key); err != nil {
			return err
		} else if v != nil {
			w.st.Vectors--
			if err := w.k.del(bucketVecs, key); err != nil {
				return err
			}
		}
	}
	if err := w.k.del(bucketDocs, []byte(rec.ID)); err != nil {
		return err
	}
	if rec.Source != "" {
		ids, err := w.k.sourceIDs(rec.Source)
		if err != nil {
			return err
		}
		if err := w.k.setSourceIDs(rec.Source, slices.DeleteFunc(ids, func(id string) bool { return id == rec.ID })); err != nil {
			return err
		}
	}
	w.st.Docs--
	return nil
}

// forgot counts a forgotten chunk in the segment whose range holds it, or
// keeps its new postings from being written.
func (w *writer) forgot(num uint32) {
	if num >= w.firstNew {
		if w.freedNew == nil {
			w.freedNew = map[uint32]bool{}
		}
		w.freedNew[num] = true
		return
	}
	i, found := slices.BinarySearchFunc(w.segs, num, func(s segInfo, c uint32) int {
		switch {
		case c < s.lo:
			return 1
		case c >= s.hi:
			return -1
		}
		return 0
	})
	if found {
		w.segs[i].dead++
		w.segsChanged = true
	}
}

// putDoc writes a new document record and lists it under its source.
func (w *writer) putDoc(rec docRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("document metadata cannot be stored: %w", err)
	}
	if err := w.k.put(bucketDocs, []byte(rec.ID), raw); err != nil {
		return err
	}
	if rec.Source == "" {
		return nil
	}
	ids, err := w.k.sourceIDs(rec.Source)
	if err != nil {
		return err
	}
	return w.k.setSourceIDs(rec.Source, append(ids, rec.ID))
}

// lensBlock returns the block of lengths holding chunk num.
func (w *writer) lensBlock(num uint32) ([]byte, int, error) {
	blk := num / lensPerBlock
	if int(blk) >= len(w.lens) {
		w.lens = append(w.lens, make([][]byte, int(blk)+1-len(w.lens))...)
	}
	b := w.lens[blk]
	if b == nil {
		raw, err := w.k.get(bucketLens, u32key(blk))
		if err != nil {
			return nil, 0, err
		}
		b = make([]byte, 2*lensPerBlock)
		copy(b, raw)
		w.lens[blk] = b
	}
	return b, int(num%lensPerBlock) * 2, nil
}

// Lengths are stored plus one, so that 0 marks a free slot and a chunk of
// only stop words (length 0) is still live.
func (w *writer) setLen(num uint32, dl int) error {
	b, off, err := w.lensBlock(num)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint16(b[off:], uint16(min(dl, 65534)+1))
	w.dirty[num/lensPerBlock] = true
	return nil
}

func (w *writer) setFree(num uint32) error {
	b, off, err := w.lensBlock(num)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint16(b[off:], 0)
	w.dirty[num/lensPerBlock] = true
	return nil
}

func (w *writer) getLen(num uint32) (dl int, live bool, err error) {
	b, off, err := w.lensBlock(num)
	if err != nil {
		return 0, false, err
	}
	v := binary.LittleEndian.Uint16(b[off:])
	return int(v) - 1, v != 0, nil
}

// mergeAhead spends on merges, before the transaction's own writes, the
// budget that about textBytes of new text will earn (see finish): a batch
// does them while its texts are still being analysed.
func (w *writer) mergeAhead(textBytes int64) error {
	return w.merge(mergeRatio * textBytes / textPerSegmentByte)
}

// textPerSegmentByte is about how many bytes of text make a byte of
// segment, on the high side so that mergeAhead underestimates rather
// than overdoes: Go code makes a segment of a fifth (128-word chunks) to
// a sixth (the default size) of its size.
const textPerSegmentByte = 6

// finish writes the transaction's segment, merges for a budget
// proportional to it (less what mergeAhead spent), and writes the length
// blocks, the segment list and the stats, bumping the generation. The
// merges its segment makes due start here, so that an index is left
// merged as far as its writes paid for.
func (w *writer) finish() error {
	written, err := w.writeSegment()
	if err != nil {
		return err
	}
	if err := w.merge(max(mergeMinBudget, mergeRatio*written) - w.merged); err != nil {
		return err
	}
	if w.segsChanged {
		if err := w.k.put(bucketMeta, segmentsKey, encodeSegs(w.segs)); err != nil {
			return err
		}
	}
	for blk := range w.dirty {
		if err := w.k.put(bucketLens, u32key(blk), w.lens[blk]); err != nil {
			return err
		}
	}
	w.st.Gen++
	w.s.an.putVocabs(w.v)
	return w.k.put(bucketMeta, statsKey, w.st.encode())
}

// writeSegment writes the transaction's postings and dead counts as a new
// segment, its terms in order, and returns its size.
func (w *writer) writeSegment() (int64, error) {
	// Group the postings by term, keeping their chunk order: a counting
	// sort on the term index.
	off := make([]int, len(w.names)+1)
	for _, a := range w.adds {
		if !w.freedNew[a.chunk] {
			off[a.term+1]++
		}
	}
	for i := 1; i < len(off); i++ {
		off[i] += off[i-1]
	}
	ps := make([]posting, off[len(w.names)])
	at := slices.Clone(off[:len(w.names)])
	for _, a := range w.adds {
		if !w.freedNew[a.chunk] {
			ps[at[a.term]] = posting{chunk: a.chunk, tf: a.tf}
			at[a.term]++
		}
	}
	order := make([]termOrder, 0, len(w.names))
	for i, name := range w.names {
		if off[i+1] > off[i] || w.dead[i] != 0 {
			order = append(order, termOrder{prefix: prefixKey(name), term: uint32(i)})
		}
	}
	if len(order) == 0 {
		return 0, nil
	}
	// Sorting the terms is much of the segment's cost: their first bytes,
	// compared as one number, order most pairs without reading the strings.
	slices.SortFunc(order, func(a, b termOrder) int {
		if c := cmp.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return strings.Compare(w.names[a.term], w.names[b.term])
	})
	lo, hi := w.st.NextChunk, w.st.NextChunk
	if w.postHi > 0 {
		lo, hi = w.postLo, w.postHi
	}
	seg := segInfo{id: uint32(w.st.NextSeg), lo: lo, hi: hi, avgdl: w.avgdl()}
	w.st.NextSeg++
	b, err := w.k.segBucket(seg.id, true)
	if err != nil {
		return 0, err
	}
	bw := &blockWriter{b: b}
	var e []byte
	for _, o := range order {
		t := o.term
		if e, err = w.appendEntry(e[:0], lo, w.dead[t], ps[off[t]:off[t+1]], seg.avgdl); err != nil {
			return 0, err
		}
		if err := bw.add([]byte(w.names[t]), e); err != nil {
			return 0, err
		}
	}
	if err := bw.flush(); err != nil {
		return 0, err
	}
	seg.bytes, seg.entries = bw.bytes, bw.entries
	w.segs = append(w.segs, seg)
	w.segsChanged = true
	return seg.bytes, nil
}

// termOrder is a term of the transaction, by its index, with its first
// eight bytes as a big-endian number (zeros after a shorter term), which
// orders two terms as their bytes do unless they are equal.
type termOrder struct {
	prefix uint64
	term   uint32
}

func prefixKey(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// avgdl is the average chunk length in words, as the transaction leaves
// it.
func (w *writer) avgdl() float64 {
	if w.st.Chunks == 0 || w.st.Tokens == 0 {
		return 1
	}
	return float64(w.st.Tokens) / float64(w.st.Chunks)
}

// appendEntry appends the entry of ps (see the package's appendEntry),
// the chunks' lengths read from the length blocks.
func (w *writer) appendEntry(b []byte, base uint32, dead int64, ps []posting, avgdl float64) ([]byte, error) {
	var lenErr error
	b = appendEntry(b, base, dead, ps, func(c uint32) int {
		dl, _, err := w.getLen(c)
		if err != nil {
			lenErr = err
		}
		return dl
	}, avgdl)
	return b, lenErr
}
