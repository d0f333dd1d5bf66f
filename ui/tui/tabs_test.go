package tui

import "testing"

func TestExpandTabs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\tx", "    x"},
		{"a\tb", "a   b"},
		{"abcd\te", "abcd    e"},
		{"日\tx", "日  x"}, // a wide character takes two of the four columns
		{"\x1b[31ma\x1b[0m\tb", "\x1b[31ma\x1b[0m   b"},
		{"a\tb\n\tc", "a   b\n    c"},
	} {
		if got := expandTabs(c.in); got != c.want {
			t.Errorf("expandTabs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
