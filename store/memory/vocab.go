package memory

import (
	"slices"
	"sync"

	"github.com/kljensen/snowball/english"
)

// A dict numbers the terms a Store's analysis meets, shared by the
// goroutines analysing a batch and by the batches after it: a word is
// stemmed, and its term numbered, once. Numbers are valid as long as the
// dict: a full one is replaced by a new one for the vocabs made after,
// and those of the old one are dropped once their batches are written.
type dict struct {
	mu     sync.RWMutex
	byWord map[string]uint32 // folded word -> its term's number
	byTerm map[string]uint32 // term -> number
	terms  []string          // number -> term
}

// dictMaxWords bounds the words a dict takes before a new one replaces
// it: a working vocabulary fits (the Go distribution's sources have about
// 400,000), and memory stays bounded on odd corpora.
const dictMaxWords = 1 << 19

// newDict returns an empty dict sized for the words of about textBytes of
// text: a batch of files meets thousands of new words a megabyte, and a
// map that grows to them one doubling at a time spends more time moving
// its entries than finding them (an index build's tenth of its CPU).
func newDict(textBytes int64) *dict {
	n := int(min(max(textBytes/16, 4096), 1<<16))
	return &dict{byWord: make(map[string]uint32, n), byTerm: make(map[string]uint32, n)}
}

// number returns the number of a folded word's term, stemming it the
// first time.
func (d *dict) number(word []byte, latin bool) uint32 {
	d.mu.RLock()
	n, ok := d.byWord[string(word)] // no allocation for the lookup
	d.mu.RUnlock()
	if ok {
		return n
	}
	w := string(word)
	t := w
	if latin && !english.IsStopWord(w) {
		t = english.Stem(w, true)
	}
	// Another goroutine may have numbered the word since the lookup: it
	// found or made the same term's number, which is set again here.
	// Looking the word up again would cost a lookup of every new word.
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok = d.byTerm[t]; !ok {
		n = uint32(len(d.terms))
		d.terms = append(d.terms, t)
		d.byTerm[t] = n
	}
	d.byWord[w] = n
	return n
}

// names returns the terms by number, as many as the dict has now.
func (d *dict) names() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.terms
}

func (d *dict) full() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.byWord) >= dictMaxWords
}

// A vocab is one goroutine's view of a dict: the words it met last, so
// that it rarely takes the dict's lock, and the counts of the text being
// analysed, by term number, so that counting a chunk's terms indexes an
// array rather than hashing strings. Analysis is most of what indexing
// costs. A vocab is not safe for concurrent use.
type vocab struct {
	d      *dict
	counts []uint32 // occurrences in the text being counted, by number
	seen   []uint32 // the numbers counted so far, in order
	words  []word   // scratch for chunking (chunkSpansWith)
	// recent is a cache in front of the dict, small enough for the
	// processor's cache: a few thousand words make most of a text, and a
	// large map's lookups miss the processor's cache and, shared, take a
	// lock. It is two-way set-associative, a set to a cache line: a
	// lookup reads one line either way, and two words whose hashes
	// collide no longer evict each other. Of the 18 million words of
	// every .go file of the Go distribution in 128-word chunks, it finds
	// 95.4%, where a direct-mapped cache of the same 16,384 slots found
	// 94.2%: a fifth fewer dict lookups (839,000; 392,000 are of new words).
	recent *[recentSets][2]recentWord
}

const recentSets = 8192

type recentWord struct {
	n    uint32 // term number + 1; 0: empty
	len  uint8
	word [27]byte
}

// termFreq is one of a chunk's terms, by its number in a dict, and how
// often the chunk holds it.
type termFreq struct{ term, tf uint32 }

// takeVocab returns a vocab of an earlier batch, or a new one. A new dict
// it starts is sized for about textBytes of text (0: a query, or too
// little to matter).
func (a *analyzer) takeVocab(textBytes int64) *vocab {
	a.vocabMu.Lock()
	defer a.vocabMu.Unlock()
	if n := len(a.idle); n > 0 {
		v := a.idle[n-1]
		a.idle = a.idle[:n-1]
		return v
	}
	if a.dict == nil || a.dict.full() {
		a.dict, a.idle = newDict(textBytes), nil
	}
	return &vocab{d: a.dict}
}

// takeTurn makes taken the channel the next batch's analysis waits for,
// and returns the one this batch waits for: closed once the batch
// prepared before it has taken all its inputs (nil: none is under way).
func (a *analyzer) takeTurn(taken chan struct{}) (before chan struct{}) {
	a.vocabMu.Lock()
	defer a.vocabMu.Unlock()
	before, a.turn = a.turn, taken
	return before
}

// putVocabs keeps vocabs for the next batch once the writer is done with
// them, but those whose dict is full.
func (a *analyzer) putVocabs(vs ...*vocab) {
	a.vocabMu.Lock()
	defer a.vocabMu.Unlock()
	for _, v := range vs {
		if v != nil && v.d == a.dict && !v.d.full() && !slices.Contains(a.idle, v) {
			a.idle = append(a.idle, v)
		}
	}
}

// number returns the number of a folded word's term.
func (v *vocab) number(word []byte, latin bool) uint32 {
	var slot *recentWord
	if len(word) <= len(slot.word) {
		h := uint32(2166136261) // FNV-1a
		for _, c := range word {
			h = (h ^ uint32(c)) * 16777619
		}
		if v.recent == nil {
			v.recent = new([recentSets][2]recentWord)
		}
		set := &v.recent[h%recentSets]
		if set[0].holds(word) {
			return set[0].n - 1
		}
		if set[1].holds(word) {
			set[0], set[1] = set[1], set[0] // the most recent first
			return set[0].n - 1
		}
		set[1] = set[0]
		slot = &set[0]
	}
	n := v.d.number(word, latin)
	if slot != nil {
		slot.n, slot.len = n+1, uint8(copy(slot.word[:], word))
	}
	return n
}

func (r *recentWord) holds(word []byte) bool {
	return r.n != 0 && int(r.len) == len(word) && string(r.word[:r.len]) == string(word)
}

// count appends text's distinct terms with their frequencies to dst and
// returns it with the text's length in words, the document length BM25
// uses (an identifier's whole term, indexed besides its parts, does not
// count).
func (v *vocab) count(text string, dst []termFreq) ([]termFreq, int) {
	dl := 0
	words(text, func(word []byte, latin bool, parts int) {
		n := v.number(word, latin)
		if int(n) >= len(v.counts) {
			v.counts = append(v.counts, make([]uint32, int(n)+1-len(v.counts)+1024)...)
		}
		if v.counts[n] == 0 {
			v.seen = append(v.seen, n)
		}
		v.counts[n]++
		if parts == 1 {
			dl++
		}
	})
	for _, n := range v.seen {
		dst = append(dst, termFreq{term: n, tf: v.counts[n]})
		v.counts[n] = 0
	}
	v.seen = v.seen[:0]
	return dst, dl
}

// frequencies counts the terms of text by their text, for the checks that
// compare an index with what its chunks say.
func (a *analyzer) frequencies(text string) (map[string]uint32, int) {
	v := a.takeVocab(int64(len(text)))
	defer a.putVocabs(v)
	tfs, dl := v.count(text, nil)
	names := v.d.names()
	out := make(map[string]uint32, len(tfs))
	for _, f := range tfs {
		out[names[f.term]] = f.tf
	}
	return out, dl
}
