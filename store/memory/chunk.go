package memory

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunking defaults. Sizes are counted in words: runs of non-space
// characters, each Han/Hiragana/Katakana character counting as one word. A
// word is about 1.3 model tokens of English, so a 512-word chunk is about
// 650 tokens: small enough for several to fit in a prompt, large enough to
// carry a paragraph's context.
const (
	DefaultChunkSize    = 512
	DefaultChunkOverlap = 64
	// MaxChunkSize bounds chunk_size: BM25 lengths are stored in 16 bits
	// and a huge chunk is useless as retrieved context anyway.
	MaxChunkSize = 8192
)

// span is a chunk as a byte range of the document's content. Spans tile the
// content: the first starts at 0, the last ends at len(content), and each
// starts at or before the end of the one before (the overlap), so the
// content can be rebuilt from its chunks and is not stored twice.
type span struct{ start, end int }

// breakAfter is how good a place to end a chunk the gap after a word is.
const (
	breakNone      = 0
	breakSentence  = 1 // a sentence ends, or a line does
	breakParagraph = 2 // a blank line follows
)

type word struct {
	start  int // byte offset of the word's first character
	strong int // breakNone, breakSentence or breakParagraph after it
}

// CheckChunking validates a chunk size and overlap (in words).
func CheckChunking(size, overlap int) error {
	switch {
	case size <= 0:
		return fmt.Errorf("chunk size must be a positive number of words, got %d", size)
	case size > MaxChunkSize:
		return fmt.Errorf("chunk size %d is too large (at most %d words)", size, MaxChunkSize)
	case overlap < 0:
		return fmt.Errorf("chunk overlap must be zero or more words, got %d", overlap)
	case overlap >= size:
		return fmt.Errorf("chunk overlap (%d words) must be smaller than the chunk size (%d words)", overlap, size)
	}
	return nil
}

// chunkSpans splits text into chunks of at most size words, consecutive
// chunks sharing up to overlap words. A chunk ends, by preference, at a
// paragraph end in the second half of its window, else at a sentence or line
// end there, else after exactly size words. The next chunk starts at the
// earliest sentence start within the overlap window, so overlaps begin
// mid-sentence only when no sentence starts there. Text without words gives
// no chunks. size and overlap must satisfy CheckChunking.
func chunkSpans(text string, size, overlap int) []span {
	return chunkSpansWith(text, size, overlap, nil)
}

// maxScratchWords bounds the word list a vocab keeps between texts (2 MB):
// a larger text's list is dropped after use.
const maxScratchWords = 1 << 17

// chunkSpansWith is chunkSpans with the word list scanned into *scratch
// (when not nil), which is kept for the next text: an index build chunks
// thousands of files, and a list per file was a tenth of its allocations.
func chunkSpansWith(text string, size, overlap int, scratch *[]word) []span {
	var buf []word
	if scratch != nil {
		buf = *scratch
	}
	words := scanWords(text, buf)
	if scratch != nil {
		if cap(words) <= maxScratchWords {
			*scratch = words[:0]
		} else {
			*scratch = nil
		}
	}
	n := len(words)
	if n == 0 {
		return nil
	}
	var out []span
	for s := 0; ; {
		e := n
		if s+size < n {
			e = bestBreak(words, s+max(size/2, 1), s+size)
		}
		sp := span{start: words[s].start, end: len(text)}
		if s == 0 {
			sp.start = 0
		}
		if e < n {
			sp.end = words[e].start
		}
		out = append(out, sp)
		if e == n {
			return out
		}
		next := e - overlap
		for k := e - overlap; k < e; k++ {
			if k > s && words[k-1].strong >= breakSentence {
				next = k
				break
			}
		}
		s = max(next, s+1)
	}
}

// Chunks returns the texts content is cut into when it is stored with
// the given chunk size and overlap (words; see CheckChunking): the texts
// that are indexed, and that search hits show with their edges trimmed.
func Chunks(content string, size, overlap int) ([]string, error) {
	if err := CheckChunking(size, overlap); err != nil {
		return nil, err
	}
	spans := chunkSpans(content, size, overlap)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = content[sp.start:sp.end]
	}
	return out, nil
}

// bestBreak returns the end (exclusive word index) in [lo, hi] after the
// strongest break, the latest one among equals.
func bestBreak(words []word, lo, hi int) int {
	best, bestStrength := hi, breakNone
	for e := hi; e >= lo; e-- {
		if st := words[e-1].strong; st > bestStrength {
			best, bestStrength = e, st
			if st == breakParagraph {
				break
			}
		}
	}
	return best
}

// scanWords finds the words of text and the kind of break after each. Text
// is mostly ASCII, so bytes below utf8.RuneSelf are classified by a table
// and a word's run of ASCII bytes is skipped in one loop; other runes take
// the general path. The words are appended to buf[:0], which grows as
// needed.
func scanWords(text string, buf []word) []word {
	words := buf[:0]
	if want := len(text)/6 + 1; cap(words) < want {
		words = make([]word, 0, want)
	}
	inWord := false
	newlines := 0
	var last rune // the last rune that is not a closing quote or bracket
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case asciiSpace, asciiNewline:
				if inWord && len(words) > 0 && endsSentence(last) {
					words[len(words)-1].strong = max(words[len(words)-1].strong, breakSentence)
				}
				if c == '\n' {
					newlines++
				}
				inWord = false
				last = rune(c)
				i++
				continue
			}
			if !inWord {
				words = appendWord(words, i, newlines)
				newlines, inWord = 0, true
			}
			// The rest of the word's ASCII run; last is its last byte that
			// is not a closer, if it has one.
			j := i
			for j < len(text) && text[j] < utf8.RuneSelf && asciiClass[text[j]] >= asciiWord {
				if asciiClass[text[j]] == asciiWord {
					last = rune(text[j])
				}
				j++
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isSpace(r):
			if inWord && len(words) > 0 && endsSentence(last) {
				words[len(words)-1].strong = max(words[len(words)-1].strong, breakSentence)
			}
			inWord = false
		case r >= firstIdeographic && isIdeographic(r):
			words = appendWord(words, i, newlines)
			newlines, inWord = 0, true
		default:
			if !inWord {
				words = appendWord(words, i, newlines)
				newlines, inWord = 0, true
			}
			// Full stops of scripts written without spaces end a sentence
			// with no space after them.
			if r == '。' || r == '！' || r == '？' {
				words[len(words)-1].strong = breakSentence
			}
		}
		if !isCloser(r) {
			last = r
		}
		i += size
	}
	return words
}

// Classes of ASCII bytes for scanWords. The classes from asciiWord on
// belong to words.
const (
	asciiSpace = iota
	asciiNewline
	asciiWord
	asciiCloser // a closing quote or bracket: part of a word, but not its end
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c == '\n':
			t[c] = asciiNewline
		case isSpace(rune(c)):
			t[c] = asciiSpace
		case isCloser(rune(c)):
			t[c] = asciiCloser
		default:
			t[c] = asciiWord
		}
	}
	return t
}()

// firstIdeographic is below every Han, Hiragana and Katakana character.
const firstIdeographic = 0x2E80

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || ('\t' <= r && r <= '\r')
	}
	return unicode.IsSpace(r)
}

// appendWord adds a word starting at offset i, marking the break before it
// from the newlines seen since the previous word.
func appendWord(words []word, i, newlines int) []word {
	if k := len(words) - 1; k >= 0 {
		switch {
		case newlines >= 2:
			words[k].strong = breakParagraph
		case newlines == 1:
			words[k].strong = max(words[k].strong, breakSentence)
		}
	}
	return append(words, word{start: i})
}

// endsSentence reports whether a word whose last rune (closing quotes and
// brackets aside) is r ends a sentence.
func endsSentence(r rune) bool {
	switch r {
	case '.', '!', '?', '…':
		return true
	}
	return false
}

// isCloser reports closing quotes and brackets, which may follow a
// sentence's full stop: `"Done."` and `(see below.)` end sentences.
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', ')', ']', '»':
		return true
	}
	return false
}

// chunkText is what one stored chunk shows: its span without the white
// space at its edges.
func chunkText(content string, sp span) string {
	return strings.TrimSpace(content[sp.start:sp.end])
}

// validText reports whether s is valid UTF-8 without NUL bytes.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
