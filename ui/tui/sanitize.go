package tui

import (
	"strings"

	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// Text from outside is made safe to draw by package termtext (see its
// doc); these names keep the rest of the package short.

func stripControls(s string) string { return termtext.Strip(s) }

func expandTabs(s string) string { return termtext.ExpandTabs(s) }

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
