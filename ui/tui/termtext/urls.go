package termtext

import (
	"strings"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// A URL is wrapped as one word. Wrappers break words at punctuation:
// glamour at " ,.;-+|" (a line too long for its width), ansi.Wrap at
// "-", so a long URL would break after its host ("https://github." then
// "com/…") or at a hyphen, and read as two things. HoldURLs swaps that
// punctuation inside URLs for private-use characters of the same width,
// which no wrapper breaks at; a URL longer than the line is then broken
// at the width (Fit, ansi.Wrap's hard break), and ReleaseURLs puts the
// characters back in the wrapped lines.

// urlPattern finds URLs: a scheme's or "www." up to a space or a
// character no URL holds unescaped (quotes, angle brackets, backticks,
// a table's bar). Sentence punctuation after it is left out (urlEnd).
var urlPattern = lazyregexp.New("(?i)\\b(?:https?|ftp|file)://[^\\s<>\"'`|]+|\\bwww\\.[^\\s<>\"'`|]+")

// held maps the break characters to the private-use runes standing for
// them, and back.
var (
	holdBreaks    = strings.NewReplacer(".", "\uE000", ",", "\uE001", ";", "\uE002", "-", "\uE003", "+", "\uE004")
	releaseBreaks = strings.NewReplacer("\uE000", ".", "\uE001", ",", "\uE002", ";", "\uE003", "-", "\uE004", "+")
)

// heldRunes are the runes HoldURLs writes: text that already holds one
// is left as it is, so releasing changes nothing that was there.
const heldRunes = "\uE000\uE001\uE002\uE003\uE004"

// HoldURLs returns s with the break characters inside its URLs held, and
// whether there was a URL to hold. around, when not nil, gives what to
// write before and after the URL at s[i:j] (markdown puts a bare URL in
// <>, so that it stays a link once its dots are held).
func HoldURLs(s string, around func(s string, i, j int) (before, after string)) (string, bool) {
	if !strings.Contains(s, "://") && !strings.Contains(strings.ToLower(s), "www.") || strings.ContainsAny(s, heldRunes) {
		return s, false
	}
	spans := urlPattern().FindAllStringIndex(s, -1)
	if len(spans) == 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	last := 0
	for _, sp := range spans {
		i, j := sp[0], urlEnd(s, sp[0], sp[1])
		b.WriteString(s[last:i])
		before, after := "", ""
		if around != nil {
			before, after = around(s, i, j)
		}
		b.WriteString(before)
		b.WriteString(holdBreaks.Replace(s[i:j]))
		b.WriteString(after)
		last = j
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// ReleaseURLs puts back the characters HoldURLs held.
func ReleaseURLs(s string) string {
	if !strings.ContainsAny(s, heldRunes) {
		return s
	}
	return releaseBreaks.Replace(s)
}

// urlEnd is where the URL found at s[i:j] ends: without the punctuation
// that ends a sentence or a clause after it, nor a closing bracket it
// did not open ("(see https://example.com/a)").
func urlEnd(s string, i, j int) int {
	for j > i {
		c := s[j-1]
		switch {
		case strings.IndexByte(".,;:!?*_~", c) >= 0:
		case c == ')' && strings.Count(s[i:j], "(") < strings.Count(s[i:j], ")"):
		case c == ']' && strings.Count(s[i:j], "[") < strings.Count(s[i:j], "]"):
		default:
			return j
		}
		j--
	}
	return j
}
