package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// The workbench's model downloads: /pull NAME, or ctrl+p to accept the
// offer made when the chosen model is not on its Ollama server. A
// download is drawn on one line above the prompt: the bubbles progress
// bar, the bytes, the speed and the time left. esc stops it (the server
// keeps what it has; pulling again resumes). Nothing downloads unasked.

// pullTarget is a model to download and where.
type pullTarget struct {
	endpoint, model string
	// switchTo makes the model the current one once it is there (the
	// person asked for it with /model, or it was configured).
	switchTo bool
}

func (p pullTarget) ref() string { return config.JoinModel(p.endpoint, p.model) }

// pullBar is the download component: the offer, or the download in
// progress. It is a plain struct the model calls.
type pullBar struct {
	offer *pullTarget

	active  *pullTarget
	seq     int
	cancel  context.CancelFunc
	d       format.Download
	bar     progress.Model
	hasBar  bool
	stopped bool // esc was pressed; the end is on its way
}

// pullProgressMsg is one progress line of download seq.
type pullProgressMsg struct {
	seq int
	p   engine.PullProgress
	at  time.Time
}

// pullDoneMsg ends download seq.
type pullDoneMsg struct {
	seq    int
	target pullTarget
	err    error
}

// height is the lines the component takes above the prompt.
func (p *pullBar) height() int {
	if p.active != nil || p.offer != nil {
		return 1
	}
	return 0
}

// view draws the component on one line of width cells.
func (p *pullBar) view(st *styles, width int) string {
	switch {
	case p.active != nil:
		return padRight(p.progressLine(st, width), width)
	case p.offer != nil:
		text := safe.Text(fmt.Sprintf(" ⇣ %s is not on the server · ctrl+p downloads it · esc dismisses", p.offer.ref()))
		return padRight(st.warning.Render(ansi.Truncate(text, width, "…")), width)
	}
	return ""
}

func (p *pullBar) progressLine(st *styles, width int) string {
	// The model's name and the server's status are text from outside.
	head := safe.Text(" ⇣ " + p.active.ref() + " ")
	status := safe.Text(p.d.Status)
	if p.d.Layer == "" && p.d.Fraction() == 0 {
		return st.accent.Render(ansi.Truncate(head+"· "+status+" · esc stops", width, "…"))
	}
	done, total := p.d.Totals()
	tail := fmt.Sprintf(" %s/%s", format.Bytes(done), format.Bytes(total))
	if p.d.Layer == "" {
		// The bytes are in; the server is checking and writing them.
		tail += " · " + status
	} else if r := p.d.Rates(); r != "" {
		tail += " · " + r
	}
	if p.stopped {
		tail += " · stopping…"
	} else {
		tail += " · esc stops"
	}
	if !p.hasBar {
		fill := "#00AFFF"
		if c, ok := st.accent.GetForeground().(lipgloss.Color); ok {
			fill = string(c)
		}
		p.bar = progress.New(progress.WithSolidFill(fill), progress.WithColorProfile(lipgloss.ColorProfile()))
		p.hasBar = true
	}
	// The bar takes what the words leave, between 10 and 40 cells.
	room := width - ansi.StringWidth(head) - ansi.StringWidth(tail)
	if room < 10 {
		return st.accent.Render(ansi.Truncate(head+fmt.Sprintf("%3.0f%%", p.d.Fraction()*100)+tail, width, "…"))
	}
	p.bar.Width = min(room, 40+5)
	return st.accent.Render(head) + p.bar.ViewAs(p.d.Fraction()) + st.muted.Render(ansi.Truncate(tail, width-ansi.StringWidth(head)-p.bar.Width, "…"))
}

// pullCommand is /pull [NAME]: download NAME, or the model offered.
func (m *model) pullCommand(arg string) tea.Cmd {
	if arg == "" {
		if m.pull.offer == nil {
			m.addNote("/pull NAME downloads a model to the server (e.g. /pull qwen3:8b); ENDPOINT/NAME for an endpoint.", true)
			return nil
		}
		return m.startPull(*m.pull.offer)
	}
	endpoint, name := m.opts.Config.SplitModel(arg)
	t := pullTarget{endpoint: endpoint, model: name}
	if o := m.pull.offer; o != nil && o.endpoint == endpoint && engine.SameModel(o.model, name) {
		t.switchTo = o.switchTo
	}
	return m.startPull(t)
}

// startPull downloads t, unless a download is running or its server
// cannot download.
func (m *model) startPull(t pullTarget) tea.Cmd {
	if a := m.pull.active; a != nil {
		m.addNote(fmt.Sprintf("%s is downloading; wait for it, or esc to stop it.", a.ref()), true)
		return nil
	}
	e, _ := m.srvs.find(t.endpoint)
	if e.Err != nil {
		m.addNote(e.Err.Error(), true)
		return nil
	}
	puller, ok := e.Engine.(engine.Puller)
	if !ok {
		m.addNote(fmt.Sprintf("The server at %s does not download models: an OpenAI-compatible server serves the models it was started with.", hostOf(e.Engine)), true)
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	p := &m.pull
	p.seq++
	p.offer, p.active, p.cancel, p.d, p.stopped = nil, &t, cancel, format.Download{}, false
	m.layout()
	seq, send := p.seq, m.send
	return func() tea.Msg {
		var last time.Time
		var status, layer string
		err := puller.Pull(ctx, t.model, func(pp engine.PullProgress) {
			// At most ten redraws a second, but every new step and every
			// finished layer.
			now := time.Now()
			if pp.Status == status && pp.Digest == layer && now.Sub(last) < 100*time.Millisecond && pp.Completed < pp.Total {
				return
			}
			last, status, layer = now, pp.Status, pp.Digest
			send(pullProgressMsg{seq: seq, p: pp, at: now})
		})
		cancel()
		return pullDoneMsg{seq: seq, target: t, err: err}
	}
}

func (m *model) applyPullProgress(msg pullProgressMsg) {
	if msg.seq != m.pull.seq || m.pull.active == nil {
		return
	}
	m.pull.d.Add(msg.p, msg.at)
}

// stopPull stops the download in progress (esc); false when none is.
func (m *model) stopPull() bool {
	if m.pull.active == nil || m.pull.cancel == nil {
		return false
	}
	m.pull.cancel()
	m.pull.stopped = true
	return true
}

// dismissOffer drops the offer to download (esc); false when none is made.
func (m *model) dismissOffer() bool {
	if m.pull.offer == nil {
		return false
	}
	m.pull.offer = nil
	m.layout()
	return true
}

// acceptOffer starts the offered download (ctrl+p).
func (m *model) acceptOffer() (tea.Cmd, bool) {
	if m.pull.offer == nil || m.pull.active != nil {
		return nil, false
	}
	return m.startPull(*m.pull.offer), true
}

// finishPull ends a download: the model is there (and becomes the current
// one when it was asked for), it stopped, or the server's error is shown
// as the server said it.
func (m *model) finishPull(msg pullDoneMsg) tea.Cmd {
	if msg.seq != m.pull.seq {
		return nil
	}
	p := &m.pull
	d := p.d
	p.active, p.cancel, p.stopped = nil, nil, false
	m.layout()
	ref := msg.target.ref()
	var se *engine.ServerError
	switch {
	case msg.err == nil:
		_, total := d.Totals()
		text := fmt.Sprintf("Downloaded %s (%s in %s).", ref, format.Bytes(total), format.Remaining(d.Elapsed(time.Now())))
		var cmds []tea.Cmd
		if msg.target.switchTo && !m.run.active {
			m.srvs.prev, m.srvs.prevEndpoint = "", ""
			m.useServer(msg.target.endpoint, msg.target.model)
			text += " It is the model now."
			cmds = append(cmds, m.checkModel(msg.target.model), m.refreshModelState())
		}
		m.missing = ""
		m.addNote(text, false)
		return tea.Batch(append(cmds, m.refreshCatalog(false))...)
	case errors.Is(msg.err, context.Canceled):
		m.addNote(fmt.Sprintf("The download of %s stopped after %s; the server keeps what it has, and /pull %s resumes it.", ref, d.Fetched(), ref), false)
	case errors.As(msg.err, &se):
		m.addNote(fmt.Sprintf("The server could not download %s: %s", ref, strings.TrimSpace(se.Message)), true)
	default:
		m.addNote(fmt.Sprintf("The download of %s failed: %v", ref, msg.err), true)
		if errors.Is(msg.err, engine.ErrUnreachable) {
			return m.serverDown(msg.err)
		}
	}
	return nil
}
