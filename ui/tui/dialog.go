package tui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// confirmRequestMsg asks the person about one call. The executor's
// goroutine waits on reply.
type confirmRequestMsg struct {
	req   tools.ConfirmRequest
	reply chan tools.Decision
	// full, when set, receives the whole answer (edited arguments, a
	// reason) instead of reply.
	full chan tools.Answer
	once *sync.Once
}

// answer sends the decision once; the first answer wins.
func (m confirmRequestMsg) answer(d tools.Decision) { m.answerFull(tools.Answer{Decision: d}) }

// answerFull sends the whole answer once; the first answer wins.
func (m confirmRequestMsg) answerFull(a tools.Answer) {
	m.once.Do(func() {
		if m.full != nil {
			m.full <- a
			return
		}
		m.reply <- a.Decision
	})
}

// confirmGoneMsg says a request was withdrawn (its run was cancelled).
type confirmGoneMsg struct{ callID string }

// dialogConfirmer is the TUI's tools.Confirmer: it posts the request to the
// program and blocks the tool's goroutine until the person answers or the
// run is cancelled.
type dialogConfirmer struct {
	send func(any)
}

func (c *dialogConfirmer) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	a, err := c.Answer(ctx, req)
	return a.Decision, err
}

// Answer asks and returns the person's whole answer: the decision, the
// arguments they edited, the reason they gave for a denial.
func (c *dialogConfirmer) Answer(ctx context.Context, req tools.ConfirmRequest) (tools.Answer, error) {
	full := make(chan tools.Answer, 1)
	c.send(confirmRequestMsg{req: req, full: full, once: &sync.Once{}})
	select {
	case a := <-full:
		return a, nil
	case <-ctx.Done():
		go c.send(confirmGoneMsg{callID: req.Call.ID})
		return tools.Answer{}, ctx.Err()
	}
}

// dialog shows the pending requests one at a time.
type dialog struct {
	queue  []confirmRequestMsg
	opened time.Time
	scroll int
	// ed is what the person is doing with the front request beyond
	// answering it: typing a reason, editing the arguments, reviewing an
	// edit (see dialog_edit.go).
	ed dialogEdit
	// typed: keys went to the prompt while the front request was shown
	// (the person was typing); then only tab, a deliberate move, lets
	// keys answer it. focused: tab was pressed.
	typed, focused bool
	// holding says what a held answer key will do (guard.go).
	holding string
}

func (d *dialog) open() bool { return len(d.queue) > 0 }

func (d *dialog) push(m confirmRequestMsg, now time.Time) {
	d.queue = append(d.queue, m)
	if len(d.queue) == 1 {
		d.front(now)
	}
}

// front starts showing the request now at the front of the queue.
func (d *dialog) front(now time.Time) {
	d.opened, d.scroll, d.ed, d.typed, d.focused, d.holding = now, 0, dialogEdit{}, false, false, ""
}

func (d *dialog) remove(callID string, now time.Time) {
	for i, q := range d.queue {
		if q.req.Call.ID == callID {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			if i == 0 {
				d.front(now)
			}
			return
		}
	}
}

// answer answers the front request and shows the next, returning the
// request that was answered.
func (d *dialog) answer(dec tools.Decision, now time.Time) confirmRequestMsg {
	return d.answerFull(tools.Answer{Decision: dec}, now)
}

// answerFull answers the front request with a whole answer.
func (d *dialog) answerFull(a tools.Answer, now time.Time) confirmRequestMsg {
	front := d.queue[0]
	front.answerFull(a)
	d.queue = d.queue[1:]
	d.front(now)
	return front
}

// denyAll answers everything with deny (the run was cancelled or the app
// is quitting).
func (d *dialog) denyAll() {
	for _, q := range d.queue {
		q.answer(tools.Deny)
	}
	d.queue = nil
}

// armed reports whether a key pressed now, gap after the one before,
// may answer the dialog (see guard.go).
func (d *dialog) armed(now time.Time, gap time.Duration) bool {
	switch {
	case now.Sub(d.opened) < DialogGrace:
		return false
	case d.focused:
		return true
	}
	return !d.typed && gap >= DialogQuiet
}

// inGrace reports whether the dialog still ignores every key (the frame
// shows it, so a tick keeps running).
func (d *dialog) inGrace(now time.Time) bool { return d.open() && now.Sub(d.opened) < DialogGrace }

// scope is what "for this session" would grant now: the request's, or
// that of the edit under review.
func (d *dialog) scope() tools.Scope {
	if d.ed.edited != nil && (d.ed.mode == modeReview || d.ed.mode == modeAlways && d.ed.back == modeReview) {
		return d.ed.check.Scope
	}
	return d.queue[0].req.Scope
}

// descRows caps the tool's description in the dialog: the arguments are
// what the person must read.
const descRows = 3

// dialogLayout is the dialog's content for one screen size.
type dialogLayout struct {
	width      int      // the box's width inside its border
	title      string   // styled
	desc       []string // the description lines shown
	args       []string // every argument line
	argsLabel  string   // "Arguments:", or what the lines are in a mode
	rawArgs    bool     // the lines are styled already (the inline editor)
	errLines   int      // the first hint lines say what was wrong
	room       int      // argument lines shown at a time
	hint       []string
	blanks     int // empty separator lines kept (0–3)
	scrollable bool
}

// layout fits the front request into a box at most height rows tall (its
// border included): the title, the description (at most descRows lines),
// the arguments (scrollable when they do not fit) and the key hint. The
// hint and the border are always shown; blank separators and then
// description lines go first when rows are short.
func (d *dialog) layout(st *styles, width, height int) dialogLayout {
	req := d.queue[0].req
	w := min(max(width-8, 40), 100, width-2)
	inner := max(w-4, 10)
	name := safe.Text(req.Name())
	called := name
	if req.Target != "" && req.Target != req.Call.Name {
		called += " (via " + safe.Text(req.Call.Name) + ")"
	}
	title := st.dialogTitle.Render(d.ed.title(called))
	if req.Of > 1 {
		title += st.muted.Render("  (" + strconv.Itoa(req.Position) + " of " + strconv.Itoa(req.Of) + ")")
	}
	if n := len(d.queue); n > 1 {
		title += st.muted.Render("  (" + strconv.Itoa(n-1) + " more waiting)")
	}
	l := dialogLayout{width: w, title: ansi.Truncate(title, inner, "…"), argsLabel: "Arguments:"}
	reason := req.Reason
	if d.ed.edited != nil && (d.ed.mode == modeReview || d.ed.back == modeReview) {
		reason = d.ed.check.Reason // the edited call's, not the model's
	}
	l.desc = wrapText(strings.TrimSpace(reason+"\n"+req.Spec.Description), inner) // why this call asks, first
	if len(l.desc) == 1 && l.desc[0] == "" {
		l.desc = nil
	}
	l.args = argLines(req.Arguments, inner)
	var errs []string
	if d.ed.err != "" {
		errs = wrapText(d.ed.err, inner)
	}
	if d.ed.pasteErr != "" {
		errs = append(errs, wrapText(d.ed.pasteErr, inner)...)
	}
	l.hint = append(errs, wrapText(d.hint(req, name), inner)...)
	l.errLines = len(errs)
	d.ed.shape(&l, inner)
	d.shapePreview(st, &l, inner)

	avail := height - 2                                              // the border
	fixed := func() int { return 1 + len(l.desc) + 1 + len(l.hint) } // title, "Arguments:"
	capDesc := func(n int) {
		if len(l.desc) > n {
			l.desc = append(l.desc[:n-1:n-1], ansi.Truncate(l.desc[n-1]+" …", inner, "…"))
		}
	}
	capDesc(descRows)
	room := avail - fixed()
	if room < len(l.args) && len(l.desc) > 1 {
		capDesc(max(len(l.desc)-(len(l.args)-room), 1))
		room = avail - fixed()
	}
	l.blanks = min(max(room-len(l.args), 0), 3)
	l.room = room - l.blanks
	if l.room < len(l.args) {
		l.scrollable = true
		l.room-- // the scroll indicator
	}
	l.room = max(l.room, 1)
	return l
}

// maxScroll is the last scroll position of the arguments.
func (l dialogLayout) maxScroll() int { return max(len(l.args)-l.room, 0) }

// clampScroll keeps the scroll position in range for a screen size. It
// runs in Update (after a key, a resize, a new request): View only reads.
func (d *dialog) clampScroll(st *styles, width, height int) {
	if !d.open() {
		return
	}
	d.ed.fit(width, height)
	d.scroll = min(max(d.scroll, 0), d.layout(st, width, height).maxScroll())
}

// view draws the dialog box, at most height rows tall.
func (d *dialog) view(st *styles, width, height int) string {
	l := d.layout(st, width, height)
	scroll := min(max(d.scroll, 0), l.maxScroll())
	blank := func(n int) []string {
		if l.blanks >= n {
			return []string{""}
		}
		return nil
	}
	// The blank before the hint is the last to go: it keeps the keys
	// apart from the arguments.
	lines := []string{l.title}
	lines = append(lines, blank(2)...)
	for _, s := range l.desc {
		lines = append(lines, st.muted.Render(s))
	}
	lines = append(lines, blank(3)...)
	lines = append(lines, st.text.Render(l.argsLabel))
	shown := l.args[scroll:min(scroll+l.room, len(l.args))]
	for _, s := range shown {
		if l.rawArgs {
			lines = append(lines, s)
			continue
		}
		lines = append(lines, st.accent.Render(s))
	}
	if l.scrollable {
		lines = append(lines, st.muted.Render(ansi.Truncate("↑/↓ scroll · lines "+strconv.Itoa(scroll+1)+"–"+
			strconv.Itoa(scroll+len(shown))+" of "+strconv.Itoa(len(l.args)), l.width-4, "…")))
	}
	lines = append(lines, blank(1)...)
	for i, s := range l.hint {
		style := st.text
		if i < l.errLines {
			style = st.errorText
		}
		lines = append(lines, style.Render(s))
	}
	box := lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(st.dialogBorder).Padding(0, 1).Width(l.width)
	return box.Render(strings.Join(lines, "\n"))
}

// syncOnce is sync.Once, named for tests that build requests by hand.
type syncOnce = sync.Once
