package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// A tab is measured as zero cells but drawn as up to eight, so a line
// holding one runs past the width and corrupts the frame. Text is stripped
// of escape sequences when it is stored (safe.Text keeps tabs), and tabs
// are expanded just before a line is measured or wrapped, when the column
// is known.

// tabWidth is the distance between tab stops; code from models is indented
// with tabs (Go, Makefiles) and four columns keeps it readable in a panel.
const tabWidth = 4

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
