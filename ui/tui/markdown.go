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
	held, urls := holdMarkdownURLs(text)
	out, err := r.Render(held)
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
	if urls {
		for i, l := range lines {
			lines[i] = termtext.ReleaseURLs(l)
		}
	}
	return lines
}

// holdMarkdownURLs holds the punctuation of the URLs in a reply (see
// termtext.HoldURLs) so glamour keeps each whole and a long one is
// broken at the width, not after its host. A bare URL is written as an
// autolink, <URL>, which stays a link with its dots held (glamour finds
// bare URLs by their dotted host); in code, where <> would show, a URL
// is only held.
func holdMarkdownURLs(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	fence, any := "", false
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if marker := fenceMarker(trimmed); marker != "" && (fence == "" || strings.HasPrefix(trimmed, fence)) {
			if fence == "" {
				fence = marker
			} else {
				fence = ""
			}
			continue
		}
		// In a fenced or an indented code block (or a list's paragraph,
		// which is told apart only by what comes before it).
		code := fence != "" || strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t")
		held, ok := termtext.HoldURLs(l, func(s string, i, j int) (string, string) {
			if code || !bareURL(s, i) {
				return "", ""
			}
			return "<", ">"
		})
		lines[i], any = held, any || ok
	}
	if !any {
		return text, false
	}
	return strings.Join(lines, "\n"), true
}

// fenceMarker is the fence a line opens or closes a code block with
// (``` or ~~~, three or more), "" when it is none.
func fenceMarker(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// bareURL reports whether the URL at line[i:] stands alone in the text:
// not a link's target, not already in <>, not inside inline code, and
// with a scheme (<www.example.com> would not be a link).
func bareURL(line string, i int) bool {
	if strings.HasPrefix(strings.ToLower(line[i:]), "www.") {
		return false
	}
	if i > 0 && strings.IndexByte("<[\"'=", line[i-1]) >= 0 || strings.HasSuffix(line[:i], "](") {
		return false
	}
	return strings.Count(line[:i], "`")%2 == 0
}

func indent(lines []string) []string {
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return lines
}
