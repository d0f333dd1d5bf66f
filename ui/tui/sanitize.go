package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text from outside (a tool's result, a model's reply, a file, an MCP
// server's description) must never reach the terminal as it is: an escape
// sequence in it can clear the screen, set the title or write the
// clipboard (OSC 52), a carriage return overwrites panel borders, and a tab
// is measured as zero cells but drawn as up to eight, so the line runs past
// the width and the frame is corrupted. Everything drawn goes through
// stripControls once, when it is stored, and tabs are expanded just before
// a line is measured or wrapped, when the column is known.

// tabWidth is the distance between tab stops; code from models is indented
// with tabs (Go, Makefiles) and four columns keeps it readable in a panel.
const tabWidth = 4

// stripControls removes escape sequences (CSI, OSC, DCS…) and every control
// character except newline and tab, and replaces invalid UTF-8.
func stripControls(s string) string {
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

// expandTabs replaces tabs with spaces up to the next stop, counting
// columns in cells (wide characters count two; escape sequences of
// already-styled text count none). Newlines restart the count.
func expandTabs(s string) string {
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
				n := tabWidth - col%tabWidth
				b.WriteString(strings.Repeat(" ", n))
				col += n
			}
			b.WriteString(part)
			col += ansi.StringWidth(part)
		}
	}
	return b.String()
}

// escapeCarry keeps an escape sequence that a stream split across two
// deltas: stripped in halves, its tail would show as text ("[31m").
type escapeCarry struct{ pending string }

// maxEscape bounds what is held back: a longer "sequence" is not one.
const maxEscape = 256

// take returns the part of delta that is complete, holding back an escape
// sequence still open at its end for the next call.
func (c *escapeCarry) take(delta string) string {
	if c.pending != "" {
		delta, c.pending = c.pending+delta, ""
	}
	i := strings.LastIndexByte(delta, 0x1b)
	if i < 0 || len(delta)-i > maxEscape || escapeComplete(delta[i:]) {
		return delta
	}
	c.pending = delta[i:]
	return delta[:i]
}

// flush returns what is held back (the stream ended or was replaced).
func (c *escapeCarry) flush() string {
	p := c.pending
	c.pending = ""
	return p
}

// escapeComplete reports whether seq, starting with ESC, is a whole
// sequence: CSI ends with a final byte, OSC/DCS/APC/PM/SOS with BEL or ST,
// anything else after one more byte.
func escapeComplete(seq string) bool {
	if len(seq) < 2 {
		return false
	}
	switch seq[1] {
	case '[':
		for i := 2; i < len(seq); i++ {
			if seq[i] >= 0x40 && seq[i] <= 0x7e {
				return true
			}
		}
		return false
	case ']', 'P', '_', '^', 'X':
		return strings.IndexByte(seq[2:], 0x07) >= 0 || strings.Contains(seq[2:], "\x1b\\")
	}
	return true
}
