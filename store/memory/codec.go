package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The index layout, inside the top-level bucket "memory":
//
//	docs      document id -> docRecord (JSON): source, metadata, created,
//	          hash, chunk range.
//	sources   source -> the ids of its documents (varint-prefixed).
//	meta      "stats" -> statsRecord (fixed 64 bytes).
//	chunks    chunk number (uint32 BE) -> chunkRecord: the chunk's text, its
//	          document, source, position. Chunk numbers are allocated in
//	          order and never reused, so a document's chunks are contiguous.
//	lens      block (uint32 BE) -> lensPerBlock uint16 LE term counts, the
//	          BM25 document lengths; 0 marks a free slot.
//	terms     term -> termHead: df, the term's posting segments, and its
//	          newest postings inline (the tail).
//	post      term 0x00 segment id (uint32 BE) -> postings sorted by chunk
//	          number, delta-encoded varints (see encodePostings).
//	vecs      chunk number -> embedding model name and float32 LE vector.
//
// A term's postings grow in its head's tail; when the tail reaches segCap
// entries it moves to a segment of its own. So adding a document rewrites
// at most segCap postings per term, not a list as long as the corpus. A
// segment's id is the lowest chunk number it may hold; segments hold
// ascending, disjoint ranges, and the tail holds chunks after all of them.
const (
	rootBucket    = "memory"
	bucketMeta    = "meta"
	bucketDocs    = "docs"
	bucketSources = "sources"
	bucketChunks  = "chunks"
	bucketLens    = "lens"
	bucketTerms   = "terms"
	bucketPost    = "post"
	bucketVecs    = "vecs"

	lensPerBlock = 4096
	// formatVersion changes when the layout above does.
	formatVersion = 1
)

// segCap is the most postings a segment (or a tail) holds: larger segments
// mean fewer reads per search, smaller ones less rewriting per write. A
// variable so that tests can make segments small enough to exercise.
var segCap = 8192

var statsKey = []byte("stats")

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
	Terms     uint64 // distinct terms
	Vectors   uint64 // chunks with an embedding
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
	b = binary.BigEndian.AppendUint64(b, s.Terms)
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
		Terms:     be.Uint64(b[44:]),
		Vectors:   be.Uint64(b[52:]),
	}, nil
}

func u32key(n uint32) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), n) }

// chunkRecord is one stored chunk.
type chunkRecord struct {
	DocID  string
	Source string
	Seq    int // position in its document, from 0
	Start  int // byte offset of the chunk's span in the document
	Text   string
}

func (c chunkRecord) encode() []byte {
	b := make([]byte, 0, 16+len(c.DocID)+len(c.Source)+len(c.Text))
	b = binary.AppendUvarint(b, uint64(c.Seq))
	b = binary.AppendUvarint(b, uint64(c.Start))
	b = appendString(b, c.DocID)
	b = appendString(b, c.Source)
	return append(b, c.Text...)
}

func decodeChunk(b []byte) (chunkRecord, error) {
	var c chunkRecord
	r := reader{b: b}
	c.Seq = int(r.uvarint())
	c.Start = int(r.uvarint())
	c.DocID = r.string()
	c.Source = r.string()
	if r.err {
		return c, fmt.Errorf("%w: chunk record", errCorrupt)
	}
	c.Text = string(r.b)
	return c, nil
}

// segRef is one posting segment as listed in its term's head.
type segRef struct {
	id    uint32 // lowest chunk number the segment may hold; part of its key
	count int
	last  uint32 // its highest chunk number, so that appending needs no decoding
}

// termHead is a term's document frequency, its posting segments in order,
// and its tail: the newest postings (fewer than segCap), kept in the head
// itself so that adding a document costs one read and one write per term,
// and a rare term needs no segment at all.
type termHead struct {
	df        int
	segs      []segRef
	tailCount int
	tailLast  uint32 // the tail's highest chunk number
	tail      []byte // encoded postings, the first relative to chunk 0
}

func (h termHead) encode() []byte {
	b := make([]byte, 0, 8+len(h.segs)*8+len(h.tail))
	b = binary.AppendUvarint(b, uint64(h.df))
	b = binary.AppendUvarint(b, uint64(len(h.segs)))
	prev := uint32(0)
	for _, s := range h.segs {
		b = binary.AppendUvarint(b, uint64(s.id-prev))
		b = binary.AppendUvarint(b, uint64(s.count))
		b = binary.AppendUvarint(b, uint64(s.last-s.id))
		prev = s.id
	}
	b = binary.AppendUvarint(b, uint64(h.tailCount))
	b = binary.AppendUvarint(b, uint64(h.tailLast))
	return append(b, h.tail...)
}

// decodeHead decodes a head; its tail shares b's memory.
func decodeHead(b []byte) (termHead, error) {
	r := reader{b: b}
	h := termHead{df: int(r.uvarint())}
	n := int(r.uvarint())
	if r.err || n > len(b) {
		return h, fmt.Errorf("%w: term head", errCorrupt)
	}
	h.segs = make([]segRef, n)
	prev := uint32(0)
	for i := range h.segs {
		prev += uint32(r.uvarint())
		count := int(r.uvarint())
		h.segs[i] = segRef{id: prev, count: count, last: prev + uint32(r.uvarint())}
	}
	h.tailCount = int(r.uvarint())
	h.tailLast = uint32(r.uvarint())
	if r.err {
		return h, fmt.Errorf("%w: term head", errCorrupt)
	}
	h.tail = r.b
	return h, nil
}

func segKey(term string, id uint32) []byte {
	k := make([]byte, 0, len(term)+5)
	k = append(k, term...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, id)
}

type posting struct {
	chunk uint32
	tf    uint32
}

// Postings are encoded as one varint per posting when tf is 1 (most
// postings): delta<<1 | 1; otherwise delta<<1 followed by tf.
func encodePostings(id uint32, ps []posting) []byte {
	return appendPostings(make([]byte, 0, len(ps)*2), id, ps)
}

// appendPostings appends ps, all after chunk prev, to an encoded segment.
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

func decodePostings(id uint32, b []byte, dst []posting) ([]posting, error) {
	prev := id
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

func (r *reader) string() string {
	n := r.uvarint()
	if r.err || n > uint64(len(r.b)) {
		r.err = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
