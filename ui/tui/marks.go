package tui

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"
)

// msgMark is what the line above a question or an answer says: that it
// is selected, with the keys that act on it, and which of its versions
// (an edited question) or attempts (an answer asked for again) is shown
// when there are several.
type msgMark struct {
	selected     bool
	index, count int // 1-based; alternatives exist when count > 1
}

func (k msgMark) empty() bool { return !k.selected && k.count < 2 }

// height is the lines the mark takes above an answer (a question's mark
// takes its blank line).
func (k msgMark) height() int {
	if k.empty() {
		return 0
	}
	return 1
}

// line draws the mark for a "question" or an "answer" ("" when there is
// nothing to say).
func (k msgMark) line(rc renderCtx, what string) string {
	if k.empty() {
		return ""
	}
	alt := "version"
	if what == "answer" {
		alt = "attempt"
	}
	var text string
	switch {
	case k.selected && what == "answer":
		text = "▶ answer · r asks again · f forks here"
	case k.selected:
		text = "▶ question · e edits · f forks here"
	}
	if k.count > 1 {
		which := fmt.Sprintf("◂ %s %d of %d ▸", alt, k.index, k.count)
		if text == "" {
			return ansi.Truncate(rc.st.muted.Render("  "+which), rc.width, "…")
		}
		text += " · [ ] " + which
	}
	text += " · alt+↑↓ moves · esc"
	return ansi.Truncate(rc.st.accent.Render(text), rc.width, "…")
}
