package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A segment's terms and entries are stored in blocks of about blockBytes,
// keyed by their first term: one bbolt key per term would cost a B+tree
// insertion each and 16 bytes of element header, more than most entries
// take. A block is a run of records
//
//	uvarint shared | uvarint len(suffix) | suffix | uvarint len(entry) | entry
//
// each term given by the bytes it shares with the term before it in the
// block and the rest (the first record shares none). An entry larger than
// a block has one of its own.
//
// blockBytes lets bbolt put two blocks in a page: it gives a node at least
// two keys, so a block of a page would take two. A variable so that tests
// can make blocks of a few terms.
var blockBytes = 2000

// blockWriter writes a segment's records in term order.
type blockWriter struct {
	b       *bolt.Bucket
	first   []byte // the block's first term
	prev    []byte // the last term written
	block   []byte
	bytes   int64 // keys and blocks written so far
	entries int
}

// add appends a term's entry; terms must come in increasing order.
func (bw *blockWriter) add(term, entry []byte) error {
	shared := 0
	if len(bw.block) > 0 {
		for shared < len(term) && shared < len(bw.prev) && term[shared] == bw.prev[shared] {
			shared++
		}
		size := 3 + len(term) - shared + 3 + len(entry)
		if len(bw.first)+len(bw.block)+size > blockBytes {
			if err := bw.flush(); err != nil {
				return err
			}
			shared = 0
		}
	}
	if len(bw.block) == 0 {
		bw.first = bytes.Clone(term)
		bw.block = make([]byte, 0, blockBytes)
	}
	bw.block = binary.AppendUvarint(bw.block, uint64(shared))
	bw.block = binary.AppendUvarint(bw.block, uint64(len(term)-shared))
	bw.block = append(bw.block, term[shared:]...)
	bw.block = binary.AppendUvarint(bw.block, uint64(len(entry)))
	bw.block = append(bw.block, entry...)
	bw.prev = append(bw.prev[:0], term...)
	bw.entries++
	return nil
}

// flush writes the block being filled. bbolt keeps the key and value until
// the transaction commits, so the next block gets new buffers.
func (bw *blockWriter) flush() error {
	if len(bw.block) == 0 {
		return nil
	}
	if err := bw.b.Put(bw.first, bw.block); err != nil {
		return err
	}
	bw.bytes += int64(len(bw.first) + len(bw.block))
	bw.first, bw.block = nil, nil
	return nil
}

// blockReader walks the records of one block.
type blockReader struct {
	b    []byte
	term []byte // the current record's term (a buffer of the reader's)
	// entry is the current record's entry, sharing the block's bytes.
	entry []byte
}

// next moves to the next record; false at the end of the block.
func (r *blockReader) next() (bool, error) {
	if len(r.b) == 0 {
		return false, nil
	}
	shared, n := binary.Uvarint(r.b)
	if n <= 0 || shared > uint64(len(r.term)) {
		return false, fmt.Errorf("%w: index block", errCorrupt)
	}
	r.b = r.b[n:]
	suffix, n := binary.Uvarint(r.b)
	if n <= 0 || suffix > uint64(len(r.b)-n) {
		return false, fmt.Errorf("%w: index block", errCorrupt)
	}
	r.term = append(r.term[:shared], r.b[n:n+int(suffix)]...)
	r.b = r.b[n+int(suffix):]
	size, n := binary.Uvarint(r.b)
	if n <= 0 || size > uint64(len(r.b)-n) {
		return false, fmt.Errorf("%w: index block", errCorrupt)
	}
	r.entry = r.b[n : n+int(size) : n+int(size)]
	r.b = r.b[n+int(size):]
	return true, nil
}

// lookup returns term's entry in a segment's bucket, nil when it has none.
// buf is scratch space for the terms read.
func lookup(b *bolt.Bucket, term []byte, buf []byte) ([]byte, []byte, error) {
	c := b.Cursor()
	k, v := c.Seek(term)
	if k == nil || !bytes.Equal(k, term) {
		if k, v = c.Prev(); k == nil {
			return nil, buf, nil
		}
	}
	r := blockReader{b: v, term: buf[:0]}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return nil, r.term, err
		}
		switch bytes.Compare(r.term, term) {
		case 0:
			return r.entry, r.term, nil
		case 1:
			return nil, r.term, nil
		}
	}
}

// segCursor walks a segment's records in term order.
type segCursor struct {
	c   *bolt.Cursor
	r   blockReader
	end bool
}

// seek moves to the first record whose term is from or after it (the
// first record when from is nil).
func (sc *segCursor) seek(from []byte) error {
	var k, v []byte
	if from == nil {
		k, v = sc.c.First()
	} else if k, v = sc.c.Seek(from); k == nil || !bytes.Equal(k, from) {
		// The block before may hold it.
		if pk, pv := sc.c.Prev(); pk != nil {
			k, v = pk, pv
		} else {
			k, v = sc.c.First()
		}
	}
	if k == nil {
		sc.end = true
		return nil
	}
	sc.r = blockReader{b: v, term: sc.r.term[:0]}
	for {
		if err := sc.next(); err != nil || sc.end || from == nil || bytes.Compare(sc.r.term, from) >= 0 {
			return err
		}
	}
}

// next moves to the next record, across blocks.
func (sc *segCursor) next() error {
	for {
		ok, err := sc.r.next()
		if err != nil || ok {
			return err
		}
		k, v := sc.c.Next()
		if k == nil {
			sc.end = true
			return nil
		}
		sc.r = blockReader{b: v, term: sc.r.term[:0]}
	}
}
