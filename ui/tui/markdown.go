package tui

import (
	"strings"

	"github.com/charmbracelet/glamour"

	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// markdown renders finished replies with glamour. Building a TermRenderer
// costs milliseconds, so there is one per width, made on first use and
// dropped when the theme changes.
type markdown struct {
	newRenderer func(width int) (*glamour.TermRenderer, error)
	byWidth     map[int]*glamour.TermRenderer
}

func newMarkdown(factory func(width int) (*glamour.TermRenderer, error)) *markdown {
	return &markdown{newRenderer: factory, byWidth: map[int]*glamour.TermRenderer{}}
}

// render returns the lines of text rendered at width. If glamour fails the
// text is shown wrapped but unstyled: a reply is never lost to a renderer.
func (m *markdown) render(text string, width int) []string {
	width = max(width, 10)
	// Tabs become spaces before glamour measures and wraps: it keeps them
	// in code blocks, and a terminal draws a tab wider than it is counted.
	// The columns are the source's, which in a code block are the code's.
	text = expandTabs(safe.Text(strings.TrimSpace(text)))
	if text == "" {
		return nil
	}
	r, ok := m.byWidth[width]
	if !ok {
		var err error
		if r, err = m.newRenderer(width); err != nil {
			r = nil
		}
		m.byWidth[width] = r
	}
	if r == nil {
		return indent(wrapText(text, width-2))
	}
	out, err := r.Render(text)
	if err != nil {
		return indent(wrapText(text, width-2))
	}
	// glamour pads every line to the wrap width with spaces; trailing
	// blanks only cost the terminal bytes. It wraps at spaces only, so a
	// word longer than the width (a URL, a hash, a line of code) stays
	// whole on a line too long for the screen: such a line is broken at
	// the width rather than cut. The lines are copies: a slice of glamour's
	// output, padded and styled, would keep all of it alive in the cache.
	var lines []string
	for _, l := range strings.Split(strings.Trim(out, "\n"), "\n") {
		for _, part := range termtext.Fit(expandTabs(strings.TrimRight(l, " ")), width) {
			lines = append(lines, strings.Clone(part))
		}
	}
	return lines
}

func indent(lines []string) []string {
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return lines
}
