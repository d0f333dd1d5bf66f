package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asdine/storm/v3"
)

// Input is a text to store.
type Input struct {
	Content  string
	Source   string
	Metadata map[string]any
	// Replace makes this the only document of Source: the documents stored
	// under it are deleted in the same transaction. When one of them has
	// the same content and chunking, nothing is written and the result says
	// Unchanged (a re-indexed file that did not change).
	Replace bool
	// ChunkSize and ChunkOverlap (words) override the store's defaults when
	// ChunkSize is positive.
	ChunkSize    int
	ChunkOverlap int
}

// Added reports what storing one Input did.
type Added struct {
	ID        string `json:"id"`
	Source    string `json:"source,omitempty"`
	Chunks    int    `json:"chunks"`
	Unchanged bool   `json:"unchanged,omitempty"`
	// Replaced counts the documents of the same source this one replaced.
	Replaced int `json:"replaced,omitempty"`
	// EmbedError says why the chunks were stored without embeddings when
	// an embedding model is configured (they are still found by BM25).
	EmbedError string `json:"embed_error,omitempty"`
}

// Add stores one text.
func (s *Store) Add(ctx context.Context, in Input) (Added, error) {
	if err := s.ensure(); err != nil {
		return Added{}, err
	}
	out, err := s.AddBatch(ctx, []Input{in})
	if err != nil {
		return Added{}, err
	}
	return out[0], nil
}

// prepared is an Input analysed outside the transaction, so the database is
// held only for the writes.
type prepared struct {
	in            Input
	hash          string
	size, overlap int
	unchanged     bool
	spans         []span
	tfs           []map[string]uint32
	lens          []int
	vecs          [][]float32
	embedErr      string
	// id is the document's id when it was chosen before the write (a
	// queued write); empty means a new one.
	id string
}

// AddBatch stores several texts in one transaction: all of them or, on
// error, none. Analysis and embedding happen before the transaction.
func (s *Store) AddBatch(ctx context.Context, ins []Input) ([]Added, error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	preps := make([]*prepared, len(ins))
	anyReplace := false
	for i, in := range ins {
		p, err := s.check(in)
		if err != nil {
			if len(ins) > 1 {
				return nil, fmt.Errorf("text %d: %w", i+1, err)
			}
			return nil, err
		}
		preps[i] = p
		anyReplace = anyReplace || in.Replace
	}
	if anyReplace {
		if err := s.markUnchanged(preps); err != nil {
			return nil, err
		}
	}
	if err := s.analyseAll(ctx, preps); err != nil {
		return nil, err
	}
	if s.Semantic() {
		s.embedAll(ctx, preps)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]Added, len(preps))
	err := s.db.Update(func(n storm.Node) error {
		w, err := newWriter(s, openKV(n))
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		for i, p := range preps {
			if out[i], err = w.store(p, now); err != nil {
				return err
			}
		}
		return w.finish()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxSourceBytes bounds a source: it is a database key.
const maxSourceBytes = 4096

// check validates an Input and hashes it.
func (s *Store) check(in Input) (*prepared, error) {
	if strings.TrimSpace(in.Content) == "" {
		return nil, errors.New("content is empty")
	}
	if !validText(in.Content) {
		return nil, errors.New("content is not UTF-8 text (it contains binary data)")
	}
	if len(in.Source) > maxSourceBytes {
		return nil, fmt.Errorf("source is too long (%d bytes, at most %d)", len(in.Source), maxSourceBytes)
	}
	p := &prepared{in: in, size: s.opts.ChunkSize, overlap: s.opts.ChunkOverlap}
	if in.ChunkSize > 0 {
		p.size, p.overlap = in.ChunkSize, in.ChunkOverlap
	}
	if err := CheckChunking(p.size, p.overlap); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(in.Content))
	p.hash = hex.EncodeToString(sum[:])
	return p, nil
}

// markUnchanged flags the replacing inputs whose source already holds the
// same text, so they are not analysed or embedded for nothing. The
// transaction checks again: another process may have written since.
func (s *Store) markUnchanged(preps []*prepared) error {
	return s.db.View(func(n storm.Node) error {
		k := openKV(n)
		for _, p := range preps {
			if !p.in.Replace || p.in.Source == "" {
				continue
			}
			old, err := k.bySource(p.in.Source)
			if err != nil {
				return err
			}
			same, err := s.sameAs(k, old, p)
			if err != nil {
				return err
			}
			p.unchanged = same != nil
		}
		return nil
	})
}

// analyseAll chunks and analyses the inputs to write, on every CPU.
func (s *Store) analyseAll(ctx context.Context, preps []*prepared) error {
	var work []*prepared
	for _, p := range preps {
		if !p.unchanged {
			work = append(work, p)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(work)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			memo := stemMemo{}
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(work) {
					return
				}
				s.analyse(work[i], memo)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

func (s *Store) analyse(p *prepared, memo stemMemo) {
	p.spans = chunkSpans(p.in.Content, p.size, p.overlap)
	p.tfs = make([]map[string]uint32, len(p.spans))
	p.lens = make([]int, len(p.spans))
	for i, sp := range p.spans {
		p.tfs[i], p.lens[i] = s.an.frequencies(p.in.Content[sp.start:sp.end], memo)
	}
}

// embedBatch is how many chunks go to the embedding server per request.
const embedBatch = 32

// embedAll embeds every chunk. A failure leaves that text without vectors
// (BM25 still finds it) and is reported in its Added.
func (s *Store) embedAll(ctx context.Context, preps []*prepared) {
	for _, p := range preps {
		if p.unchanged || len(p.spans) == 0 {
			continue
		}
		texts := make([]string, len(p.spans))
		for i, sp := range p.spans {
			texts[i] = chunkText(p.in.Content, sp)
		}
		vecs := make([][]float32, 0, len(texts))
		for i := 0; i < len(texts); i += embedBatch {
			got, err := s.opts.Embedder.Embed(ctx, s.opts.EmbedModel, texts[i:min(i+embedBatch, len(texts))])
			if err == nil && len(got) != min(embedBatch, len(texts)-i) {
				err = fmt.Errorf("the server returned %d embeddings for %d texts", len(got), min(embedBatch, len(texts)-i))
			}
			if err != nil {
				p.embedErr = fmt.Sprintf("embedding with %s failed (%v); stored for keyword search only", s.opts.EmbedModel, err)
				vecs = nil
				break
			}
			vecs = append(vecs, got...)
		}
		p.vecs = vecs
	}
}

// Delete removes a document and its chunks.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.ensure(); err != nil {
		return err
	}
	return s.db.Update(func(n storm.Node) error {
		w, err := newWriter(s, openKV(n))
		if err != nil {
			return err
		}
		rec, err := w.k.doc(id)
		if err != nil {
			return err
		}
		if err := w.removeDoc(rec); err != nil {
			return err
		}
		return w.finish()
	})
}

// DeleteSource removes every document of source and returns how many
// there were.
func (s *Store) DeleteSource(ctx context.Context, source string) (int, error) {
	return s.DeleteSources(ctx, []string{source})
}

// DeleteSources removes every document of the sources, in one transaction,
// and returns how many there were.
func (s *Store) DeleteSources(ctx context.Context, sources []string) (int, error) {
	if err := s.ensure(); err != nil {
		return 0, err
	}
	count := 0
	err := s.db.Update(func(n storm.Node) error {
		count = 0
		w, err := newWriter(s, openKV(n))
		if err != nil {
			return err
		}
		for _, source := range sources {
			recs, err := w.k.bySource(source)
			if err != nil {
				return err
			}
			for _, rec := range recs {
				if err := w.removeDoc(rec); err != nil {
					return err
				}
			}
			count += len(recs)
		}
		if count == 0 {
			return nil
		}
		return w.finish()
	})
	return count, err
}

// sameAs returns the source's one document when it holds exactly p's text,
// chunked the same way and, when an embedding model is configured,
// embedded by it: a text whose embedding failed (or was made by another
// model) is stored again, so the next indexing run retries it.
func (s *Store) sameAs(k kv, old []docRecord, p *prepared) (*docRecord, error) {
	if len(old) != 1 {
		return nil, nil
	}
	r := &old[0]
	if r.Hash != p.hash || r.ChunkSize != p.size || r.ChunkOverlap != p.overlap {
		return nil, nil
	}
	if s.Semantic() && r.Chunks > 0 {
		// Vectors are written for all of a text's chunks or none.
		raw, err := k.get(bucketVecs, u32key(r.FirstChunk))
		if err != nil {
			return nil, err
		}
		if _, ok := decodeVec(raw, s.opts.EmbedModel); !ok {
			return nil, nil
		}
	}
	return r, nil
}

// writer applies changes inside one transaction. Posting changes are
// gathered per term and written once per term in finish.
type writer struct {
	s      *Store
	k      kv
	st     statsRecord
	deltas map[string]*termDelta
	lens   map[uint32][]byte // lens blocks read or written in this transaction
	dirty  map[uint32]bool
	memo   stemMemo
}

type termDelta struct {
	add []posting // ascending chunk numbers, all newer than any stored
	del []uint32
}

func newWriter(s *Store, k kv) (*writer, error) {
	st, err := k.stats()
	if err != nil {
		return nil, err
	}
	return &writer{s: s, k: k, st: st, deltas: map[string]*termDelta{}, lens: map[uint32][]byte{}, dirty: map[uint32]bool{}, memo: stemMemo{}}, nil
}

func (w *writer) delta(term string) *termDelta {
	d := w.deltas[term]
	if d == nil {
		d = &termDelta{}
		w.deltas[term] = d
	}
	return d
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
			w.s.analyse(p, nil)
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
	for i, sp := range p.spans {
		num := w.st.NextChunk
		w.st.NextChunk++
		c := chunkRecord{DocID: id, Source: p.in.Source, Seq: i, Start: sp.start, Text: p.in.Content[sp.start:sp.end]}
		if err := w.k.put(bucketChunks, u32key(num), c.encode()); err != nil {
			return added, err
		}
		for term, tf := range p.tfs[i] {
			d := w.delta(term)
			d.add = append(d.add, posting{chunk: num, tf: tf})
		}
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
	if err := w.putDoc(rec); err != nil {
		return added, err
	}
	w.st.Docs++
	added.ID, added.Chunks = id, rec.Chunks
	return added, nil
}

// removeDoc deletes a document, its chunks, vectors and postings. The
// postings to delete are found by analysing the chunk texts again: the
// analyser version is part of the index, so this gives the terms that were
// indexed.
func (w *writer) removeDoc(rec docRecord) error {
	for i := 0; i < rec.Chunks; i++ {
		num := rec.FirstChunk + uint32(i)
		key := u32key(num)
		raw, err := w.k.get(bucketChunks, key)
		if err != nil {
			return err
		}
		if raw != nil {
			c, err := decodeChunk(raw)
			if err != nil {
				return err
			}
			tf, _ := w.s.an.frequencies(c.Text, w.memo)
			for term := range tf {
				d := w.delta(term)
				d.del = append(d.del, num)
			}
			if err := w.k.del(bucketChunks, key); err != nil {
				return err
			}
		}
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
		}
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
	b, ok := w.lens[blk]
	if !ok {
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

// finish writes the gathered postings, the length blocks and the stats,
// bumping the generation.
func (w *writer) finish() error {
	terms := make([]string, 0, len(w.deltas))
	for t := range w.deltas {
		terms = append(terms, t)
	}
	sort.Strings(terms) // sequential keys make for denser B+tree pages
	for _, t := range terms {
		if err := w.applyTerm(t, w.deltas[t]); err != nil {
			return err
		}
	}
	for blk := range w.dirty {
		if err := w.k.put(bucketLens, u32key(blk), w.lens[blk]); err != nil {
			return err
		}
	}
	w.st.Gen++
	return w.k.put(bucketMeta, statsKey, w.st.encode())
}

// newID returns 16 random hex digits.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating a document id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
