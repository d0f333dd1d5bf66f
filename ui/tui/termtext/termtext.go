// Package termtext makes text from outside safe to draw in a terminal and
// fits it to a width: the TUI and its components (the Scheduler tab) share
// it, so there is one sanitizer.
//
// Text from outside (a tool's result, a model's reply, a file, an MCP
// server's description) must never reach the terminal as it is: an escape
// sequence in it can clear the screen, set the title or write the
// clipboard (OSC 52), a carriage return overwrites panel borders, and a tab
// is measured as zero cells but drawn as up to eight, so the line runs past
// the width and the frame is corrupted. Everything drawn goes through Strip
// once, when it is stored, and tabs are expanded just before a line is
// measured or wrapped, when the column is known.
package termtext

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// TabWidth is the distance between tab stops; code from models is indented
// with tabs (Go, Makefiles) and four columns keeps it readable in a panel.
const TabWidth = 4

// Strip removes escape sequences (CSI, OSC, DCS…) and every control
// character except newline and tab, and replaces invalid UTF-8.
func Strip(s string) string {
	if clean(s) {
		return s
	}
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '\n' || r == '\t' || !isControl(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clean reports whether s needs no stripping: valid UTF-8 without control
// characters. It is the fast path for ordinary text.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2: // the first byte of U+0080–U+00BF, where the C1 controls are
			if i+1 < len(s) && s[i+1] < 0xa0 {
				return false
			}
		}
	}
	return utf8.ValidString(s)
}

// isControl reports C0 and C1 control characters and DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }

// ExpandTabs replaces tabs with spaces up to the next stop, counting
// columns in cells (wide characters count two; escape sequences of
// already-styled text count none). Newlines restart the count.
func ExpandTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for j, part := range strings.Split(line, "\t") {
			if j > 0 {
				n := TabWidth - col%TabWidth
				b.WriteString(strings.Repeat(" ", n))
				col += n
			}
			b.WriteString(part)
			col += ansi.StringWidth(part)
		}
	}
	return b.String()
}

// WrapLine wraps one source line (no newlines, controls stripped) to width
// cells, breaking at spaces where possible and hard-breaking long words.
// Tabs are expanded first: the whole line is here, so the stops are right.
func WrapLine(line string, width int) []string {
	line = ExpandTabs(line)
	if line == "" {
		return []string{""}
	}
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	return strings.Split(ansi.Wrap(line, width, " -"), "\n")
}

// Wrap wraps text (with newlines) to width. The text may come from
// anywhere: escape sequences and control characters are stripped here.
func Wrap(text string, width int) []string {
	width = max(width, 1)
	var out []string
	for _, line := range strings.Split(Strip(text), "\n") {
		out = append(out, WrapLine(line, width)...)
	}
	return out
}

// PadRight pads or cuts s to exactly w cells.
func PadRight(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}
