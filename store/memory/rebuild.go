package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/asdine/storm/v3"
	berrors "go.etcd.io/bbolt/errors"
)

// A memory indexed under other text-analysis rules (analyzerVersion), or
// in the index format before this one (format1.go), is re-indexed from its
// stored texts. That is long work on a large memory, and the database file
// is shared with other processes, which get it only between transactions.
// So the rebuild is a series of short transactions, each doing a bounded
// amount of work, with its progress in the record "rebuild" of the meta
// bucket:
//
//  1. the start (one transaction) sets the new analyzer version and index
//     format, zeroes the token count and records phase convert (from
//     format 1) or clear;
//  2. convert: each step turns the chunk records of format 1 of whole
//     documents, up to rebuildStepBytes of text, into text records;
//  3. clear: one step drops the old index (its segments, or format 1's
//     term and posting buckets);
//  4. index: each step re-indexes the chunks from the recorded chunk number
//     on, up to rebuildStepBytes of text, analysed before the transaction,
//     as one segment (and merges, as any write does);
//  5. the last step deletes the record.
//
// A process killed between steps leaves a record the next one resumes from;
// several processes opening the memory at once share the steps, each
// reading the progress inside its transaction. Every process finishes the
// rebuild before it reads or writes the memory (Store.ensure), so none uses
// a half-built index. Documents, their texts, metadata and vectors are
// never deleted by it: a rebuild loses nothing.
var rebuildKey = []byte("rebuild")

const (
	rebuildClear   = 1
	rebuildIndex   = 2
	rebuildConvert = 3
)

// The bounds of a rebuild step, chosen to keep each transaction well under
// 100 ms on a 2-core machine (BenchmarkRebuildStep measures them).
// Variables so that tests can make steps tiny.
var (
	rebuildStepBytes  = 256 << 10
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
	if len(raw) != 5 || raw[0] < rebuildClear || raw[0] > rebuildConvert {
		return rebuildState{}, false, fmt.Errorf("%w: re-indexing progress record", errCorrupt)
	}
	return rebuildState{phase: raw[0], next: binary.BigEndian.Uint32(raw[1:])}, true, nil
}

// startRebuild begins re-indexing a memory written under other analysis
// rules or in index format 1, inside the caller's transaction.
func startRebuild(k kv, st statsRecord) error {
	phase := byte(rebuildClear)
	if st.Format == 1 {
		phase, st.NextSeg = rebuildConvert, 0 // format 1 kept the term count there
	}
	st.Format, st.Analyzer, st.Tokens = formatVersion, analyzerVersion, 0
	st.Gen++
	if err := k.put(bucketMeta, statsKey, st.encode()); err != nil {
		return err
	}
	return k.put(bucketMeta, rebuildKey, rebuildState{phase: phase}.encode())
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
	var end uint32
	err = s.db.View(func(n storm.Node) error {
		k := openKV(n)
		var ok bool
		if state, ok, err = k.rebuildState(); err != nil || !ok {
			done = true
			return err
		}
		if state.phase == rebuildIndex {
			chunks, end, err = readRebuildChunks(k, state.next)
		}
		return err
	})
	if err != nil || done {
		return done, err
	}
	switch state.phase {
	case rebuildConvert:
		return false, s.db.Update(func(n storm.Node) error { return convertStep(openKV(n)) })
	case rebuildClear:
		return false, s.db.Update(func(n storm.Node) error { return clearStep(openKV(n)) })
	}
	// Analysed outside the transaction, so the file is held only for the
	// writes.
	v := s.an.takeVocab(int64(rebuildStepBytes))
	defer s.an.putVocabs(v)
	var tfs []termFreq
	for i := range chunks {
		c := &chunks[i]
		from := len(tfs)
		tfs, c.dl = v.count(c.text, tfs)
		c.tfs = tfs[from:len(tfs):len(tfs)]
	}
	err = s.db.Update(func(n storm.Node) error {
		k := openKV(n)
		now, ok, err := k.rebuildState()
		if err != nil || !ok || now != state {
			return err // another process did this step meanwhile
		}
		return s.indexStep(k, state, v, chunks, end)
	})
	return false, err
}

// rebuildChunk is a stored chunk to index again.
type rebuildChunk struct {
	num  uint32
	text string
	tfs  []termFreq
	dl   int
}

// readRebuildChunks reads the chunks from number next on, up to a step's
// bounds, and returns them with the chunk number the next step starts at.
func readRebuildChunks(k kv, next uint32) ([]rebuildChunk, uint32, error) {
	st, err := k.stats()
	if err != nil || next >= st.NextChunk {
		return nil, st.NextChunk, err
	}
	b, err := k.bucket(bucketTexts, false)
	if err != nil || b == nil {
		return nil, st.NextChunk, err
	}
	c := b.Cursor()
	key, raw := c.Seek(u32key(next))
	if key == nil || binary.BigEndian.Uint32(key) != next {
		if pk, pv := c.Prev(); pk != nil {
			key, raw = pk, pv
		} else {
			key, raw = c.First()
		}
	}
	var out []rebuildChunk
	size := 0
	for ; key != nil; key, raw = c.Next() {
		first := binary.BigEndian.Uint32(key)
		t, err := decodeText(raw)
		if err != nil {
			return nil, 0, err
		}
		for i := range t.spans {
			num := first + uint32(i)
			if num < next {
				continue
			}
			if size >= rebuildStepBytes || len(out) >= rebuildStepChunks {
				return out, num, nil
			}
			text := t.chunk(i)
			out = append(out, rebuildChunk{num: num, text: string(text)})
			size += len(text)
		}
	}
	return out, st.NextChunk, nil
}

// indexStep writes the postings and lengths of chunks, numbered up to end,
// and records the progress, deleting the record after the last chunk.
func (s *Store) indexStep(k kv, state rebuildState, v *vocab, chunks []rebuildChunk, end uint32) error {
	w, err := newWriter(s, k)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		w.post(v, c.num, c.tfs)
		if err := w.setLen(c.num, c.dl); err != nil {
			return err
		}
		w.st.Tokens += uint64(c.dl)
	}
	if end > state.next {
		w.postLo, w.postHi = state.next, end
	}
	if err := w.finish(); err != nil {
		return err
	}
	if state.next = end; state.next >= w.st.NextChunk {
		return k.del(bucketMeta, rebuildKey)
	}
	return k.put(bucketMeta, rebuildKey, state.encode())
}

// convertStep turns the chunk records of format 1 of whole documents, up
// to rebuildStepBytes of text, into text records, moving to the clear
// phase when none is left.
func convertStep(k kv) error {
	state, ok, err := k.rebuildState()
	if err != nil || !ok || state.phase != rebuildConvert {
		return err // another process did it meanwhile
	}
	old, err := k.bucket(format1Chunks, false)
	if err != nil {
		return err
	}
	if old == nil {
		return k.put(bucketMeta, rebuildKey, rebuildState{phase: rebuildClear}.encode())
	}
	var keys [][]byte
	var doc []format1Chunk
	var first uint32
	size := 0
	flush := func() error {
		if len(doc) == 0 {
			return nil
		}
		err := k.put(bucketTexts, u32key(first), format1Text(doc).encode())
		doc = nil
		return err
	}
	c := old.Cursor()
	key, raw := c.First()
	for ; key != nil; key, raw = c.Next() {
		num := binary.BigEndian.Uint32(key)
		ch, err := decodeFormat1Chunk(raw)
		if err != nil {
			return err
		}
		// A document's chunks are numbered one after the other.
		if len(doc) > 0 && (ch.DocID != doc[0].DocID || num != first+uint32(len(doc))) {
			if err := flush(); err != nil {
				return err
			}
			if size >= rebuildStepBytes {
				break
			}
		}
		if len(doc) == 0 {
			first = num
		}
		doc = append(doc, ch)
		keys = append(keys, bytes.Clone(key))
		size += len(ch.Text)
	}
	if err := flush(); err != nil {
		return err
	}
	for _, key := range keys {
		if err := old.Delete(key); err != nil {
			return err
		}
	}
	if key != nil {
		return nil // more next step
	}
	return k.put(bucketMeta, rebuildKey, rebuildState{phase: rebuildClear}.encode())
}

// clearStep drops the old index, moving to the index phase.
func clearStep(k kv) error {
	state, ok, err := k.rebuildState()
	if err != nil || !ok || state.phase != rebuildClear {
		return err // another process did it meanwhile
	}
	for _, name := range []string{bucketSegs, format1Terms, format1Post, format1Chunks} {
		if err := k.dropBucket(name); err != nil {
			return err
		}
	}
	for _, key := range [][]byte{segmentsKey, mergeKey} {
		if err := k.del(bucketMeta, key); err != nil {
			return err
		}
	}
	return k.put(bucketMeta, rebuildKey, rebuildState{phase: rebuildIndex}.encode())
}

// dropBucket deletes one of the memory's buckets, if it exists, with all
// it holds.
func (k kv) dropBucket(name string) error {
	root := k.tx.Bucket([]byte(rootBucket))
	if root == nil {
		return nil
	}
	delete(k.buckets, name)
	if err := root.DeleteBucket([]byte(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return err
	}
	return nil
}
