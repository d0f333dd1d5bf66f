package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
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
	for _, p := range preps {
		s.an.putVocabs(p.v)
	}
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
			v := s.an.takeVocab()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(work) {
					break
				}
				s.analyse(work[i], v)
			}
			if ctx.Err() != nil {
				s.an.putVocabs(v) // no prepared input holds it
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// analyse chunks p's text and counts its chunks' terms in v.
func (s *Store) analyse(p *prepared, v *vocab) {
	p.spans = chunkSpans(p.in.Content, p.size, p.overlap)
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
