package memory

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// analyzerVersion names the rules below. The index stores it: terms written
// by one version are meaningless to another, so a store opened with a
// different version rebuilds its index from the stored chunk texts.
const analyzerVersion = 2

// maxTermBytes drops longer runs (base64 blobs, hashes, minified code):
// nobody searches for them and they would bloat the term dictionary.
const maxTermBytes = 64

// stemCacheMax bounds the stem cache; it is cleared when full. A working
// vocabulary fits easily, and clearing keeps memory bounded on odd corpora.
const stemCacheMax = 200_000

// analyzer turns text into index terms, identically for documents and
// queries:
//
//   - NFC normalisation, so a precomposed "é" and "e"+accent are one letter;
//   - a term is a run of letters, digits and combining marks in any script;
//     everything else (punctuation, quotes, apostrophes, symbols) separates
//     terms, so `"don't"`, (don't) and don't analyse alike;
//   - Han, Hiragana, Katakana, Thai, Lao, Khmer and Myanmar characters are
//     one term each, since those scripts do not separate words with spaces;
//   - lower case (Unicode rules);
//   - English stop words (the Snowball list) are indexed like any word, so
//     "it's", "The Who" or "not" can be found; a query drops them when it
//     has other words, which rank better (see queryTerms);
//   - terms made only of Latin letters are stemmed with the Snowball English
//     stemmer ("Running" and "runs" both become "run"); terms with digits or
//     in other scripts are kept as they are.
//
// It is safe for concurrent use.
type analyzer struct {
	mu    sync.RWMutex
	stems map[string]string
}

func newAnalyzer() *analyzer { return &analyzer{stems: make(map[string]string, 4096)} }

// stemMemo is a caller's own cache in front of the shared one, so that
// goroutines analysing a batch together do not contend for its lock.
type stemMemo map[string]string

// each calls fn with every term of text, in order, repeats included. The
// string passed to fn may be retained. memo may be nil.
func (a *analyzer) each(text string, memo stemMemo, fn func(term string)) {
	if !norm.NFC.IsNormalString(text) {
		text = norm.NFC.String(text)
	}
	var buf [maxTermBytes + utf8.UTFMax]byte
	word := buf[:0]
	latin, tooLong := true, false
	flush := func() {
		if len(word) > 0 && !tooLong {
			if t := a.term(word, latin, memo); t != "" {
				fn(t)
			}
		}
		word, latin, tooLong = buf[:0], true, false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf { // ASCII fast path
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush()
				continue
			}
			if c <= '9' {
				latin = false
			}
			if len(word) < maxTermBytes {
				word = append(word, c)
			} else {
				tooLong = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case isIdeographic(r):
			flush()
			word = utf8.AppendRune(word, unicode.ToLower(r))
			latin = false
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if !unicode.Is(unicode.Latin, r) {
				latin = false
			}
			if len(word)+utf8.RuneLen(r) <= maxTermBytes {
				word = utf8.AppendRune(word, unicode.ToLower(r))
			} else {
				tooLong = true
			}
		default:
			flush()
		}
	}
	flush()
}

// terms returns the distinct terms of text, for queries. Stop words are
// left out when the query has other words (they match nearly everything
// and only blur the ranking) and kept when it has nothing else, so a
// search for "it's" or "The Who" still finds them.
func (a *analyzer) terms(text string) []string {
	var all, content []string
	seen := map[string]bool{}
	a.each(text, nil, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		all = append(all, t)
		if !english.IsStopWord(t) {
			content = append(content, t)
		}
	})
	if len(content) > 0 {
		return content
	}
	return all
}

// frequencies counts the terms of text and returns the map and the number
// of terms (the document length BM25 uses). memo may be nil.
func (a *analyzer) frequencies(text string, memo stemMemo) (map[string]uint32, int) {
	tf := make(map[string]uint32, 64)
	n := 0
	a.each(text, memo, func(t string) {
		tf[t]++
		n++
	})
	return tf, n
}

// term maps one lower-cased word to its index term, "" for a stop word.
func (a *analyzer) term(word []byte, latin bool, memo stemMemo) string {
	if t, ok := memo[string(word)]; ok { // no allocation for the lookup
		return t
	}
	a.mu.RLock()
	t, ok := a.stems[string(word)]
	a.mu.RUnlock()
	if ok {
		if memo != nil {
			memo[string(word)] = t
		}
		return t
	}
	w := string(word)
	switch {
	case latin && !english.IsStopWord(w):
		t = english.Stem(w, true)
	default:
		t = w
	}
	a.mu.Lock()
	if len(a.stems) >= stemCacheMax {
		clear(a.stems)
	}
	a.stems[w] = t
	a.mu.Unlock()
	if memo != nil {
		memo[w] = t
	}
	return t
}

// isIdeographic reports characters of scripts written without spaces
// between words.
func isIdeographic(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}
