package agent

import (
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// What jarvis says when a request does not fit the window, when the
// fixed parts of every request leave compaction nothing to work with, and
// when a reply stops at a full window. Every figure counts the parts the
// Context tab shows (the system prompt, the tools, the history with its
// images, the reply's room), so the numbers add up to what is refused;
// and only fixes that can work are offered: no "raise the window" at the
// model's maximum or on a server that fixed it, no /compact when a
// summary would not make room, no react unless it describes the tools in
// fewer tokens.

// remedies collects the fixes that can work, as clauses of one sentence.
type remedies []string

func (f *remedies) add(clause string) {
	if clause != "" {
		*f = append(*f, clause)
	}
}

// sentence writes the fixes as one sentence: "A or B.", or "A; B; or
// C." when there are more (the clauses hold commas of their own).
func (f remedies) sentence() string {
	switch len(f) {
	case 0:
		return ""
	case 1:
		return capital(f[0]) + "."
	case 2:
		return capital(f[0]) + " or " + f[1] + "."
	}
	return capital(strings.Join(f[:len(f)-1], "; ")) + "; or " + f[len(f)-1] + "."
}

// capital gives s the capital a sentence starts with.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// andList joins phrases as a sentence lists them: "a", "a and b", "a, b
// and c".
func andList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// fixedParts names the parts every request carries, with their sizes.
func fixedParts(b Budget) []string {
	var parts []string
	if b.System > 0 {
		parts = append(parts, fmt.Sprintf("the system prompt (%s)", engine.GroupDigits(b.System)))
	}
	if n := len(b.ToolCosts()); n > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", countOf(n, "tool definition"), engine.GroupDigits(b.Tools)))
	}
	return parts
}

// replyPart is the reply's room, named.
func replyPart(b Budget) string {
	return fmt.Sprintf("room for the reply (%s)", engine.GroupDigits(b.Reply))
}

// lastPart is the conversation's last message or result, nil when
// there is none.
func lastPart(b Budget) *Part {
	for i := len(b.Parts) - 1; i >= 0; i-- {
		if b.Parts[i].Kind == PartMessage || b.Parts[i].Kind == PartResult {
			return &b.Parts[i]
		}
	}
	return nil
}

// overflow is the error for a request that does not fit even after
// compaction: what is too big, every part's size, and the fixes that can
// work. msgs are the request's messages.
func (r *run) overflow(b Budget, msgs []engine.Message) error {
	w := b.Window.Tokens
	need := b.Prompt + b.Reply
	fixed := b.System + b.Tools + b.Reply
	e := &engine.ContextOverflowError{Model: r.cfg.Model, Window: w, PromptTokens: need}
	window := fmt.Sprintf("%s runs with a %s-token window", r.cfg.Model, engine.GroupDigits(w))
	last := lastPart(b)
	var fix remedies
	switch {
	case fixed >= w:
		e.What, e.PromptTokens = "the system prompt and the tool definitions, with room for the reply,", fixed
		e.Detail = fmt.Sprintf("%s alone take about %s tokens, and %s: no message fits.",
			capital(andList(append(fixedParts(b), replyPart(b)))), engine.GroupDigits(fixed), window)
		r.fixedFixes(&fix, b, need)
	case last != nil && last.Kind == PartMessage && last.Name == engine.RoleUser && fixed+last.Tokens > w:
		e.What, e.PromptTokens = "your message", last.Tokens
		images := ""
		if last.ImageTokens > 0 {
			images = fmt.Sprintf(" (%s about %s of them)", map[bool]string{true: "its image", false: "its " + engine.GroupDigits(last.Images) + " images"}[last.Images == 1], engine.GroupDigits(last.ImageTokens))
		}
		parts := fixedParts(b)
		if earlier := b.History + b.Results - last.Tokens; earlier > 0 {
			parts = append(parts, fmt.Sprintf("the earlier conversation (%s)", engine.GroupDigits(earlier)))
		}
		e.Detail = fmt.Sprintf("your message is about %s tokens%s; with %s, the request needs about %s, and %s.",
			engine.GroupDigits(last.Tokens), images, andList(append(parts, replyPart(b))), engine.GroupDigits(need), window)
		if last.Tokens-last.ImageTokens > 0 || last.ImageTokens == 0 {
			fix.add("shorten the message")
		}
		if last.Images > 0 {
			fix.add(fmt.Sprintf("send fewer images (each takes about %s tokens of %s's window)", engine.GroupDigits(max(last.ImageTokens/last.Images, 1)), r.cfg.Model))
		}
		fix.add(r.growFix(b, need))
	default:
		e.What = "the conversation"
		parts := append(fixedParts(b), fmt.Sprintf("the conversation (%s)", engine.GroupDigits(b.History+b.Results)), replyPart(b))
		e.Detail = fmt.Sprintf("the request needs about %s tokens: %s; %s.", engine.GroupDigits(need), andList(parts), window)
		if compactionCanFit(b, msgs) {
			fix.add("compact the conversation ({{compact}})")
		}
		if last != nil && fixed+lastTurnTokens(b, msgs) <= w {
			fix.add("start a new one ({{new}})")
		}
		fix.add(r.growFix(b, need))
	}
	e.Fix = fix.sentence()
	if e.Fix == "" {
		e.Fix = "Nothing jarvis can set makes it fit this model: send less at a time."
	}
	return e
}

// fixedFixes adds the fixes for fixed parts that take too much: fewer
// tools, react when it describes them in fewer tokens, a larger window.
func (r *run) fixedFixes(fix *remedies, b Budget, need int) {
	if b.Tools > 0 {
		fix.add("turn some tools off ({{tools}})")
	}
	if cost := r.reactCost(b); cost > 0 && cost < b.System+b.Tools {
		fix.add(fmt.Sprintf("use {{agent react}}: it describes the tools in its prompt in about %s tokens instead of %s",
			engine.GroupDigits(cost), engine.GroupDigits(b.System+b.Tools)))
	}
	fix.add(r.growFix(b, need))
}

// reactCost is what react's system prompt would cost for the run's
// tools, when the run is orchestrator's with tools (0 otherwise).
func (r *run) reactCost(b Budget) int {
	if r.name != Orchestrator || b.Tools == 0 || r.cfg.Executor == nil {
		return 0
	}
	return scaled(estimateMessage(engine.Message{Content: ReActSystemPrompt(r.cfg.System, r.cfg.Executor)}), b.Ratio)
}

// growFix is the clause that offers a larger window of at least need
// tokens, "" when no setting can give one: the model's maximum is below
// need, or the window is already the maximum.
func (r *run) growFix(b Budget, need int) string {
	w := b.Window
	if !w.Allows(need) {
		return ""
	}
	if advice, fixed := engine.WindowAdvice(r.cfg.Engine); fixed {
		return advice
	}
	if !w.CanGrow() {
		return ""
	}
	n := (need + 1023) / 1024 * 1024
	if w.ModelMax > 0 {
		n = min(n, w.ModelMax)
	}
	allows := ""
	if w.ModelMax > 0 {
		allows = fmt.Sprintf("; %s allows up to %s", r.cfg.Model, engine.GroupDigits(w.ModelMax))
	}
	return fmt.Sprintf("raise the window to %s or more ({{window %d}}%s)", engine.GroupDigits(n), n, allows)
}

// fixedNotice says, once, that the parts every request carries pass the
// mark at which jarvis compacts, so compaction cannot make room, and
// what can.
func (r *run) fixedNotice(b Budget) string {
	fixed := b.System + b.Tools + b.Reply
	markShare := r.view.Options().CompactAt
	var fix remedies
	r.fixedFixes(&fix, b, int(float64(fixed)/markShare)+1)
	s := fmt.Sprintf("%s take about %s of the %s-token window, past the %.0f%% mark at which jarvis compacts older turns: compacting cannot bring a request under it, so jarvis compacts only when a request would not fit otherwise, and the conversation has about %s tokens left.",
		capital(andList(append(fixedParts(b), replyPart(b)))), engine.GroupDigits(fixed), engine.GroupDigits(b.Window.Tokens), markShare*100, engine.GroupDigits(max(b.Window.Tokens-fixed, 0)))
	if f := fix.sentence(); f != "" {
		s += " To make room: " + strings.ToLower(f[:1]) + f[1:]
	}
	return s
}

// lengthNotice says why a reply stopped before its end, as a Stop* value
// and in words: the window was full (StopWindowFull), or it reached
// num_predict or the server's cap (StopLength).
func (r *run) lengthNotice(b Budget, u events.Usage, msgs []engine.Message) (string, string) {
	numPredict := r.cfg.Options.NumPredict
	switch {
	case numPredict > 0 && u.OutputTokens >= numPredict:
		return StopLength, fmt.Sprintf("The reply stopped at its length limit (num_predict = %s tokens); raise num_predict to let it finish.", engine.GroupDigits(numPredict))
	case u.PromptTokens+u.OutputTokens < b.Window.Tokens*9/10:
		return StopLength, fmt.Sprintf("The reply stopped at the server's length limit after %s tokens, with room left in the window; the server or the model caps replies (num_predict in its settings).", engine.GroupDigits(u.OutputTokens))
	}
	s := fmt.Sprintf("The reply stopped: the %s-token window is full (the prompt took %s tokens and the reply %s).",
		engine.GroupDigits(b.Window.Tokens), engine.GroupDigits(u.PromptTokens), engine.GroupDigits(u.OutputTokens))
	var fix remedies
	fix.add(r.growFix(b, b.Window.Tokens+b.Reply))
	if compactionCanFit(b, msgs) {
		fix.add("/compact the conversation")
	}
	if f := fix.sentence(); f != "" {
		s += " " + f
	}
	return StopWindowFull, s
}
