package termtext

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapFitsAndExpandsTabs(t *testing.T) {
	lines := Wrap("one two three four five six\n\tx\x1b[2J", 9)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 9 || strings.ContainsAny(l, "\x1b\t") {
			t.Errorf("line %q (width %d)", l, w)
		}
	}
	if last := lines[len(lines)-1]; last != "    x" {
		t.Errorf("tab not expanded to the stop: %q", last)
	}
	if got := PadRight("日本", 5); got != "日本 " {
		t.Errorf("PadRight = %q", got)
	}
	if got := PadRight("abcdef", 4); ansi.StringWidth(got) != 4 || !strings.HasSuffix(got, "…") {
		t.Errorf("PadRight cut = %q", got)
	}
}

func TestFitBreaksLongWordsAndKeepsEveryCharacter(t *testing.T) {
	url := "https://example.com/" + strings.Repeat("abcdefghij", 12)
	line := "  \x1b[4m" + url + "\x1b[m tail"
	rows := Fit(line, 30)
	var joined strings.Builder
	for i, r := range rows {
		if w := ansi.StringWidth(r); w > 30 {
			t.Errorf("row %d is %d cells: %q", i, w, r)
		}
		plain := ansi.Strip(r)
		if i > 0 && !strings.HasPrefix(plain, "  ") {
			t.Errorf("row %d lost the line's indentation: %q", i, plain)
		}
		if i > 0 && i < len(rows)-1 && !strings.HasPrefix(r, "\x1b[4m") {
			t.Errorf("row %d does not restart the underline: %q", i, r)
		}
		if !strings.HasSuffix(r, "\x1b[m") {
			t.Errorf("row %d leaves its style open: %q", i, r)
		}
		joined.WriteString(strings.TrimPrefix(plain, "  "))
	}
	if got := joined.String(); got != url+" tail" {
		t.Errorf("characters lost or added:\n got %q\nwant %q", got, url+" tail")
	}
	if got := Fit("short", 30); len(got) != 1 || got[0] != "short" {
		t.Errorf("a line that fits changed: %q", got)
	}
	wide := strings.Repeat("日本", 20)
	var back strings.Builder
	for _, r := range Fit(wide, 9) {
		if ansi.StringWidth(r) > 9 {
			t.Errorf("wide row %q", r)
		}
		back.WriteString(r)
	}
	if back.String() != wide {
		t.Errorf("wide characters lost: %q", back.String())
	}
}

// A URL is one word to the wrappers: its dots and hyphens are not places
// to break it, so one longer than the line breaks at the width, and one
// that fits moves to the next line whole.
func TestURLsBreakAtTheWidthNotAtTheirPunctuation(t *testing.T) {
	url := "https://example-docs.example.com/guides/getting-started/install-on-linux.html"
	lines := WrapLine("See "+url+" for the steps.", 30)
	if lines[0] != "See" {
		t.Errorf("first line %q, want the URL to start a line", lines[0])
	}
	var got strings.Builder
	for i, l := range lines[1:] {
		if strings.HasPrefix(l, "https") || got.Len() > 0 && got.Len() < len(url) {
			got.WriteString(l)
		}
		if w := ansi.StringWidth(l); w > 30 || i < len(lines)-3 && w != 30 {
			t.Errorf("line %q is %d cells: a URL breaks at the width", l, w)
		}
	}
	if !strings.HasPrefix(got.String(), url) {
		t.Errorf("the URL came out as %q", got.String())
	}
	short := "https://go.dev/doc/effective-go"
	lines = WrapLine("the reference is at "+short+", read it", 40)
	if len(lines) < 2 || !strings.HasPrefix(lines[1], short) {
		t.Errorf("a URL that fits a line was broken: %q", lines)
	}

	held, ok := HoldURLs("(see "+short+"), or www.example.com/a-b.", nil)
	if !ok || strings.Contains(held, "go.dev") || !strings.HasSuffix(held, ".") || !strings.Contains(held, "),") {
		t.Errorf("held %q: the URLs' punctuation is held, the sentence's is not", held)
	}
	if back := ReleaseURLs(held); back != "(see "+short+"), or www.example.com/a-b." {
		t.Errorf("released %q", back)
	}
	// Text that holds the private-use runes already is left alone.
	odd := "\uE000 https://example.com/a.b"
	if got, ok := HoldURLs(odd, nil); ok || got != odd {
		t.Errorf("held %q in text that had a held rune: %q", odd, got)
	}
}
