package tui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// DialogGrace is how long a new confirmation dialog ignores keys: people
// typing a message when it opens must not approve a call by accident.
const DialogGrace = 400 * time.Millisecond

// confirmRequestMsg asks the person about one call. The executor's
// goroutine waits on reply.
type confirmRequestMsg struct {
	req   tools.ConfirmRequest
	reply chan tools.Decision
	once  *sync.Once
}

// answer sends the decision once; the first answer wins.
func (m confirmRequestMsg) answer(d tools.Decision) {
	m.once.Do(func() { m.reply <- d })
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
	reply := make(chan tools.Decision, 1)
	c.send(confirmRequestMsg{req: req, reply: reply, once: &sync.Once{}})
	select {
	case d := <-reply:
		return d, nil
	case <-ctx.Done():
		go c.send(confirmGoneMsg{callID: req.Call.ID})
		return tools.Deny, ctx.Err()
	}
}

// dialog shows the pending requests one at a time.
type dialog struct {
	queue  []confirmRequestMsg
	opened time.Time
	scroll int
}

func (d *dialog) open() bool { return len(d.queue) > 0 }

func (d *dialog) push(m confirmRequestMsg, now time.Time) {
	d.queue = append(d.queue, m)
	if len(d.queue) == 1 {
		d.opened, d.scroll = now, 0
	}
}

func (d *dialog) remove(callID string, now time.Time) {
	for i, q := range d.queue {
		if q.req.Call.ID == callID {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			if i == 0 {
				d.opened, d.scroll = now, 0
			}
			return
		}
	}
}

// answer answers the front request and shows the next, returning the
// request that was answered.
func (d *dialog) answer(dec tools.Decision, now time.Time) confirmRequestMsg {
	front := d.queue[0]
	front.answer(dec)
	d.queue = d.queue[1:]
	d.opened, d.scroll = now, 0
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

// accepting reports whether keys count yet.
func (d *dialog) accepting(now time.Time) bool { return now.Sub(d.opened) >= DialogGrace }

// view draws the dialog box for the given screen size.
func (d *dialog) view(st *styles, width, height int) string {
	req := d.queue[0].req
	w := min(max(width-8, 40), 100)
	inner := w - 4
	var lines []string
	lines = append(lines, st.dialogTitle.Render("Allow "+req.Spec.Name+"?"))
	if n := len(d.queue); n > 1 {
		lines[0] += st.muted.Render("  (" + strconv.Itoa(n-1) + " more waiting)")
	}
	lines = append(lines, "")
	for _, l := range wrapText(req.Spec.Description, inner) {
		lines = append(lines, st.muted.Render(l))
	}
	lines = append(lines, "", st.text.Render("Arguments:"))
	args := wrapText(format.PrettyArgs(req.Arguments), inner)
	room := max(height-14, 3)
	d.scroll = min(max(d.scroll, 0), max(len(args)-room, 0))
	shown := args[d.scroll:min(d.scroll+room, len(args))]
	for _, l := range shown {
		lines = append(lines, st.accent.Render(l))
	}
	if len(args) > room {
		lines = append(lines, st.muted.Render("↑/↓ scroll · lines "+strconv.Itoa(d.scroll+1)+"–"+strconv.Itoa(d.scroll+len(shown))+" of "+strconv.Itoa(len(args))))
	}
	lines = append(lines, "", st.text.Render("[a] allow once   [s] allow "+req.Spec.Name+" for this session   [d/esc] deny"))
	box := lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(st.dialogBorder).Padding(0, 1).Width(w)
	return box.Render(strings.Join(lines, "\n"))
}

// syncOnce is sync.Once, named for tests that build requests by hand.
type syncOnce = sync.Once
