package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/asdine/storm/v3"
)

// Stats are the memory's figures.
type Stats struct {
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
	// Terms is the number of distinct terms in the index.
	Terms int `json:"terms"`
	// Tokens is the number of indexed words over all chunks (overlaps
	// counted in each chunk; an identifier's whole term, indexed besides
	// its parts, not counted).
	Tokens         int     `json:"tokens"`
	AvgChunkTokens float64 `json:"avg_chunk_tokens"`
	Vectors        int     `json:"vectors"`
	EmbedModel     string  `json:"embed_model,omitempty"`
	// Chunking is how the stored documents were cut, the setting with the
	// most chunks first.
	Chunking []ChunkingUse `json:"chunking"`
	// DefaultChunkSize and DefaultChunkOverlap are what new texts get when
	// they set none.
	DefaultChunkSize    int    `json:"default_chunk_size"`
	DefaultChunkOverlap int    `json:"default_chunk_overlap"`
	Database            string `json:"database"`
}

// ChunkingUse is how many stored documents, and chunks, were cut with one
// chunk size and overlap (words).
type ChunkingUse struct {
	Size      int `json:"chunk_size"`
	Overlap   int `json:"chunk_overlap"`
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
}

// statsPage is how many document records Stats reads per transaction. A
// variable so that tests can make pages small.
var statsPage = 8192

// Stats returns the memory's figures. The chunking figures read every
// document record, a page per transaction so that other processes get the
// file between them; they are exact when no other process writes
// meanwhile.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	if err := s.ensure(); err != nil {
		return Stats{}, err
	}
	var st statsRecord
	err := s.db.View(func(n storm.Node) error {
		var err error
		st, err = openKV(n).stats()
		return err
	})
	if err != nil {
		return Stats{}, err
	}
	out := Stats{Documents: int(st.Docs), Chunks: int(st.Chunks), Tokens: int(st.Tokens),
		Vectors: int(st.Vectors), DefaultChunkSize: s.opts.ChunkSize, DefaultChunkOverlap: s.opts.ChunkOverlap, Database: s.db.Path()}
	if st.Chunks > 0 {
		out.AvgChunkTokens = float64(st.Tokens) / float64(st.Chunks)
	}
	if s.Semantic() {
		out.EmbedModel = s.opts.EmbedModel
	}
	if out.Terms, err = s.distinctTerms(ctx); err != nil {
		return out, err
	}
	out.Chunking, err = s.chunking(ctx)
	return out, err
}

// statsTerms is how many terms Stats reads per transaction. A variable so
// that tests can make pages small.
var statsTerms = 50_000

// distinctTerms counts the terms with a document frequency above 0,
// walking the segments' terms together, a page per transaction. Merges
// between pages do not change the count (they keep every term's
// frequency); writes do, so it is exact when no other process writes
// meanwhile.
func (s *Store) distinctTerms(ctx context.Context) (int, error) {
	total := 0
	var from []byte
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		err := s.db.View(func(n storm.Node) error {
			k := openKV(n)
			segs, err := k.segments()
			if err != nil {
				return err
			}
			count, next, err := k.liveTerms(segs, from, statsTerms)
			total += count
			from = next
			return err
		})
		if err != nil || from == nil {
			return total, err
		}
	}
}

// chunking gathers the documents' chunk settings.
func (s *Store) chunking(ctx context.Context) ([]ChunkingUse, error) {
	uses := map[[2]int]*ChunkingUse{}
	var last []byte // the last key read: pages resume after it
	seen := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		read := 0
		err := s.db.View(func(n storm.Node) error {
			q := n.From(rootBucket).Select().Bucket(bucketDocs).Skip(seen).Limit(statsPage)
			return q.RawEach(func(key, v []byte) error {
				read++
				if last != nil && bytes.Compare(key, last) <= 0 {
					return nil // listed before; documents were added meanwhile
				}
				last = append(last[:0], key...)
				var rec struct {
					Chunks       int `json:"chunks"`
					ChunkSize    int `json:"chunk_size"`
					ChunkOverlap int `json:"chunk_overlap"`
				}
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("%w: document record %s: %v", errCorrupt, key, err)
				}
				u := uses[[2]int{rec.ChunkSize, rec.ChunkOverlap}]
				if u == nil {
					u = &ChunkingUse{Size: rec.ChunkSize, Overlap: rec.ChunkOverlap}
					uses[[2]int{rec.ChunkSize, rec.ChunkOverlap}] = u
				}
				u.Documents++
				u.Chunks += rec.Chunks
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		seen += read
		if read < statsPage {
			break
		}
	}
	out := make([]ChunkingUse, 0, len(uses))
	for _, u := range uses {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Chunks != b.Chunks {
			return a.Chunks > b.Chunks
		}
		if a.Size != b.Size {
			return a.Size < b.Size
		}
		return a.Overlap < b.Overlap
	})
	return out, nil
}
