package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
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

// prepared is an Input and its analysis, done by the goroutines of
// analyseAll while the transaction stores the inputs before it.
type prepared struct {
	in            Input
	hash          string
	size, overlap int
	unchanged     bool
	spans         []span
	// The chunks' terms, by their numbers in v: those of chunk i are
	// tfs[ends[i-1]:ends[i]]. lens are the chunks' lengths in words.
	v        *vocab
	tfs      []termFreq
	ends     []int
	lens     []int
	vecs     [][]float32
	embedErr string
	// id is the document's id when it was chosen before the write (a
	// queued write); empty means a new one.
	id string
}

// AddBatch stores several texts in one transaction: all of them or, on
// error, none. Embedding happens before the transaction; analysis runs on
// every CPU alongside it, the transaction storing each text once its
// analysis is done (see analyses), so that the writes of the first texts
// overlap the analysis of the last ones. It is Prepare and Write.
func (s *Store) AddBatch(ctx context.Context, ins []Input) ([]Added, error) {
	b, err := s.Prepare(ctx, ins)
	if err != nil {
		return nil, err
	}
	return b.Write()
}

// A Batch is texts checked and being analysed, which Write stores in one
// transaction. A caller with more texts prepares the next batch before
// writing this one ends, so that its analysis overlaps this one's writes
// and commit (as `jarvis memory index` does); batches are written in the
// order they were prepared.
type Batch struct {
	s     *Store
	ctx   context.Context
	preps []*prepared
	an    *analyses
	used  bool
}

// Prepare checks the texts (an invalid one fails the batch, naming it),
// notes those whose source already holds the same text, and starts
// analysing the others in the background. The batch must be written or
// discarded.
func (s *Store) Prepare(ctx context.Context, ins []Input) (*Batch, error) {
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
	return &Batch{s: s, ctx: ctx, preps: preps, an: s.analyseAll(ctx, preps)}, nil
}

// Discard stops the batch's analysis and stores nothing.
func (b *Batch) Discard() {
	if b.used {
		return
	}
	b.used = true
	b.an.stop()
	for _, p := range b.preps {
		b.s.an.putVocabs(p.v)
	}
}

// Write stores the batch in one transaction: all of its texts or, on
// error, none. A batch is written once.
func (b *Batch) Write() ([]Added, error) {
	if b.used {
		return nil, errors.New("memory batch already written or discarded")
	}
	defer b.Discard()
	s, ctx, preps, an := b.s, b.ctx, b.preps, b.an
	if s.Semantic() {
		// Every chunk's text goes to the embedding server before the
		// transaction, so the database is not held for the network.
		if err := an.waitAll(); err != nil {
			return nil, err
		}
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
		if err := w.mergeAhead(an.textBytes); err != nil {
			return err
		}
		// About one posting per dozen bytes of text, as analyse guesses:
		// grown by doubling, the list was a sixth of an index build's
		// allocations.
		w.adds = slices.Grow(w.adds, int(an.textBytes/12))
		now := time.Now().UTC()
		for i, p := range preps {
			if err := an.wait(i); err != nil {
				return err
			}
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
	p.hash = contentHash(in.Content)
	return p, nil
}

// contentHash is the hex SHA-256 of s, hashed through a small buffer: the
// hash takes bytes, and converting the whole text copied every document
// once more (a sixth of an index build's allocations).
func contentHash(s string) string {
	h := sha256.New()
	var buf [4096]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
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

// analyses is the analysis of a batch's inputs under way: goroutines on
// every CPU take the inputs in order, so that they are done about in the
// order the transaction stores them. A batch's goroutines start taking
// inputs once the batch prepared before it has taken all of its own (see
// analyzer.turn): `memory index` prepares a batch while the one before
// it is written, and analysing both at once split the processors between
// them, though the transaction waits only for the earlier one.
type analyses struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   []chan struct{} // closed once preps[i] is analysed (or skipped)
	wg     sync.WaitGroup
	vocabs []*vocab // the goroutines' own, given back by stop
	// textBytes is the size of the texts being analysed.
	textBytes int64
	s         *Store
	once      sync.Once
	// taken is closed once every input has been taken by a goroutine,
	// or the analysis stopped: the next batch's may start.
	taken     chan struct{}
	takenOnce sync.Once
}

func (a *analyses) allTaken() { a.takenOnce.Do(func() { close(a.taken) }) }

// analyseAll starts chunking and analysing the inputs to write.
func (s *Store) analyseAll(ctx context.Context, preps []*prepared) *analyses {
	a := &analyses{s: s, done: make([]chan struct{}, len(preps))}
	a.ctx, a.cancel = context.WithCancel(ctx)
	var work []int
	for i, p := range preps {
		a.done[i] = make(chan struct{})
		if p.unchanged {
			close(a.done[i])
		} else {
			work = append(work, i)
			a.textBytes += int64(len(p.in.Content))
		}
	}
	if len(work) == 0 {
		return a
	}
	a.taken = make(chan struct{})
	before := s.an.takeTurn(a.taken)
	var next atomic.Int64
	a.vocabs = make([]*vocab, min(runtime.GOMAXPROCS(0), len(work)))
	for g := range a.vocabs {
		v := s.an.takeVocab(a.textBytes)
		a.vocabs[g] = v
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer a.allTaken() // the inputs are all taken, or it stopped
			if before != nil {
				select {
				case <-before:
				case <-a.ctx.Done():
					return
				}
			}
			for a.ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(work) {
					break
				}
				s.analyse(preps[work[i]], v)
				close(a.done[work[i]])
			}
		}()
	}
	return a
}

// wait returns once input i is analysed, or with the context's error
// when it was cancelled first.
func (a *analyses) wait(i int) error {
	select {
	case <-a.done[i]:
		return nil
	default:
	}
	select {
	case <-a.done[i]:
		return nil
	case <-a.ctx.Done():
		return a.ctx.Err()
	}
}

// waitAll returns once every input is analysed.
func (a *analyses) waitAll() error {
	for i := range a.done {
		if err := a.wait(i); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the analysis (a failed transaction leaves inputs not
// analysed yet), waits for its goroutines and gives their vocabs back
// (those a stored input holds are given back after it, again, which
// putVocabs allows).
func (a *analyses) stop() {
	a.once.Do(func() {
		a.cancel()
		a.wg.Wait()
		a.s.an.putVocabs(a.vocabs...)
	})
}

// analyse chunks p's text and counts its chunks' terms in v.
func (s *Store) analyse(p *prepared, v *vocab) {
	p.spans = chunkSpansWith(p.in.Content, p.size, p.overlap, &v.words)
	p.v, p.tfs = v, make([]termFreq, 0, len(p.in.Content)/12+8)
	p.ends, p.lens = make([]int, len(p.spans)), make([]int, len(p.spans))
	for i, sp := range p.spans {
		p.tfs, p.lens[i] = v.count(p.in.Content[sp.start:sp.end], p.tfs)
		p.ends[i] = len(p.tfs)
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

// newID returns 16 random hex digits.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating a document id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
