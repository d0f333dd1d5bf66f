package memory

import (
	"encoding/binary"
	"fmt"

	"github.com/asdine/storm/v3"
)

// A memory indexed under other text-analysis rules (analyzerVersion) is
// re-indexed from its stored chunk texts. That is long work on a large
// memory, and the database file is shared with other processes, which get
// it only between transactions. So the rebuild is a series of short
// transactions, each doing a bounded amount of work, with its progress in
// the record "rebuild" of the meta bucket:
//
//  1. the start (one transaction) sets the new analyzer version, zeroes the
//     term and token counts and records phase clear;
//  2. clear: each step deletes up to rebuildClearKeys keys of the old index
//     (terms, then postings, then lengths);
//  3. index: each step re-indexes the chunks from the recorded chunk number
//     on, up to rebuildStepBytes of text, analysed before the transaction;
//  4. the last step deletes the record.
//
// A process killed between steps leaves a record the next one resumes from;
// several processes opening the memory at once share the steps, each
// reading the progress inside its transaction. Every process finishes the
// rebuild before it reads or writes the memory (Store.ensure), so none uses
// a half-built index.
var rebuildKey = []byte("rebuild")

const (
	rebuildClear = 1
	rebuildIndex = 2
)

// The bounds of a rebuild step, chosen to keep each transaction well under
// 100 ms on a 2-core machine: BenchmarkRebuildStep measures p50 29 ms,
// longest 64 ms, for chunks of the default size. Variables so that tests
// can make steps tiny.
var (
	rebuildClearKeys  = 4096
	rebuildStepBytes  = 128 << 10
	rebuildStepChunks = 2048
)

type rebuildState struct {
	phase byte
	next  uint32 // phase index: the next chunk number to index
}

func (r rebuildState) encode() []byte {
	return binary.BigEndian.AppendUint32([]byte{r.phase}, r.next)
}

func (k kv) rebuildState() (rebuildState, bool, error) {
	raw, err := k.get(bucketMeta, rebuildKey)
	if err != nil || raw == nil {
		return rebuildState{}, false, err
	}
	if len(raw) != 5 || (raw[0] != rebuildClear && raw[0] != rebuildIndex) {
		return rebuildState{}, false, fmt.Errorf("%w: re-indexing progress record", errCorrupt)
	}
	return rebuildState{phase: raw[0], next: binary.BigEndian.Uint32(raw[1:])}, true, nil
}

// startRebuild begins re-indexing a memory written under other analysis
// rules, inside the caller's transaction.
func startRebuild(k kv, st statsRecord) error {
	st.Analyzer, st.Terms, st.Tokens = analyzerVersion, 0, 0
	st.Gen++
	if err := k.put(bucketMeta, statsKey, st.encode()); err != nil {
		return err
	}
	return k.put(bucketMeta, rebuildKey, rebuildState{phase: rebuildClear}.encode())
}

// finishRebuild runs the rebuild's remaining steps, one transaction each.
func (s *Store) finishRebuild() error {
	for {
		done, err := s.rebuildStep()
		if err != nil {
			return fmt.Errorf("re-indexing memory: %w", err)
		}
		if done {
			return nil
		}
	}
}

// rebuildStep does one bounded step of the rebuild and reports whether
// none is left.
func (s *Store) rebuildStep() (done bool, err error) {
	var state rebuildState
	var chunks []rebuildChunk
	err = s.db.View(func(n storm.Node) error {
		k := openKV(n)
		var ok bool
		if state, ok, err = k.rebuildState(); err != nil || !ok {
			done = true
			return err
		}
		if state.phase == rebuildIndex {
			chunks, err = readRebuildChunks(k, state.next)
		}
		return err
	})
	if err != nil || done {
		return done, err
	}
	if state.phase == rebuildClear {
		return false, s.db.Update(func(n storm.Node) error { return clearStep(openKV(n)) })
	}
	// Analysed outside the transaction, like new texts, so the file is held
	// only for the writes.
	memo := stemMemo{}
	for i := range chunks {
		c := &chunks[i]
		c.tf, c.dl = s.an.frequencies(c.text, memo)
	}
	err = s.db.Update(func(n storm.Node) error {
		k := openKV(n)
		now, ok, err := k.rebuildState()
		if err != nil || !ok || now != state {
			return err // another process did this step meanwhile
		}
		return s.indexStep(k, state, chunks)
	})
	return false, err
}

// rebuildChunk is a stored chunk to index again.
type rebuildChunk struct {
	num  uint32
	text string
	tf   map[string]uint32
	dl   int
}

// readRebuildChunks reads the live chunks from number next on, up to a
// step's bounds; none when next is past the last. The last one returned
// may be a marker with no text: the chunk numbers up to it are free
// (deleted documents).
func readRebuildChunks(k kv, next uint32) ([]rebuildChunk, error) {
	st, err := k.stats()
	if err != nil || next >= st.NextChunk {
		return nil, err
	}
	var out []rebuildChunk
	bytes := 0
	num := next
	for ; num < st.NextChunk && bytes < rebuildStepBytes && len(out) < rebuildStepChunks; num++ {
		raw, err := k.get(bucketChunks, u32key(num))
		if err != nil {
			return nil, err
		}
		if raw == nil {
			continue
		}
		c, err := decodeChunk(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, rebuildChunk{num: num, text: c.Text})
		bytes += len(c.Text)
	}
	if len(out) == 0 || out[len(out)-1].num != num-1 {
		out = append(out, rebuildChunk{num: num - 1}) // progress over free numbers
	}
	return out, nil
}

// indexStep writes the postings and lengths of chunks and records the
// progress, deleting the record after the last chunk.
func (s *Store) indexStep(k kv, state rebuildState, chunks []rebuildChunk) error {
	w, err := newWriter(s, k)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if c.tf == nil {
			continue
		}
		for term, n := range c.tf {
			d := w.delta(term)
			d.add = append(d.add, posting{chunk: c.num, tf: n})
		}
		if err := w.setLen(c.num, c.dl); err != nil {
			return err
		}
		w.st.Tokens += uint64(c.dl)
	}
	if err := w.finish(); err != nil {
		return err
	}
	if len(chunks) > 0 {
		state.next = chunks[len(chunks)-1].num + 1
	}
	if state.next >= w.st.NextChunk {
		return k.del(bucketMeta, rebuildKey)
	}
	return k.put(bucketMeta, rebuildKey, state.encode())
}

// clearStep deletes up to rebuildClearKeys keys of the old index, moving
// to the index phase when none is left.
func clearStep(k kv) error {
	state, ok, err := k.rebuildState()
	if err != nil || !ok || state.phase != rebuildClear {
		return err // another process did it meanwhile
	}
	budget := rebuildClearKeys
	for _, b := range []string{bucketTerms, bucketPost, bucketLens} {
		var keys [][]byte
		err := k.n.Select().Bucket(b).Limit(budget).RawEach(func(key, _ []byte) error {
			keys = append(keys, append([]byte(nil), key...))
			return nil
		})
		if err != nil {
			return err
		}
		for _, key := range keys {
			if err := k.del(b, key); err != nil {
				return err
			}
		}
		if budget -= len(keys); budget == 0 {
			return nil
		}
	}
	return k.put(bucketMeta, rebuildKey, rebuildState{phase: rebuildIndex}.encode())
}
