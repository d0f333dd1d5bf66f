package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// A text handed to memory_store while another process holds the database
// for longer than a wait should last must not be lost: AddQueued analyses
// and embeds it at once (neither needs the file), picks its id, and hands
// the write to the database's queue (store.Queue), which applies it when
// the file is free or keeps it in its journal for the next jarvis.

// opStore is the kind of a queued memory write; it is part of the journal
// format.
const opStore = "memory.store"

type storeOp struct {
	ID         string         `json:"id"`
	Content    string         `json:"content"`
	Source     string         `json:"source,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	ChunkSize  int            `json:"chunk_size"`
	Overlap    int            `json:"chunk_overlap"`
	EmbedModel string         `json:"embed_model,omitempty"`
	Vectors    [][]float32    `json:"vectors,omitempty"`
	EmbedError string         `json:"embed_error,omitempty"`
	At         time.Time      `json:"at"`
}

func init() { store.RegisterOp(opStore, applyStore) }

// applyStore writes a queued text in the transaction the queue runs.
func applyStore(n storm.Node, data json.RawMessage) error {
	var op storeOp
	if err := json.Unmarshal(data, &op); err != nil {
		return err
	}
	k := openKV(n)
	raw, err := k.get(bucketMeta, statsKey)
	if err != nil {
		return err
	}
	if raw == nil {
		if err := k.put(bucketMeta, statsKey, statsRecord{Format: formatVersion, Analyzer: analyzerVersion}.encode()); err != nil {
			return err
		}
	} else if st, err := decodeStats(raw); err != nil {
		return err
	} else if st.Format != formatVersion || st.Analyzer != analyzerVersion {
		return errors.New("the memory was indexed by another version of jarvis and must be re-indexed first (any memory command does it); the text was not stored")
	}
	if _, err := k.doc(op.ID); err == nil {
		return nil // stored already: a write replayed after a crash
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	s := &Store{an: newAnalyzer(), opts: Options{ChunkSize: op.ChunkSize, ChunkOverlap: op.Overlap, EmbedModel: op.EmbedModel}}
	p, err := s.check(Input{Content: op.Content, Source: op.Source, Metadata: op.Metadata, ChunkSize: op.ChunkSize, ChunkOverlap: op.Overlap})
	if err != nil {
		return err
	}
	p.id, p.embedErr = op.ID, op.EmbedError
	v := s.an.takeVocab(int64(len(p.in.Content)))
	s.analyse(p, v)
	defer s.an.putVocabs(v)
	if len(op.Vectors) == len(p.spans) {
		p.vecs = op.Vectors
	}
	w, err := newWriter(s, k)
	if err != nil {
		return err
	}
	if _, err := w.store(p, op.At); err != nil {
		return err
	}
	return w.finish()
}

// AddQueued stores one text through the write queue: it returns at once
// with the id the text will have. Errors are those of the text itself
// (empty, not UTF-8, too long a source).
func (s *Store) AddQueued(ctx context.Context, in Input) (Added, error) {
	if in.Replace {
		return Added{}, errors.New("a queued write cannot replace a source's documents")
	}
	p, err := s.check(in)
	if err != nil {
		return Added{}, err
	}
	s.analyse(p, s.an.takeVocab(int64(len(p.in.Content))))
	s.an.putVocabs(p.v)
	if s.Semantic() {
		s.embedAll(ctx, []*prepared{p})
	}
	id, err := newID()
	if err != nil {
		return Added{}, err
	}
	op, err := store.NewOp(opStore, fmt.Sprintf("the memory text %s", id), storeOp{
		ID: id, Content: in.Content, Source: in.Source, Metadata: in.Metadata, ChunkSize: p.size, Overlap: p.overlap,
		EmbedModel: s.opts.EmbedModel, Vectors: p.vecs, EmbedError: p.embedErr, At: time.Now().UTC(),
	})
	if err != nil {
		return Added{}, err
	}
	s.db.Queue().Enqueue(op)
	return Added{ID: id, Source: in.Source, Chunks: len(p.spans), EmbedError: p.embedErr}, nil
}
