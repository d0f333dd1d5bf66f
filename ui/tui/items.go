package tui

import (
	"sync"
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

// cached is the rendering cache of a finished item. The caches of all
// items together hold at most renderCacheBytes: the least recently drawn
// are dropped beyond it (see renderCache), so a long session keeps the
// lines of its last screens, not of everything it showed. An item's
// height is kept by the transcript, so a dropped rendering is made again
// only when the item is drawn again.
type cached struct {
	key     cacheKey
	version int
	out     []string
	// bytes is what out holds; prev and next link the caches holding
	// lines, the most recently used first.
	bytes      int
	prev, next *cached
	// frame is the frame that last drew it (renderCache.frame).
	frame int
}

// get returns the cached lines, rendering them when the key or the version
// changed. Lines are padded to the width once, here, so a frame never
// measures a cached line again.
func (c *cached) get(k cacheKey, version int, render func() []string) []string {
	if out := renders.hit(c, k, version); out != nil {
		return out
	}
	out := padLines(render(), k.width)
	renders.set(c, k, version, out)
	return out
}

// renderCacheBytes bounds what the rendering caches hold together, beyond
// what the frame being drawn needs: a few screens of lines (a screen of 200 by 60 cells, styled, takes some 30
// KiB). A variable so that tests can make it small.
var renderCacheBytes = 256 << 10

// renderCache is the list of the caches holding lines, the most recently
// used first, and their size. It is shared by the process's transcripts
// (one, but for tests), hence its lock.
var renders renderCache

type renderCache struct {
	mu         sync.Mutex
	head, tail *cached
	bytes      int
	// frame counts the frames drawn. What the frame being drawn uses is
	// never dropped, however big: one reply longer than the bound would
	// otherwise push out the items drawn beside it, and they it, every
	// frame, each rendered again.
	frame int
}

// nextFrame starts a frame.
func (r *renderCache) nextFrame() {
	r.mu.Lock()
	r.frame++
	r.mu.Unlock()
}

// hit returns c's lines if they are those of k and version, making them
// the most recently used. A cache's fields are read and written under the
// lock: dropping lines from one changes another.
func (r *renderCache) hit(c *cached, k cacheKey, version int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.out == nil || c.key != k || c.version != version {
		return nil
	}
	if r.head != c {
		r.unlink(c)
		r.pushFront(c)
	}
	c.frame = r.frame
	return c.out
}

// set gives c the lines out, dropping the least recently used lines of
// other caches beyond the bound.
func (r *renderCache) set(c *cached, k cacheKey, version int, out []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unlink(c)
	c.out, c.bytes, c.key, c.version, c.frame = out, linesBytes(out), k, version, r.frame
	r.pushFront(c)
	for r.bytes > renderCacheBytes && r.tail != nil && r.tail.frame != r.frame {
		old := r.tail
		r.unlink(old)
		old.out, old.bytes = nil, 0
	}
}

func (r *renderCache) pushFront(c *cached) {
	c.prev, c.next = nil, r.head
	if r.head != nil {
		r.head.prev = c
	}
	r.head = c
	if r.tail == nil {
		r.tail = c
	}
	r.bytes += c.bytes
}

// unlink takes c out of the list, if it is in it, and its bytes out of
// the total.
func (r *renderCache) unlink(c *cached) {
	if c.prev == nil && r.head != c {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		r.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		r.tail = c.prev
	}
	c.prev, c.next = nil, nil
	r.bytes -= c.bytes
}

// linesBytes is about what lines take in memory: their bytes and their
// string headers.
func linesBytes(lines []string) int {
	n := 24 + 16*len(lines)
	for _, l := range lines {
		n += len(l)
	}
	return n
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
