// Package termtext fits text to a terminal width: wrapping, padding and
// tab stops, shared by the TUI and its components (the Scheduler tab).
//
// A tab is measured as zero cells but drawn as up to eight, so a line
// holding one runs past the width and corrupts the frame: tabs are
// expanded just before a line is measured or wrapped, when the column is
// known. Text from outside is stripped of escape sequences and control
// characters by ui/safe (Wrap does it; WrapLine expects it done).
package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// TabWidth is the distance between tab stops; code from models is indented
// with tabs (Go, Makefiles) and four columns keeps it readable in a panel.
const TabWidth = 4

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
	// A URL's hyphens are not places to break it (see HoldURLs).
	line, held := HoldURLs(line, nil)
	lines := strings.Split(ansi.Wrap(line, width, " -"), "\n")
	if held {
		for i, l := range lines {
			lines[i] = ReleaseURLs(l)
		}
	}
	return lines
}

// Wrap wraps text (with newlines) to width. The text may come from
// anywhere: escape sequences and control characters are stripped here.
func Wrap(text string, width int) []string {
	width = max(width, 1)
	var out []string
	for _, line := range strings.Split(safe.Text(text), "\n") {
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

// sgr matches a Select Graphic Rendition sequence: the styles of text.
var sgr = lazyregexp.New(`\x1b\[[0-9;:]*m`)

// Fit breaks a line of styled text (a rendered line) wider than width
// into rows of width cells, keeping every character: renderers wrap at
// spaces and leave a word longer than the line (a URL, a hash, a long
// line of code) whole, and a frame would cut it. Rows after the first
// start at the line's indentation (up to half the width). Each row ends
// with its styles reset and the next starts with the styles in force, so
// no colour runs past a row into what is drawn beside it.
func Fit(line string, width int) []string {
	width = max(width, 1)
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	plain := ansi.Strip(line)
	indent := min(len(plain)-len(strings.TrimLeft(plain, " ")), width/2)
	rows := strings.Split(ansi.Hardwrap(line, width, true), "\n")
	if indent > 0 && len(rows) > 1 {
		rest := strings.Split(ansi.Hardwrap(strings.Join(rows[1:], ""), width-indent, true), "\n")
		pad := strings.Repeat(" ", indent)
		for i := range rest {
			rest[i] = pad + rest[i]
		}
		rows = append(rows[:1], rest...)
	}
	var styles strings.Builder // the style sequences since the last reset
	for i, r := range rows {
		seen := sgr().FindAllString(r, -1)
		if i > 0 && styles.Len() > 0 {
			r = styles.String() + r
		}
		for _, s := range seen {
			if resets(s) {
				styles.Reset()
			}
			styles.WriteString(s)
		}
		if styles.Len() > 0 {
			r += "\x1b[m"
		}
		rows[i] = r
	}
	return rows
}

// resets reports whether an SGR sequence starts from the default style
// (no parameter, or 0, first), so what came before it no longer counts.
func resets(seq string) bool {
	p := strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b["), "m")
	first, _, _ := strings.Cut(p, ";")
	return first == "" || strings.TrimLeft(first, "0") == "" && first != ""
}
