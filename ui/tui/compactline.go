package tui

import (
	"fmt"
	"slices"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// compactLine is a compaction in the transcript: "compacting…" while the
// model writes the summary, then the "Compacted" line with what it
// saved, and, with the panels expanded (ctrl+e), the summary the model
// reads in place of the earlier turns. It is an item between messages
// (/compact, a reopened session) or a block of the answer whose request
// it made room for.
type compactLine struct {
	c agent.Compaction
	// running is set while the summary is being written; failed holds
	// why a /compact changed nothing, which the line then says instead.
	running bool
	failed  *noteItem
	version int
	// cache holds the collapsed [0] and expanded [1] renderings.
	cache [2]cached
}

// finish shows the compaction done.
func (l *compactLine) finish(c agent.Compaction) {
	l.c, l.running = c, false
	l.version++
}

// fail shows why a compaction did not happen.
func (l *compactLine) fail(text string, isErr bool) {
	l.running, l.failed = false, &noteItem{text: text, isErr: isErr}
	l.version++
}

func (l *compactLine) render(rc renderCtx) []string {
	if l.failed != nil {
		return l.failed.render(rc)
	}
	return l.cache[b2i(rc.expand)].get(rc.panelKey(), l.version, func() []string {
		st := rc.st.warning
		text := compactedText(l.c)
		switch {
		case l.running:
			st, text = rc.st.muted, compactingText(l.c.Replaced)
		case l.c.Summary != "" && !rc.expand:
			what := "summary"
			if l.c.LeftOut {
				what = "note the model reads instead"
			}
			text += " ctrl+e shows the " + what + "."
		}
		var out []string
		for _, s := range wrapText(text, rc.width-2) {
			out = append(out, st.Render(s))
		}
		if rc.expand && !l.running && l.c.Summary != "" {
			for _, s := range wrapText(l.c.Summary, rc.width-4) {
				out = append(out, rc.st.muted.Render("  │ ")+rc.st.text.Render(s))
			}
		}
		return out
	})
}

func (l *compactLine) height(rc renderCtx) int { return len(l.render(rc)) }
func (l *compactLine) lines(rc renderCtx, from, to int) []string {
	return sliceLines(l.render(rc), from, to)
}

// compactingText is what the transcript says while the model summarises.
func compactingText(replaced int) string {
	what := "the earlier turns"
	if replaced > 0 {
		what = format.Count(replaced, "earlier message")
	}
	return fmt.Sprintf("⇢ Compacting… the model is summarising %s to make room in the window.", what)
}

// compactedText is the transcript's line for a compaction.
func compactedText(c agent.Compaction) string {
	saved := ""
	if c.Saved() > 0 {
		saved = fmt.Sprintf(" (about %s tokens saved)", format.Tokens(c.Saved()))
	}
	if c.LeftOut {
		return fmt.Sprintf("⇢ Left out: %s no longer read by the model, without a summary, to fit the window%s; it now reads a note saying so and the last %s. The originals stay in the session and its export.",
			format.Count(c.Replaced, "earlier message"), saved, format.Count(c.Kept, "message"))
	}
	return fmt.Sprintf("⇢ Compacted: %s summarised for the model to fit the window%s; it now reads the summary and the last %s. The originals stay in the session and its export.",
		format.Count(c.Replaced, "earlier message"), saved, format.Count(c.Kept, "message"))
}

// endCompacting ends a compaction that did not happen (the summary was
// discarded, the model failed): its line goes, the notice that follows
// says why.
func (a *assistantItem) endCompacting() {
	l := a.compacting
	if l == nil {
		return
	}
	a.compacting = nil
	if i := slices.Index(a.blocks, block(l)); i >= 0 {
		a.blocks = slices.Delete(a.blocks, i, i+1)
	}
}
