package memory

import "slices"

// A vocab numbers the terms one goroutine's analysis meets. A word's term
// (its stem) is looked up once per vocab rather than once per occurrence,
// and a chunk's terms are counted in an array indexed by term number
// rather than in a map of strings: analysis is most of what indexing
// costs. A vocab is not safe for concurrent use: each analysing goroutine
// has its own, and the writer maps its numbers to the batch's terms.
type vocab struct {
	a      *analyzer
	byWord map[string]uint32 // folded word -> its term's number
	byTerm map[string]uint32 // term -> number
	terms  []string          // number -> term
	counts []uint32          // occurrences in the text being counted, by number
	seen   []uint32          // the numbers counted so far, in order
	// recent is a direct-mapped cache in front of byWord, small enough
	// for the processor's cache: a few hundred words make most of a
	// text, and a large map's lookups miss the processor's cache.
	recent *[recentSlots]recentWord
}

const recentSlots = 4096

type recentWord struct {
	n    uint32 // term number + 1; 0: empty
	len  uint8
	word [27]byte
}

// termFreq is one of a chunk's terms, by its number in a vocab, and how
// often the chunk holds it.
type termFreq struct{ term, tf uint32 }

func (a *analyzer) newVocab() *vocab {
	return &vocab{a: a, byWord: make(map[string]uint32, 1024), byTerm: make(map[string]uint32, 1024)}
}

// vocabMaxWords bounds the words an idle vocab keeps for the next batch:
// a working vocabulary fits, and memory stays bounded on odd corpora.
const vocabMaxWords = 1 << 18

// takeVocab returns a vocab of an earlier batch, or a new one: the words it
// knows are not looked up again.
func (a *analyzer) takeVocab() *vocab {
	a.vocabMu.Lock()
	defer a.vocabMu.Unlock()
	if n := len(a.idle); n > 0 {
		v := a.idle[n-1]
		a.idle = a.idle[:n-1]
		return v
	}
	return a.newVocab()
}

// putVocabs keeps vocabs for the next batch once the writer is done with
// them, but those that have grown too large.
func (a *analyzer) putVocabs(vs ...*vocab) {
	a.vocabMu.Lock()
	defer a.vocabMu.Unlock()
	for _, v := range vs {
		if v != nil && len(v.byWord) <= vocabMaxWords && !slices.Contains(a.idle, v) {
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
			v.recent = new([recentSlots]recentWord)
		}
		slot = &v.recent[h%recentSlots]
		if slot.n != 0 && int(slot.len) == len(word) && string(slot.word[:slot.len]) == string(word) {
			return slot.n - 1
		}
	}
	n, ok := v.byWord[string(word)] // no allocation for the lookup
	if !ok {
		n = v.add(word, latin)
	}
	if slot != nil {
		slot.n, slot.len = n+1, uint8(copy(slot.word[:], word))
	}
	return n
}

// add numbers a word met for the first time.
func (v *vocab) add(word []byte, latin bool) uint32 {
	t := v.a.term(word, latin)
	n, ok := v.byTerm[t]
	if !ok {
		n = uint32(len(v.terms))
		v.terms = append(v.terms, t)
		v.counts = append(v.counts, 0)
		v.byTerm[t] = n
	}
	v.byWord[string(word)] = n
	return n
}

// count appends text's distinct terms with their frequencies to dst and
// returns it with the text's length in words, the document length BM25
// uses (an identifier's whole term, indexed besides its parts, does not
// count).
func (v *vocab) count(text string, dst []termFreq) ([]termFreq, int) {
	dl := 0
	v.a.words(text, func(word []byte, latin bool, parts int) {
		n := v.number(word, latin)
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
	v := a.takeVocab()
	defer a.putVocabs(v)
	tfs, dl := v.count(text, nil)
	out := make(map[string]uint32, len(tfs))
	for _, f := range tfs {
		out[v.terms[f.term]] = f.tf
	}
	return out, dl
}
