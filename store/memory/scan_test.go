package memory

import (
	"slices"
	"testing"
)

// scanWordsByRune is scanWords as it reads without its fast path for
// ASCII: rune by rune, every rune classified by the general rules. The
// fast path must find the same words, breaks and newlines.
func scanWordsByRune(text string) []word {
	words := make([]word, 0, len(text)/6+1)
	inWord := false
	newlines := 0
	var last rune
	for i, r := range text {
		switch {
		case isSpace(r):
			if inWord && len(words) > 0 && endsSentence(last) {
				words[len(words)-1].strong = max(words[len(words)-1].strong, breakSentence)
			}
			if r == '\n' {
				newlines++
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
			if len(words) > 0 && (r == '。' || r == '！' || r == '？') {
				words[len(words)-1].strong = breakSentence
			}
		}
		if !isCloser(r) {
			last = r
		}
	}
	return words
}

var scanSeeds = []string{
	"a. b", "x.\") y", "東京。 x", "a\n\nb", "é. x", "\u00a0a.\u2003b",
	"(see below.) Next", "a.\t\"b\"", "func (s *Store) Add(ctx context.Context) error {\n\treturn nil\n}",
	"end.]\n\n# Title\n- item; next?  Yes!", "naïve café. Über\r\nline",
}

// FuzzScanWordsMatchesRuneByRune: the fast path finds what reading rune by
// rune finds, on any text.
func FuzzScanWordsMatchesRuneByRune(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := scanWordsByRune(s), scanWords(s, nil); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", s, got, want)
		}
	})
}

// TestScanWordsMatchesRuneByRuneOnGoSources: the same on real code, with
// its comments, strings and punctuation.
func TestScanWordsMatchesRuneByRuneOnGoSources(t *testing.T) {
	for _, in := range goSources(t, "strconv", "unicode/utf8", "time") {
		if want, got := scanWordsByRune(in.Content), scanWords(in.Content, nil); !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("%s: word %d: got %v, want %v", in.Source, i, got[i], want[i])
				}
			}
			t.Fatalf("%s: %d words, want %d", in.Source, len(got), len(want))
		}
	}
}
