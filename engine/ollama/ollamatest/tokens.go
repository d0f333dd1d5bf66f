package ollamatest

import (
	"unicode"
	"unicode/utf8"
)

// CountTokens is the fake's tokenizer, used for every count the server
// reports and every window it enforces: prompt_eval_count, eval_count, the
// silent cut, the 400 for a prompt that does not fit, a reply that fills
// the window.
//
// The rule: each run of letters and digits is ceil(runes/3) tokens, every
// other character that is not whitespace is one token, and whitespace is
// free. "hi" is 1 token, "question" 3, `{"a":1}` 7, "be brief" 4.
//
// It deliberately differs from "characters / 4": English prose costs about
// 1.5 times that estimate and JSON (tool schemas, tool calls) two to three
// times, so a client that trusts a naive estimate overfills the window and
// one that calibrates against prompt_eval_count does not. The factor is
// stable for a given kind of text, as with a real tokenizer.
func CountTokens(s string) int {
	n, run := 0, 0
	for i := 0; i < len(s); {
		var class byte
		if c := s[i]; c < utf8.RuneSelf {
			class = asciiClass[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			class = runeClass(r)
			i += size
		}
		switch class {
		case classWord:
			run++
			continue
		case classOther:
			n++
		}
		n += (run + 2) / 3
		run = 0
	}
	return n + (run+2)/3
}

// Character classes of the tokenizer.
const (
	classSpace byte = iota
	classWord
	classOther
)

// asciiClass is runeClass for the ASCII range, looked up rather than
// computed: most text is ASCII, and the fake counts whole prompts often.
var asciiClass = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = runeClass(rune(c))
	}
	return t
}()

func runeClass(r rune) byte {
	switch {
	case isWordRune(r):
		return classWord
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenPieces splits s into its tokens as CountTokens counts them, each
// piece carrying the whitespace before it (whitespace at the very end goes
// with the last piece), so the pieces concatenate back to s. A string of
// whitespace only is one piece of no tokens.
func tokenPieces(s string) []string {
	starts := tokenStarts(s)
	if len(starts) == 0 {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	out := make([]string, len(starts))
	from := 0
	for k := range starts {
		to := len(s)
		if k+1 < len(starts) {
			to = leadingSpaceStart(s, starts[k+1])
		}
		out[k] = s[from:to]
		from = to
	}
	return out
}

// tokenStarts returns the byte offset of every token's first character.
func tokenStarts(s string) []int {
	var starts []int
	run := 0
	for i, r := range s {
		switch {
		case isWordRune(r):
			if run%3 == 0 {
				starts = append(starts, i)
			}
			run++
		case unicode.IsSpace(r):
			run = 0
		default:
			starts = append(starts, i)
			run = 0
		}
	}
	return starts
}

// leadingSpaceStart is where the whitespace run ending just before i
// begins (i itself when none).
func leadingSpaceStart(s string, i int) int {
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= size
	}
	return i
}

// cutTokens returns the start of s that holds its first n tokens (all of
// s when it has no more), without the whitespace that would lead into the
// next token.
func cutTokens(s string, n int) string {
	if n <= 0 {
		return ""
	}
	starts := tokenStarts(s)
	if n >= len(starts) {
		return s
	}
	return s[:leadingSpaceStart(s, starts[n])]
}
