package termtext

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestStripLeavesNothingThatDrives(t *testing.T) {
	hostile := "\x1b[31mred\x1b[0m\rXX\x1b]52;c;Zm9v\x07 \u009b2J bad\xff"
	got := Strip(hostile)
	if got != "redXX 2J bad\uFFFD" {
		t.Errorf("Strip = %q", got)
	}
	if plain := "plain · 日本\n\tindented"; Strip(plain) != plain {
		t.Errorf("Strip changed clean text: %q", Strip(plain))
	}
}

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
