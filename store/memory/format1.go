package memory

import "fmt"

// The first index format kept one record per chunk and, per term, a head
// with the newest postings inline and older ones in posting segments:
//
//	chunks    chunk number (uint32 BE) -> format1Chunk
//	terms     term -> df, the term's segments and its newest postings
//	post      term 0x00 segment id -> postings
//
// Every commit rewrote the heads of the terms it touched, spread over the
// whole dictionary, so indexing slowed as the memory grew. The rest of the
// layout (docs, sources, lens, vecs, the stats record's fields but the
// distinct-term count) is format 2's. A memory in format 1 is converted on
// first use (see rebuild.go): each document's chunk texts become one
// textRecord, and the index is built again from them.
const (
	format1Chunks = "chunks"
	format1Terms  = "terms"
	format1Post   = "post"
)

// format1Chunk is one stored chunk of format 1.
type format1Chunk struct {
	DocID  string
	Source string
	Seq    int // position in its document, from 0
	Start  int // byte offset of the chunk's span in the document
	Text   string
}

func decodeFormat1Chunk(b []byte) (format1Chunk, error) {
	var c format1Chunk
	r := reader{b: b}
	c.Seq = int(r.uvarint())
	c.Start = int(r.uvarint())
	c.DocID = r.string()
	c.Source = r.string()
	if r.err {
		return c, fmt.Errorf("%w: chunk record (format 1)", errCorrupt)
	}
	c.Text = string(r.b)
	return c, nil
}

// format1Text rebuilds a document's text record from its chunks of format
// 1, in order: the chunks' spans tile the content, so each adds what it
// holds past the end of the one before.
func format1Text(chunks []format1Chunk) textRecord {
	t := textRecord{DocID: chunks[0].DocID, Source: chunks[0].Source, Spans: make([]span, len(chunks))}
	content := make([]byte, 0, chunks[len(chunks)-1].Start+len(chunks[len(chunks)-1].Text))
	for i, c := range chunks {
		if skip := len(content) - c.Start; skip >= 0 && skip <= len(c.Text) {
			content = append(content, c.Text[skip:]...)
		}
		t.Spans[i] = span{start: min(c.Start, len(content)), end: min(c.Start+len(c.Text), len(content))}
	}
	t.Content = string(content)
	return t
}
