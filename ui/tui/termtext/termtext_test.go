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
