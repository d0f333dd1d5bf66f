package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// block is one part of an assistant turn.
type block interface {
	height(rc renderCtx) int
	lines(rc renderCtx, from, to int) []string
}

// assistantItem is everything a run produced, in order: thinking, text,
// tool panels, per-turn footers, notices.
type assistantItem struct {
	// after is the sequence number of the message the answer follows
	// (its question) in the session's tree, 0 while not known; mark says
	// whether it is selected and which of its attempts it is.
	after  int
	mark   msgMark
	blocks []block
	// current blocks receiving deltas.
	text     *textBlock
	thinking *thinkingBlock
	group    *groupBlock
	panels   map[string]*toolPanel
	done     bool
	// total is the run's total line, kept last (see add).
	total *lineBlock
	// sending is what the model's turn in progress is sending.
	sending sendKind
	// compacting is the compaction being made for the next turn.
	compacting *compactLine
	// offTold are the tools the model called that are off, which a note
	// has said how to turn on.
	offTold map[string]bool
}

// sendKind is what a turn is sending: nothing yet (the server reads
// the prompt), thinking, or the answer's text.
type sendKind int

const (
	sendingNothing sendKind = iota
	sendingThinking
	sendingText
)

// activity says what the run is doing while no tool runs, for the status
// bar: "thinking" only while thinking arrives.
func (a *assistantItem) activity() string {
	if a.compacting != nil {
		return "compacting…"
	}
	switch a.sending {
	case sendingThinking:
		return "thinking"
	case sendingText:
		return "writing"
	}
	return "waiting for the model"
}

func newAssistantItem() *assistantItem {
	return &assistantItem{panels: map[string]*toolPanel{}}
}

func (a *assistantItem) height(rc renderCtx) int {
	h := a.mark.height()
	for _, b := range a.blocks {
		h += b.height(rc)
	}
	return h
}

// lines draws the mark's line (when there is one), then the answer.
func (a *assistantItem) lines(rc renderCtx, from, to int) []string {
	var out []string
	off := 0
	if a.mark.height() > 0 {
		if from <= 0 && to > 0 {
			out = append(out, padRight(a.mark.line(rc, "answer"), rc.width))
		}
		off = 1
	}
	for _, b := range a.blocks {
		if off >= to {
			break
		}
		h := b.height(rc)
		if off+h > from {
			out = append(out, b.lines(rc, from-off, to-off)...)
		}
		off += h
	}
	return out
}

func (a *assistantItem) appendText(s string) {
	if s != "" {
		a.sending = sendingText
	}
	if a.text == nil {
		a.text = &textBlock{}
		a.add(a.text)
	}
	a.text.stream.Append(s)
}

func (a *assistantItem) appendThinking(s string) {
	if s != "" {
		a.sending = sendingThinking
	}
	if a.thinking == nil {
		a.thinking = &thinkingBlock{}
		a.add(a.thinking)
	}
	a.thinking.stream.Append(s)
}

// endTurn closes the turn's text with the authoritative content and adds
// its footer.
func (a *assistantItem) endTurn(t *events.TurnPayload) {
	if t.Content != "" || a.text != nil {
		if a.text == nil {
			a.appendText("")
		}
		a.text.stream.SetFinal(t.Content)
		a.text.final = true
	}
	if a.thinking != nil {
		a.thinking.stream.SetFinal(t.Thinking)
		a.thinking.final = true
	}
	a.add(&lineBlock{kind: lineFooter, text: footerText(t.Usage, t.Context)})
	a.text, a.thinking, a.group = nil, nil, nil
	a.sending = sendingNothing
}

// panel returns the panel of a call, creating it (in the turn's group) when
// it is new. index is the call's place among its turn's calls: parallel
// calls start in any order, and their panels stand in the model's order.
func (a *assistantItem) panel(tool, callID string, index int, args map[string]any, estimate float64) *toolPanel {
	if p, ok := a.panels[callID]; ok && callID != "" {
		return p
	}
	if a.group == nil {
		a.group = &groupBlock{}
		a.add(a.group)
		a.text = nil
	}
	// The name is the model's: a call to an unknown tool shows it as sent.
	p := &toolPanel{tool: safe.Text(tool), callID: callID, index: index, args: args, estimate: estimate}
	at := len(a.group.panels)
	for at > 0 && a.group.panels[at-1].index > index {
		at--
	}
	a.group.panels = slices.Insert(a.group.panels, at, p)
	if callID != "" {
		a.panels[callID] = p
	}
	return p
}

// note adds a notice or an error below what the run has shown. The turn's
// text block stays open: a notice inside a turn (the reply cut at its
// length limit or by a full window, which the agent says before the
// turn's end) must not make turn_end start another block, which would
// draw the reply twice, above and below the notice.
func (a *assistantItem) note(text string, isErr bool) {
	kind := lineNotice
	if isErr {
		kind = lineError
	}
	a.add(&lineBlock{kind: kind, text: text})
}

// finish marks the run over: open text is final, panels still running are
// shown as cancelled (their end events never came), and a total line is
// added when the run took several turns.
func (a *assistantItem) finish(u events.Usage, turns int) {
	if a.done {
		return
	}
	a.done = true
	for _, b := range a.blocks {
		switch b := b.(type) {
		case *textBlock:
			if !b.final {
				b.stream.SetFinal(strings.Clone(b.stream.String()))
			}
			b.final = true
		case *thinkingBlock:
			if !b.final {
				b.stream.SetFinal(strings.Clone(b.stream.String()))
			}
			b.final = true
		}
	}
	for _, p := range a.panels {
		if p.active() {
			p.state = panelCancelled
			p.version++
		}
	}
	if turns > 1 {
		a.total = &lineBlock{kind: lineTotal, text: "Σ " + format.Count(turns, "turn") + " · " + format.Usage(u, u.ToolCostUSD)}
		a.blocks = append(a.blocks, a.total)
	}
}

// footerText is a turn's footer: its usage, and how full its request left
// the window when that is known.
func footerText(u events.Usage, c *events.ContextPayload) string {
	footer := "↳ " + format.Usage(u, 0)
	if c != nil && c.Window > 0 {
		footer += " · ctx " + format.WindowUse(c.PromptTokens, c.Window, c.Estimated)
	}
	return footer
}

// add appends a block; the run's total stays last. A run's end can come
// before the last of its events (the bridge batches them), and what they
// add belongs above the total.
func (a *assistantItem) add(b block) {
	if a.total == nil {
		a.blocks = append(a.blocks, b)
		return
	}
	a.blocks = slices.Insert(a.blocks, len(a.blocks)-1, b)
}

// plainText is the answer's text (for /copy): the last text block.
func (a *assistantItem) plainText() string {
	for i := len(a.blocks) - 1; i >= 0; i-- {
		if t, ok := a.blocks[i].(*textBlock); ok && strings.TrimSpace(t.stream.String()) != "" {
			return t.stream.String()
		}
	}
	return ""
}

// textBlock is reply text: plain and incremental while it streams, markdown
// once final.
type textBlock struct {
	stream streamText
	final  bool
	cache  cached
}

func (t *textBlock) rendered(rc renderCtx) []string {
	// The stream's version: a text set again after it was final (a
	// turn_end that arrives after the run's end) must be rendered again.
	return t.cache.get(rc.textKey(), t.stream.version, func() []string { return rc.md.render(t.stream.String(), rc.width) })
}

func (t *textBlock) height(rc renderCtx) int {
	if t.final {
		return len(t.rendered(rc))
	}
	return t.stream.Count(rc.width)
}

func (t *textBlock) lines(rc renderCtx, from, to int) []string {
	if t.final {
		return sliceLines(t.rendered(rc), from, to)
	}
	out := t.stream.Slice(rc.width, from, to)
	for i, l := range out {
		out[i] = padRight(rc.st.assistant.Render(l), rc.width)
	}
	return out
}

// thinkingBlock is the model's reasoning: dimmed, collapsed to one line
// unless thinking is expanded.
type thinkingBlock struct {
	stream streamText
	final  bool
}

func (t *thinkingBlock) height(rc renderCtx) int {
	if !rc.thinking {
		return 1
	}
	return 1 + t.stream.Count(rc.width-4)
}

func (t *thinkingBlock) lines(rc renderCtx, from, to int) []string {
	words := len(strings.Fields(t.stream.String()))
	label := "thinking…"
	if t.final {
		label = "thought"
	}
	arrow := "▸"
	if rc.thinking {
		arrow = "▾"
	}
	head := rc.st.thinking.Render(fmt.Sprintf("%s %s · %s (ctrl+r %s)", arrow, label, format.Count(words, "word"), map[bool]string{true: "hides", false: "shows"}[rc.thinking]))
	all := []string{head}
	if rc.thinking {
		for _, l := range t.stream.Slice(rc.width-4, max(from-1, 0), to-1) {
			all = append(all, "  │ "+rc.st.thinking.Render(l))
		}
		if from > 0 {
			all = all[1:]
		}
		return padLines(all, rc.width)
	}
	return padLines(sliceLines(all, from, to), rc.width)
}

// groupBlock is a turn's tool panels.
type groupBlock struct {
	panels []*toolPanel
	// cache holds the collapsed [0] and expanded [1] renderings.
	cache [2]cached
}

// render draws the panels; once none is running the result is cached
// (keyed by the sum of the panels' versions, which only grow).
func (g *groupBlock) render(rc renderCtx) []string {
	version := 0
	for _, p := range g.panels {
		if p.active() {
			return padLines(renderGroup(rc, g.panels), rc.width)
		}
		version += p.version
	}
	return g.cache[b2i(rc.expand)].get(rc.panelKey(), version, func() []string { return renderGroup(rc, g.panels) })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
func (g *groupBlock) height(rc renderCtx) int { return len(g.render(rc)) }
func (g *groupBlock) lines(rc renderCtx, from, to int) []string {
	return sliceLines(g.render(rc), from, to)
}

type lineKind int

const (
	lineFooter lineKind = iota
	lineTotal
	lineNotice
	lineError
)

// lineBlock is a footer, a total, a notice or an error inside a turn.
type lineBlock struct {
	kind  lineKind
	text  string
	cache cached
}

func (l *lineBlock) render(rc renderCtx) []string {
	return l.cache.get(rc.textKey(), 0, func() []string {
		st := rc.st.muted
		prefix := "  "
		switch l.kind {
		case lineNotice:
			st, prefix = rc.st.warning, "  • "
		case lineError:
			st, prefix = rc.st.errorText, "  ✗ "
		}
		var out []string
		for i, line := range wrapText(l.text, rc.width-len([]rune(prefix))) {
			if i > 0 {
				prefix = strings.Repeat(" ", len([]rune(prefix)))
			}
			out = append(out, st.Render(prefix+line))
		}
		return out
	})
}

func (l *lineBlock) height(rc renderCtx) int { return len(l.render(rc)) }
func (l *lineBlock) lines(rc renderCtx, from, to int) []string {
	return sliceLines(l.render(rc), from, to)
}
