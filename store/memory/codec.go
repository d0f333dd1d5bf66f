package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The index layout (format 2), inside the top-level bucket "memory":
//
//	docs      document id -> docRecord (JSON): source, metadata, created,
//	          hash, chunk range.
//	sources   source -> the ids of its documents (varint-prefixed).
//	meta      "stats" -> statsRecord (fixed 60 bytes); "segments" -> the
//	          live posting segments (segList); "merge" -> the merge in
//	          progress, if any (mergeState); "rebuild" -> a re-indexing's
//	          progress, if any.
//	texts     a document's first chunk number (uint32 BE) -> textRecord:
//	          its id, source, chunk spans and content, stored once (the
//	          words two chunks share are not repeated). Chunk numbers are
//	          allocated in order and never reused, so a document's chunks
//	          are contiguous and the record holding a chunk is the last one
//	          whose key is not after it.
//	lens      block (uint32 BE) -> lensPerBlock uint16 LE term counts, the
//	          BM25 document lengths; 0 marks a free slot.
//	segs      segment id (uint32 BE) -> a bucket of term -> entry (see
//	          encodeEntry): the postings of one range of chunk numbers.
//	vecs      chunk number -> embedding model name and float32 LE vector.
//
// The inverted index is log-structured, as SQLite FTS5 and Lucene build
// theirs: each transaction that stores texts writes their postings as a new
// segment, one sorted run of terms covering the chunks it allocated, and
// touches no other segment. A term's postings are the concatenation of its
// entries in the segments, which cover ascending, disjoint chunk ranges.
// Segments of similar size are merged, a bounded amount of work per write
// (see merge.go), so that a search reads a few of them and the postings of
// forgotten chunks are dropped. Forgetting a text writes no postings: its
// chunks' length slots become free, searches skip their postings, and the
// next segment counts, per term, the postings that died, so that document
// frequencies stay exact (see encodeEntry).
const (
	rootBucket    = "memory"
	bucketMeta    = "meta"
	bucketDocs    = "docs"
	bucketSources = "sources"
	bucketTexts   = "texts"
	bucketLens    = "lens"
	bucketSegs    = "segs"
	bucketVecs    = "vecs"

	lensPerBlock = 4096
	// formatVersion changes when the layout above does; format1.go reads
	// the one before, which the first use converts (see rebuild.go).
	formatVersion = 2
)

var (
	statsKey    = []byte("stats")
	segmentsKey = []byte("segments")
	mergeKey    = []byte("merge")
)

var errCorrupt = errors.New("memory index record is damaged")

// statsRecord holds the corpus figures BM25 needs and the generation
// counter, bumped by every write, that tells a process its caches are stale.
type statsRecord struct {
	Format    uint32
	Analyzer  uint32
	Gen       uint64
	NextChunk uint32 // next chunk number to allocate
	Chunks    uint64 // live chunks (BM25's N)
	Tokens    uint64 // sum of live chunks' term counts
	Docs      uint64
	// NextSeg is the next segment id to allocate. (Format 1 kept the
	// number of distinct terms in its place.)
	NextSeg uint64
	Vectors uint64 // chunks with an embedding
}

func (s statsRecord) encode() []byte {
	b := make([]byte, 0, 64)
	b = binary.BigEndian.AppendUint32(b, s.Format)
	b = binary.BigEndian.AppendUint32(b, s.Analyzer)
	b = binary.BigEndian.AppendUint64(b, s.Gen)
	b = binary.BigEndian.AppendUint32(b, s.NextChunk)
	b = binary.BigEndian.AppendUint64(b, s.Chunks)
	b = binary.BigEndian.AppendUint64(b, s.Tokens)
	b = binary.BigEndian.AppendUint64(b, s.Docs)
	b = binary.BigEndian.AppendUint64(b, s.NextSeg)
	b = binary.BigEndian.AppendUint64(b, s.Vectors)
	return b
}

func decodeStats(b []byte) (statsRecord, error) {
	if len(b) < 60 {
		return statsRecord{}, fmt.Errorf("%w: stats record of %d bytes", errCorrupt, len(b))
	}
	be := binary.BigEndian
	return statsRecord{
		Format:    be.Uint32(b[0:]),
		Analyzer:  be.Uint32(b[4:]),
		Gen:       be.Uint64(b[8:]),
		NextChunk: be.Uint32(b[16:]),
		Chunks:    be.Uint64(b[20:]),
		Tokens:    be.Uint64(b[28:]),
		Docs:      be.Uint64(b[36:]),
		NextSeg:   be.Uint64(b[44:]),
		Vectors:   be.Uint64(b[52:]),
	}, nil
}

func u32key(n uint32) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), n) }

// textRecord is a stored document's text: its content and the spans of
// its chunks (see span), the first chunk numbered by the record's key.
type textRecord struct {
	DocID   string
	Source  string
	Spans   []span
	Content string
}

func (t textRecord) encode() []byte {
	b := make([]byte, 0, 16+len(t.DocID)+len(t.Source)+4*len(t.Spans)+len(t.Content))
	b = appendString(b, t.DocID)
	b = appendString(b, t.Source)
	b = binary.AppendUvarint(b, uint64(len(t.Spans)))
	end := 0
	for _, sp := range t.Spans {
		// Spans tile the content: each starts at or before the end of
		// the one before.
		b = binary.AppendUvarint(b, uint64(end-sp.start))
		b = binary.AppendUvarint(b, uint64(sp.end-sp.start))
		end = sp.end
	}
	return append(b, t.Content...)
}

// textView is a decoded textRecord whose strings share the stored bytes:
// valid until the transaction ends.
type textView struct {
	docID, source []byte
	spans         []span
	content       []byte
}

func decodeText(b []byte) (textView, error) {
	var t textView
	r := reader{b: b}
	t.docID = r.bytes()
	t.source = r.bytes()
	n := r.uvarint()
	if r.err || n > uint64(len(b)) {
		return t, fmt.Errorf("%w: text record", errCorrupt)
	}
	t.spans = make([]span, n)
	end := 0
	for i := range t.spans {
		back, size := int(r.uvarint()), int(r.uvarint())
		t.spans[i] = span{start: end - back, end: end - back + size}
		end = t.spans[i].end
	}
	t.content = r.b
	if r.err || (n > 0 && (t.spans[0].start < 0 || end > len(t.content))) {
		return t, fmt.Errorf("%w: text record", errCorrupt)
	}
	return t, nil
}

// chunk returns the text of the record's i-th chunk.
func (t textView) chunk(i int) []byte { return t.content[t.spans[i].start:t.spans[i].end] }

// A segment's entry for a term is
//
//	uvarint n | zigzag varint dead | uvarint blocks | the blocks | n postings
//
// The postings are the term's in the segment's chunk range, the first
// relative to the range's start (see appendPostings). dead counts the
// term's postings in older segments whose chunks were forgotten before the
// segment was written, less those a merge dropped: a term's document
// frequency is the sum of n - dead over the segments, exact whatever
// merges have run. An entry whose n and dead are 0 is not written.
//
// A list of more than blockPostings postings is described in blocks of
// blockPostings: for each, uvarint its last chunk (relative to the last
// chunk of the block before, or to the range's start), uvarint its size in
// bytes, and a byte, its impact: the most one of its postings adds to a
// chunk's score, over the term's weight, rounded up to 255ths, for the
// average chunk length of the segment (see impact). A search skips the
// blocks that cannot bring a chunk into its results without decoding them
// (see score.go).
const blockPostings = 128

// entry is a decoded entry; postings and blocks share the stored bytes.
type entry struct {
	n        int
	dead     int64
	blocks   []postBlock
	postings []byte
}

// postBlock is one block of an entry's postings.
type postBlock struct {
	last   uint32 // its last chunk
	end    int    // where it ends in the entry's postings
	impact uint8
}

// impact is the most a posting of term frequency tf in a chunk of dl
// words adds to its score, over the term's weight (the factor of BM25 that
// tends to 1 as tf grows), rounded up to 255ths, where chunks are avgdl
// words long on average.
func impact(tf uint32, dl int, avgdl float64) uint8 {
	f := float64(tf)
	v := f / (f + bm25K1*(1-bm25B+bm25B*float64(dl)/avgdl))
	return uint8(min(255, max(1, math.Ceil(v*255))))
}

// appendEntry appends the entry of ps, all in a segment starting at
// chunk base whose chunks average avgdl words, to b; dl gives the length
// of a posting's chunk.
func appendEntry(b []byte, base uint32, dead int64, ps []posting, dl func(chunk uint32) int, avgdl float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	b = binary.AppendVarint(b, dead)
	if len(ps) <= blockPostings {
		b = binary.AppendUvarint(b, 0)
		return appendPostings(b, base, ps)
	}
	nb := (len(ps) + blockPostings - 1) / blockPostings
	b = binary.AppendUvarint(b, uint64(nb))
	// The table needs the blocks' sizes: encode them first.
	data := make([]byte, 0, 2*len(ps))
	prev := base
	for i := 0; i < len(ps); i += blockPostings {
		blk := ps[i:min(i+blockPostings, len(ps))]
		from := len(data)
		data = appendPostings(data, prev, blk)
		top := uint8(0)
		for _, p := range blk {
			top = max(top, impact(p.tf, dl(p.chunk), avgdl))
		}
		last := blk[len(blk)-1].chunk
		b = binary.AppendUvarint(b, uint64(last-prev))
		b = binary.AppendUvarint(b, uint64(len(data)-from))
		b = append(b, top)
		prev = last
	}
	return append(b, data...)
}

// decodeEntry decodes an entry of a segment starting at chunk base; with
// blocks false, it skips the block table.
func decodeEntry(b []byte, base uint32, blocks bool) (entry, error) {
	var e entry
	r := reader{b: b}
	n := r.uvarint()
	e.dead = r.varint()
	nb := r.uvarint()
	if r.err || n > uint64(len(b)) || nb > n {
		return e, fmt.Errorf("%w: postings entry", errCorrupt)
	}
	e.n = int(n)
	if blocks && nb > 0 {
		e.blocks = make([]postBlock, nb)
	}
	last, end := base, 0
	for i := range nb {
		last += uint32(r.uvarint())
		end += int(r.uvarint())
		if len(r.b) == 0 {
			r.err = true
			break
		}
		if blocks {
			e.blocks[i] = postBlock{last: last, end: end, impact: r.b[0]}
		}
		r.b = r.b[1:]
	}
	if r.err || (nb > 0 && end != len(r.b)) {
		return e, fmt.Errorf("%w: postings entry", errCorrupt)
	}
	e.postings = r.b
	return e, nil
}

type posting struct {
	chunk uint32
	tf    uint32
}

// Postings are encoded as one varint per posting when tf is 1 (most
// postings): delta<<1 | 1; otherwise delta<<1 followed by tf.
//
// appendPostings appends ps, all at or after chunk prev, to b.
func appendPostings(b []byte, prev uint32, ps []posting) []byte {
	for _, p := range ps {
		d := uint64(p.chunk-prev) << 1
		if p.tf == 1 {
			b = binary.AppendUvarint(b, d|1)
		} else {
			b = binary.AppendUvarint(b, d)
			b = binary.AppendUvarint(b, uint64(p.tf))
		}
		prev = p.chunk
	}
	return b
}

// nextPosting decodes the posting at the start of b, after the chunk prev.
// n is 0 when b is damaged.
func nextPosting(b []byte, prev uint32) (chunk, tf uint32, n int) {
	v, n1 := binary.Uvarint(b)
	if n1 <= 0 {
		return 0, 0, 0
	}
	chunk = prev + uint32(v>>1)
	if v&1 == 1 {
		return chunk, 1, n1
	}
	t, n2 := binary.Uvarint(b[n1:])
	if n2 <= 0 {
		return 0, 0, 0
	}
	return chunk, uint32(t), n1 + n2
}

func decodePostings(base uint32, b []byte, dst []posting) ([]posting, error) {
	prev := base
	for len(b) > 0 {
		c, tf, n := nextPosting(b, prev)
		if n == 0 {
			return dst, fmt.Errorf("%w: postings", errCorrupt)
		}
		b = b[n:]
		prev = c
		dst = append(dst, posting{chunk: c, tf: tf})
	}
	return dst, nil
}

// vecRecord is a chunk's embedding with the model that made it: vectors of
// different models are not comparable.
func encodeVec(model string, v []float32) []byte {
	b := make([]byte, 0, 1+len(model)+4*len(v))
	b = appendString(b, model)
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// decodeVec returns the vector when it was made by model.
func decodeVec(b []byte, model string) ([]float32, bool) {
	r := reader{b: b}
	m := r.string()
	if r.err || m != model || len(r.b)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(r.b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
	}
	return v, true
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader decodes varint-prefixed fields, remembering the first error.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	if r.err {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

// bytes returns a length-prefixed field, sharing the decoded bytes.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err || n > uint64(len(r.b)) {
		r.err = true
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}
