package tui

import (
	"time"

	"github.com/jarvis-workbench/jarvis/app/attach"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// renderCtx is what rendering depends on.
type renderCtx struct {
	width    int
	st       *styles
	md       *markdown
	expand   bool // tool panels show full arguments and results
	thinking bool // thinking is shown expanded
	now      time.Time
}

// cacheKey is what a cached rendering depends on. A struct, not a string:
// it is compared for every item on every frame. Text and markdown depend
// on the width and the theme only; tool panels on the expand toggle too
// (they keep one cache per state, so ctrl+e back and forth redraws
// nothing). Keying text by everything would make every toggle re-render
// every reply.
type cacheKey struct {
	width  int
	theme  string
	expand bool
}

// textKey keys renderings of text: messages, notes, markdown.
func (c renderCtx) textKey() cacheKey { return cacheKey{width: c.width, theme: c.st.name} }

// panelKey keys renderings of tool panels.
func (c renderCtx) panelKey() cacheKey {
	return cacheKey{width: c.width, theme: c.st.name, expand: c.expand}
}

// layoutKey is what an item's height depends on: everything a block
// reads.
type layoutKey struct {
	cacheKey
	thinking bool
}

func (c renderCtx) layoutKey() layoutKey {
	return layoutKey{cacheKey: c.panelKey(), thinking: c.thinking}
}

// item is one entry of the transcript. Items cache their rendered lines;
// anything that changes an item bumps its version.
type item interface {
	// height returns the number of lines at rc.
	height(rc renderCtx) int
	// lines returns lines [from, to) at rc.
	lines(rc renderCtx, from, to int) []string
}

// cached is the rendering cache of a finished item.
type cached struct {
	key     cacheKey
	version int
	out     []string
}

// get returns the cached lines, rendering them when the key or the version
// changed. Lines are padded to the width once, here, so a frame never
// measures a cached line again.
func (c *cached) get(k cacheKey, version int, render func() []string) []string {
	if c.out == nil || c.key != k || c.version != version {
		c.out, c.key, c.version = padLines(render(), k.width), k, version
	}
	return c.out
}

// padLines pads (or cuts) every line to exactly w cells, in place.
func padLines(lines []string, w int) []string {
	for i, l := range lines {
		lines[i] = padRight(l, w)
	}
	return lines
}

func sliceLines(all []string, from, to int) []string {
	from, to = max(from, 0), min(to, len(all))
	if from >= to {
		return nil
	}
	return all[from:to]
}

// userItem is a message the person sent, with the images attached to it.
type userItem struct {
	text   string
	images []engine.Image
	// seq is the message's number in the session's tree (0 while not
	// known); mark is what the line above it says (selection, versions).
	seq     int
	mark    msgMark
	version int
	cache   cached
}

func (u *userItem) render(rc renderCtx) []string {
	return u.cache.get(rc.textKey(), u.version, func() []string {
		bar := rc.st.user.Render("▍")
		// The blank line that separates a question from what came before
		// says when it is selected or has other versions.
		out := []string{u.mark.line(rc, "question")}
		for _, l := range wrapText(u.text, rc.width-2) {
			out = append(out, bar+" "+rc.st.text.Render(l))
		}
		for _, im := range u.images {
			for _, l := range wrapText("▣ "+attach.Describe(im), rc.width-2) {
				out = append(out, bar+" "+rc.st.muted.Render(l))
			}
		}
		return out
	})
}

func (u *userItem) height(rc renderCtx) int { return len(u.render(rc)) }
func (u *userItem) lines(rc renderCtx, from, to int) []string {
	return sliceLines(u.render(rc), from, to)
}

// noteItem is a notice or an error shown between messages.
type noteItem struct {
	text  string
	isErr bool
	cache cached
}

func (n *noteItem) render(rc renderCtx) []string {
	return n.cache.get(rc.textKey(), 0, func() []string {
		st, mark := rc.st.warning, "• "
		if n.isErr {
			st, mark = rc.st.errorText, "✗ "
		}
		var out []string
		for i, l := range wrapText(n.text, rc.width-2) {
			if i == 0 {
				out = append(out, st.Render(mark+l))
			} else {
				out = append(out, st.Render("  "+l))
			}
		}
		return out
	})
}

func (n *noteItem) height(rc renderCtx) int { return len(n.render(rc)) }
func (n *noteItem) lines(rc renderCtx, from, to int) []string {
	return sliceLines(n.render(rc), from, to)
}

// wrapText wraps text to width, stripping what is not safe to draw.
func wrapText(text string, width int) []string { return termtext.Wrap(text, width) }

// expandTabs puts tabs' stops in spaces (see termtext.ExpandTabs).
func expandTabs(s string) string { return termtext.ExpandTabs(s) }

// padRight pads or cuts s to exactly w cells.
func padRight(s string, w int) string { return termtext.PadRight(s, w) }

// statusOf maps a tool result status to a panel state.
func statusOf(s string) panelState {
	switch tools.Status(s) {
	case tools.StatusOK:
		return panelOK
	case tools.StatusDenied:
		return panelDenied
	case tools.StatusTimeout:
		return panelTimeout
	case tools.StatusCancelled:
		return panelCancelled
	}
	return panelFailed
}
