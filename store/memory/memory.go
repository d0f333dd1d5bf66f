// Package memory is jarvis's long-term memory: documents (notes a model
// stored, files a person indexed) cut into overlapping chunks and found
// again by full-text search, optionally blended with embedding similarity.
//
// Everything lives in the shared database file (store.DB), in one
// top-level bucket, and every change is one transaction: a document, its
// chunks and its postings are committed together or not at all, so a
// process killed mid-indexing leaves every committed document whole and
// searchable. The database is held only for each transaction, so several
// jarvis processes can use the same memory.
//
// Ranking is Okapi BM25 (k1 = 1.2, b = 0.75) over an inverted index of
// analysed terms (see analyzer: case-insensitive, accent-insensitive for
// Latin letters, Unicode-aware, Snowball-stemmed, identifiers indexed whole
// and in parts). Query terms are OR-ed, stop words dropped when the query
// has other words; a query of stop words alone requires all of them.
// Scores are shown on a 0..1 scale (see scoreScale): a single mention of
// each term at average chunk length scores about 0.45, and terms found in
// most chunks score less, so scores of different queries compare. When an
// embedding model is configured, the scale is blended with cosine
// similarity (see Options.SemanticWeight).
//
// Searches keep a process-local copy of the chunk lengths, invalidated by a
// generation counter stored in the database that every write increments:
// another process's writes are seen by the next search.
package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asdine/storm/v3"
	bolt "go.etcd.io/bbolt"

	"github.com/jarvis-workbench/jarvis/store"
)

// DefaultSemanticWeight is the share of the blended score that comes from
// embedding similarity when an embedding model is configured.
const DefaultSemanticWeight = 0.5

// Options configure a Store. The zero value is BM25 only with the default
// chunking.
type Options struct {
	// ChunkSize and ChunkOverlap are in words (see DefaultChunkSize). A
	// ChunkSize of 0 means the defaults (and ChunkOverlap 0 then means the
	// default overlap too). An Input may override them.
	ChunkSize    int
	ChunkOverlap int
	// Embedder and EmbedModel enable semantic ranking: chunks are embedded
	// when stored and queries when searched. Both must be set; otherwise
	// search is BM25 alone.
	Embedder   Embedder
	EmbedModel string
	// SemanticWeight (0..1) is the share of the blended score from cosine
	// similarity; 0 means DefaultSemanticWeight.
	SemanticWeight float64
}

// Embedder turns texts into vectors. engine.Embedder satisfies it; the
// store declares its own so that it stays below the engine in the package
// graph.
type Embedder interface {
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
}

// Document is one stored text.
type Document struct {
	ID       string         `json:"id"`
	Source   string         `json:"source,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Created  time.Time      `json:"created"`
	// Hash is the SHA-256 of the content, hex; an unchanged file is
	// recognised by it.
	Hash         string `json:"hash"`
	Bytes        int    `json:"bytes"`
	Chunks       int    `json:"chunks"`
	ChunkSize    int    `json:"chunk_size"`
	ChunkOverlap int    `json:"chunk_overlap"`
	// Content is filled by Get only.
	Content string `json:"content,omitempty"`
}

// docRecord is a Document as stored (JSON). Its chunks are the contiguous
// chunk numbers FirstChunk .. FirstChunk+Chunks-1.
type docRecord struct {
	ID           string         `json:"id"`
	Source       string         `json:"source,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Created      time.Time      `json:"created"`
	Hash         string         `json:"hash"`
	Bytes        int            `json:"bytes"`
	FirstChunk   uint32         `json:"first_chunk"`
	Chunks       int            `json:"chunks"`
	ChunkSize    int            `json:"chunk_size"`
	ChunkOverlap int            `json:"chunk_overlap"`
}

func (r docRecord) document() Document {
	return Document{ID: r.ID, Source: r.Source, Metadata: r.Metadata, Created: r.Created, Hash: r.Hash,
		Bytes: r.Bytes, Chunks: r.Chunks, ChunkSize: r.ChunkSize, ChunkOverlap: r.ChunkOverlap}
}

// ErrNotFound means no document has the given id.
var ErrNotFound = errors.New("no memory document with that id")

// AmbiguousError means an id prefix matches several documents.
type AmbiguousError struct {
	Prefix  string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("id prefix %q matches several documents (%s); give more characters", e.Prefix, strings.Join(e.Matches, ", "))
}

// Store is the memory. It is safe for concurrent use, also by several
// processes sharing the database file.
type Store struct {
	db   *store.DB
	opts Options
	an   *analyzer

	norms atomic.Pointer[normCache]
	accs  sync.Pool // *accumulator

	// readyMu guards ready: whether the first-use check (buckets, format,
	// analyzer version) has succeeded. A failure (the file was busy) is
	// not kept: the next call tries again.
	readyMu sync.Mutex
	ready   bool

	onReindex atomic.Pointer[func(Reindex)]
}

// New returns the memory in db. It checks the options now and touches the
// database only on first use, where it creates the buckets when missing and
// re-indexes, once, a memory whose index was built with other text-analysis
// rules. So a command that never uses memory never waits for the file.
func New(db *store.DB, opts Options) (*Store, error) {
	if opts.ChunkSize == 0 {
		opts.ChunkSize = DefaultChunkSize
		if opts.ChunkOverlap == 0 {
			opts.ChunkOverlap = DefaultChunkOverlap
		}
	}
	if err := CheckChunking(opts.ChunkSize, opts.ChunkOverlap); err != nil {
		return nil, err
	}
	if opts.SemanticWeight == 0 {
		opts.SemanticWeight = DefaultSemanticWeight
	}
	if opts.SemanticWeight < 0 || opts.SemanticWeight > 1 {
		return nil, fmt.Errorf("semantic weight must be between 0 and 1, got %g", opts.SemanticWeight)
	}
	return &Store{db: db, opts: opts, an: newAnalyzer()}, nil
}

// ensure runs the first-use check until it succeeds once.
func (s *Store) ensure() error {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if s.ready {
		return nil
	}
	if err := s.init(); err != nil {
		return err
	}
	s.ready = true
	return nil
}

// init checks the memory's records, reading only, and writes only when
// they are missing or must be rebuilt: a search must not write to the file
// (it would fail on a read-only database and wake every other process
// watching it). A memory indexed under other analysis rules, or whose
// re-indexing was interrupted, is re-indexed before anything else.
func (s *Store) init() error {
	db := s.db
	create, start, finish := false, false, false
	var st statsRecord
	err := db.View(func(n storm.Node) error {
		k := openKV(n)
		raw, err := k.get(bucketMeta, statsKey)
		if err != nil || raw == nil {
			create = raw == nil
			return err
		}
		if st, err = decodeStats(raw); err != nil {
			return err
		}
		if err := checkFormat(db, st); err != nil {
			return err
		}
		start = st.Format != formatVersion || st.Analyzer != analyzerVersion
		_, finish, err = k.rebuildState()
		return err
	})
	if err != nil {
		return fmt.Errorf("opening memory: %w", err)
	}
	why := "going on with a re-indexing that was interrupted"
	if create || start {
		err = db.Update(func(n storm.Node) error {
			k := openKV(n)
			raw, err := k.get(bucketMeta, statsKey)
			if err != nil {
				return err
			}
			if raw == nil {
				return k.put(bucketMeta, statsKey, statsRecord{Format: formatVersion, Analyzer: analyzerVersion}.encode())
			}
			if st, err = decodeStats(raw); err != nil {
				return err
			}
			if err := checkFormat(db, st); err != nil {
				return err
			}
			switch {
			case st.Format != formatVersion:
				finish, why = true, fmt.Sprintf("its index is in format %d, this jarvis uses format %d", st.Format, formatVersion)
				return startRebuild(k, st)
			case st.Analyzer != analyzerVersion:
				finish, why = true, "this jarvis analyses text by other rules than the one that indexed it"
				return startRebuild(k, st)
			}
			_, finish, err = k.rebuildState() // another process started it
			return err
		})
		if err != nil {
			return fmt.Errorf("opening memory: %w", err)
		}
	}
	if !finish {
		return nil
	}
	fn := s.onReindex.Load()
	started := time.Now()
	if fn != nil {
		(*fn)(Reindex{Reason: why, Chunks: int(st.Chunks)})
	}
	if err := s.finishRebuild(); err != nil {
		return err
	}
	if fn != nil {
		(*fn)(Reindex{Reason: why, Chunks: int(st.Chunks), Done: true, Took: time.Since(started)})
	}
	return nil
}

// Reindex tells a front end about a re-indexing that a memory's first use
// runs before anything else, so that it can say why that use waits: once
// when it starts, with Done false, and once when it is over.
type Reindex struct {
	// Reason says why the memory is re-indexed.
	Reason string
	// Chunks is how many chunks are indexed again.
	Chunks int
	Done   bool
	Took   time.Duration
}

// OnReindex sets the function told about re-indexings (see Reindex). A
// re-indexing loses nothing: documents, texts, metadata and embeddings
// stay; only the index of their words is built again.
func (s *Store) OnReindex(fn func(Reindex)) { s.onReindex.Store(&fn) }

// checkFormat accepts the index formats this jarvis reads: its own, and
// format 1, which it converts.
func checkFormat(db *store.DB, st statsRecord) error {
	if st.Format == formatVersion || st.Format == 1 {
		return nil
	}
	return fmt.Errorf("the memory in %s has index format %d; this jarvis reads format %d. Use the jarvis version that wrote it, or another database (--db)", db.Path(), st.Format, formatVersion)
}

// Semantic reports whether searches blend in embedding similarity.
func (s *Store) Semantic() bool { return s.opts.Embedder != nil && s.opts.EmbedModel != "" }

// ChunkDefaults returns the chunk size and overlap (words) used when an
// Input sets none.
func (s *Store) ChunkDefaults() (size, overlap int) { return s.opts.ChunkSize, s.opts.ChunkOverlap }

// Get returns a document with its content.
func (s *Store) Get(ctx context.Context, id string) (Document, error) {
	if err := s.ensure(); err != nil {
		return Document{}, err
	}
	var doc Document
	err := s.db.View(func(n storm.Node) error {
		k := openKV(n)
		rec, err := k.doc(id)
		if err != nil {
			return err
		}
		doc = rec.document()
		if rec.Chunks == 0 {
			return nil // a text without words keeps no content
		}
		raw, err := k.get(bucketTexts, u32key(rec.FirstChunk))
		if err != nil {
			return err
		}
		if raw == nil {
			return fmt.Errorf("%w: the text of document %s is missing", errCorrupt, id)
		}
		t, err := decodeText(raw)
		if err != nil {
			return err
		}
		doc.Content = string(t.content)
		return nil
	})
	return doc, err
}

// List returns the documents, oldest first; only those from source when it
// is not empty.
func (s *Store) List(ctx context.Context, source string) ([]Document, error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	var recs []docRecord
	err := s.db.View(func(n storm.Node) error {
		k := openKV(n)
		var err error
		if source != "" {
			recs, err = k.bySource(source)
			return err
		}
		return k.n.Select().Bucket(bucketDocs).RawEach(func(_, v []byte) error {
			var rec docRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("%w: document record: %v", errCorrupt, err)
			}
			recs = append(recs, rec)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	docs := make([]Document, len(recs))
	for i, r := range recs {
		docs[i] = r.document()
	}
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].Created.Before(docs[j].Created) })
	return docs, nil
}

// Resolve returns the id of the one document whose id is id or starts
// with it.
func (s *Store) Resolve(ctx context.Context, id string) (string, error) {
	if err := s.ensure(); err != nil {
		return "", err
	}
	id = strings.TrimSpace(id)
	if id == "" {
		return "", ErrNotFound
	}
	var found string
	err := s.db.View(func(n storm.Node) error {
		k := openKV(n)
		if raw, err := k.get(bucketDocs, []byte(id)); err != nil || raw != nil {
			found = id
			return err
		}
		var recs []string
		err := k.n.Select().Bucket(bucketDocs).RawEach(func(key, _ []byte) error {
			if bytes.HasPrefix(key, []byte(id)) {
				recs = append(recs, string(key))
			}
			return nil
		})
		if err != nil {
			return err
		}
		switch len(recs) {
		case 0:
			return ErrNotFound
		case 1:
			found = recs[0]
			return nil
		}
		sort.Strings(recs)
		return &AmbiguousError{Prefix: id, Matches: recs}
	})
	return found, err
}

// Sources returns the sources that start with prefix, sorted.
func (s *Store) Sources(ctx context.Context, prefix string) ([]string, error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	var out []string
	err := s.db.View(func(n storm.Node) error {
		return n.From(rootBucket).Select().Bucket(bucketSources).RawEach(func(key, _ []byte) error {
			if bytes.HasPrefix(key, []byte(prefix)) {
				out = append(out, string(key))
			}
			return nil
		})
	})
	return out, err
}

// kv is raw key/value access to the memory's buckets in one transaction:
// bbolt's own calls on the buckets, found once per transaction, and the
// storm node of the root bucket for the listings that page through a
// bucket.
type kv struct {
	n       storm.Node
	tx      *bolt.Tx
	buckets map[string]*bolt.Bucket
}

// openKV returns the memory's buckets in the transaction of n, a Node
// given by store.DB.
func openKV(n storm.Node) kv {
	return kv{n: n.From(rootBucket), tx: store.BoltTx(n), buckets: map[string]*bolt.Bucket{}}
}

// appendOnly are the buckets whose keys are chunk numbers, which only
// grow: their pages are filled whole rather than split in halves, as
// bbolt does for keys that may later land between them. That halves the
// space the texts take.
var appendOnly = map[string]bool{bucketTexts: true, bucketLens: true, bucketVecs: true}

// bucket returns the named bucket, creating it (and the root) when create
// is set; nil when it does not exist and create is not set.
func (k kv) bucket(name string, create bool) (*bolt.Bucket, error) {
	if b := k.buckets[name]; b != nil {
		return b, nil
	}
	if k.tx == nil {
		return nil, errors.New("memory: the transaction was not opened by store.DB")
	}
	root := k.tx.Bucket([]byte(rootBucket))
	var b *bolt.Bucket
	if root != nil {
		b = root.Bucket([]byte(name))
	}
	if b == nil {
		if !create {
			return nil, nil
		}
		var err error
		if root, err = k.tx.CreateBucketIfNotExists([]byte(rootBucket)); err != nil {
			return nil, err
		}
		if b, err = root.CreateBucketIfNotExists([]byte(name)); err != nil {
			return nil, err
		}
	}
	if appendOnly[name] {
		b.FillPercent = 1
	}
	k.buckets[name] = b
	return b, nil
}

// get returns the value, nil when the bucket or key does not exist. The
// value is bbolt's: valid until the transaction ends, and not to be
// changed.
func (k kv) get(bucket string, key []byte) ([]byte, error) {
	b, err := k.bucket(bucket, false)
	if err != nil || b == nil {
		return nil, err
	}
	return b.Get(key), nil
}

// put stores value, which must not change until the transaction ends.
func (k kv) put(bucket string, key, value []byte) error {
	b, err := k.bucket(bucket, true)
	if err != nil {
		return err
	}
	return b.Put(key, value)
}

func (k kv) del(bucket string, key []byte) error {
	b, err := k.bucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	return b.Delete(key)
}

func (k kv) stats() (statsRecord, error) {
	raw, err := k.get(bucketMeta, statsKey)
	if err != nil || raw == nil {
		return statsRecord{Format: formatVersion, Analyzer: analyzerVersion}, err
	}
	return decodeStats(raw)
}

func (k kv) doc(id string) (docRecord, error) {
	var rec docRecord
	raw, err := k.get(bucketDocs, []byte(id))
	if err != nil {
		return rec, err
	}
	if raw == nil {
		return rec, ErrNotFound
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, fmt.Errorf("%w: document %s: %v", errCorrupt, id, err)
	}
	return rec, nil
}

// bySource returns the documents stored under source.
func (k kv) bySource(source string) ([]docRecord, error) {
	ids, err := k.sourceIDs(source)
	if err != nil {
		return nil, err
	}
	recs := make([]docRecord, 0, len(ids))
	for _, id := range ids {
		rec, err := k.doc(id)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func (k kv) sourceIDs(source string) ([]string, error) {
	raw, err := k.get(bucketSources, []byte(source))
	if err != nil || raw == nil {
		return nil, err
	}
	r := reader{b: raw}
	var ids []string
	for len(r.b) > 0 && !r.err {
		ids = append(ids, r.string())
	}
	if r.err {
		return nil, fmt.Errorf("%w: source list of %q", errCorrupt, source)
	}
	return ids, nil
}

func (k kv) setSourceIDs(source string, ids []string) error {
	if len(ids) == 0 {
		return k.del(bucketSources, []byte(source))
	}
	var b []byte
	for _, id := range ids {
		b = appendString(b, id)
	}
	return k.put(bucketSources, []byte(source), b)
}

// chunk returns the text record holding chunk num and the chunk's
// position in it.
func (k kv) chunk(num uint32) (textView, int, error) {
	b, err := k.bucket(bucketTexts, false)
	if err != nil {
		return textView{}, 0, err
	}
	if b != nil {
		c := b.Cursor()
		key, raw := c.Seek(u32key(num))
		if key == nil || binary.BigEndian.Uint32(key) != num {
			key, raw = c.Prev()
		}
		if len(key) == 4 && raw != nil {
			t, err := decodeText(raw)
			if i := int(num - binary.BigEndian.Uint32(key)); err != nil || i < len(t.spans) {
				return t, i, err
			}
		}
	}
	return textView{}, 0, fmt.Errorf("%w: chunk %d is missing", errCorrupt, num)
}
