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
