package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// The TUI's side of the model's view: the session's agent.ModelView (the
// window, the calibration), /ctx and /compact, and the data of the Context
// tab. Everything that may reach the server (finding the window, rendering
// the prompt, a compaction) runs in a command and reports back.

// contextMsg carries a fresh budget of the next request (and the prompt as
// the server renders it, when asked for).
type contextMsg struct {
	seq      int
	budget   agent.Budget
	err      error
	rendered string
	// renderErr is set when the server could not render; unsupported
	// when it does not offer rendering at all.
	renderErr   error
	unsupported bool
	withRender  bool
	// cold is set when a render was wanted but not asked for: the model
	// is not loaded, and rendering would load it.
	cold bool
}

// compactDoneMsg ends a /compact.
type compactDoneMsg struct {
	seq  int
	c    agent.Compaction
	msgs []engine.Message
	err  error
}

// ctxSetMsg reports the window a /ctx gave, once the server was asked
// what the model can take.
type ctxSetMsg struct {
	asked int
	// before is the window in force before /ctx (0: not known yet).
	before int
	w      agent.Window
	err    error
}

// nextRequest is what the current agent would send next: react's request
// after orchestrator fell back to it for this model.
func (m *model) nextRequest() agent.Request {
	msgs := append([]engine.Message(nil), m.conv.Messages...)
	return m.view.NextRequest(m.agentName, m.turn().Config(), msgs)
}

// refreshContext recomputes the Context tab's budget; with render it also
// asks the server for the prompt as it renders it, when that does not
// load the model (it is loaded already: see modelWarm). Only while idle:
// during a run the conversation belongs to the agent.
func (m *model) refreshContext(render bool) tea.Cmd {
	return m.contextCmd(render && m.modelWarm(), render)
}

// renderContext is r on the Context tab: render the prompt now, loading
// the model if it must.
func (m *model) renderContext() tea.Cmd {
	m.mstate.gone = ""
	return m.contextCmd(true, true)
}

// modelWarm reports whether rendering the prompt would find the model
// loaded: a server that renders through the model's runner (Ollama)
// loads a cold model to do it, which the tab must not do unasked.
func (m *model) modelWarm() bool {
	if _, ok := m.opts.Engine.(engine.LoadLister); !ok {
		return true
	}
	return m.mstate.state == stateLoaded
}

func (m *model) contextCmd(render, wanted bool) tea.Cmd {
	if m.run.active || m.view == nil || m.modelName == "" {
		return nil
	}
	m.ctxSeq++
	seq, view, in, eng := m.ctxSeq, m.view, m.nextRequest(), m.opts.Engine
	m.ctxTab.Loading = true
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		req, b, err := view.Prepare(ctx, in)
		out := contextMsg{seq: seq, budget: b, err: err, withRender: render, cold: wanted && !render}
		if err != nil || !render {
			return out
		}
		r, ok := eng.(engine.Renderer)
		if !ok {
			out.unsupported = true
			return out
		}
		if len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != engine.RoleUser {
			// A prompt ends where the model is to answer: show it as it
			// would be with a next question.
			req.Messages = append(req.Messages, engine.Message{Role: engine.RoleUser, Content: "(your next message)"})
		}
		out.rendered, out.renderErr = r.RenderPrompt(ctx, req)
		if errors.Is(out.renderErr, engine.ErrUnsupported) {
			out.unsupported, out.renderErr = true, nil
		}
		if out.renderErr == nil && !out.unsupported && len(in.Tools) > 0 && !view.ToolCostsMeasured(in.Tools) {
			// The tools' costs as this model's template renders them, once:
			// then the budget counts what the model reads, not the JSON.
			if _, err := view.MeasureToolCosts(ctx, in.Tools); err == nil {
				if _, b, err := view.Prepare(ctx, in); err == nil {
					out.budget = b
				}
			}
		}
		return out
	}
}

func (m *model) applyContext(msg contextMsg) {
	if msg.seq != m.ctxSeq {
		return
	}
	m.ctxTab.Loading = false
	m.ctxTab.Err = msg.err
	m.ctxTab.Cold = msg.cold
	if msg.err == nil {
		m.ctxTab.Budget, m.ctxTab.Have = msg.budget, true
		m.countToolTokens() // measured costs may have come with it
		if m.windowStale && msg.budget.Window.Tokens > 0 {
			m.lastWindow, m.lastPrompt, m.lastEstimated = msg.budget.Window.Tokens, msg.budget.Prompt, true
			m.windowStale = false
		}
	}
	if msg.withRender {
		m.ctxTab.Rendered, m.ctxTab.RenderErr, m.ctxTab.Unsupported, m.ctxTab.RenderedAt = msg.rendered, msg.renderErr, msg.unsupported, m.now()
		m.ctxTab.HaveRender = true
	}
}

// ctxCommand is /ctx: show the window, or set it (a number, "auto" for
// the server's). A window above what the model can take is capped, and
// the note says so: it comes back once the server was asked.
func (m *model) ctxCommand(arg string) tea.Cmd {
	if arg == "" {
		w := "not known yet (it is found at the first request)"
		if m.ctxTab.Have {
			w = fmt.Sprintf("%s tokens: %s", groupInt(m.ctxTab.Budget.Window.Tokens), say(m.ctxTab.Budget.Window.Source))
		}
		how := "Set it with /ctx N (tokens), or /ctx auto for the server's."
		if _, fixed := engine.WindowAdvice(m.opts.Engine); fixed {
			how = "The server fixed it when it loaded the model: /ctx N tells jarvis the size it runs with, /ctx auto takes what the server reports."
		}
		m.addNote("Context window: "+w+". "+how+" "+m.pane.KeyOf(m.ctxTab)+" shows what fills it.", false)
		return m.refreshContext(false)
	}
	n := 0
	if arg != "auto" {
		v, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSuffix(strings.ToLower(arg), "k"), ",", ""))
		if err != nil || v <= 0 {
			m.addNote(fmt.Sprintf("/ctx takes a number of tokens (e.g. /ctx 8192 or /ctx 8k) or auto, not %q.", arg), true)
			return nil
		}
		if strings.HasSuffix(strings.ToLower(arg), "k") {
			v *= 1024
		}
		if v < 256 || v > 1<<24 {
			m.addNote(fmt.Sprintf("/ctx %s: a window must be between 256 and %s tokens.", arg, groupInt(1<<24)), true)
			return nil
		}
		n = v
	}
	if m.run.active {
		m.addNote("A turn is running: change the window when it is done (esc cancels it).", true)
		return nil
	}
	before := 0
	if w, ok := m.view.Current(); ok {
		before = w.Tokens
	}
	m.view.SetNumCtx(n, "set with /ctx")
	m.engOpts.NumCtx, m.ctxSet = n, n
	view := m.view
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		w, err := view.Window(ctx)
		return ctxSetMsg{asked: n, before: before, w: w, err: err}
	}
}

// ctxSet says what /ctx did, with the window the model really gets.
func (m *model) ctxSetDone(msg ctxSetMsg) tea.Cmd {
	w := msg.w
	var note string
	switch {
	case msg.err != nil:
		note = fmt.Sprintf("jarvis will use the window at the next request; the server could not be asked what the model takes (%v).", msg.err)
	case w.Fixed:
		note = m.fixedWindowNote(msg.asked, w)
	case msg.asked == 0:
		note = fmt.Sprintf("The window is %s tokens again: %s.", groupInt(w.Tokens), say(w.Source))
	case w.Asked > 0:
		note = m.view.CapNotice(w)
	default:
		note = fmt.Sprintf("The window is now %s tokens.", groupInt(w.Tokens))
	}
	if msg.err == nil && !w.Fixed && msg.before > 0 && w.Tokens != msg.before {
		note += " The server reloads the model with it at the next request, which takes a moment."
	}
	m.addNote(note, false)
	if msg.err == nil && w.Tokens > 0 && m.lastWindow > 0 {
		// The last request's prompt, of the window the next one gets.
		m.lastWindow = w.Tokens
	} else {
		m.windowStale = true
	}
	return m.refreshContext(m.pane.Showing(m.ctxTab))
}

// forgetWindow is for another conversation (/new, a session opened or
// forked): the header's figure was the last one's, so it goes until the
// estimate of the next request comes back.
func (m *model) forgetWindow() tea.Cmd {
	m.lastWindow, m.windowStale = 0, true
	return m.refreshContext(m.pane.Showing(m.ctxTab))
}

// flagWindow is the window the command line set (--num-ctx), which a
// session saves as the person's; 0 when it came from elsewhere.
func flagWindow(cfg *config.Config) int {
	if cfg == nil || cfg.Source("options.num_ctx") != flagSource("num-ctx") {
		return 0
	}
	return cfg.Options.NumCtx
}

// setupMeta is what the session runs with now.
func (m *model) setupMeta() SessionMeta {
	return SessionMeta{Model: m.modelRef(), Agent: m.agentName, Tools: slices.Clone(m.enabled), NumCtx: m.ctxSet}
}

// restoreWindow makes a reopened session's window the workbench's: the
// one the person set for it, else the configuration's. It returns the
// phrase for the opening note, "" when the window stays as it is.
func (m *model) restoreWindow(n int, pinned bool) string {
	if pinned || n == m.ctxSet {
		return ""
	}
	m.ctxSet = n
	num, src := n, "the session's window (set with /ctx or --num-ctx)"
	if n == 0 && m.opts.Config != nil {
		num, src = m.opts.Config.Options.NumCtx, m.opts.Config.NumCtxSource()
	}
	m.view.SetNumCtx(num, src)
	m.engOpts.NumCtx = num
	if n == 0 {
		return "window as configured"
	}
	return "window " + groupInt(n) + " tokens"
}

// compactCommand is /compact: summarise every turn before the last one.
func (m *model) compactCommand() tea.Cmd {
	if m.run.active {
		m.addNote("A turn is running: compact when it is done (esc cancels it).", true)
		return nil
	}
	if m.modelName == "" {
		m.addNote("No model is set, and compacting needs one to write the summary.", true)
		return nil
	}
	if note := m.heldNote("compacted"); note != "" {
		m.addNote(note, true)
		return nil
	}
	m.ctxSeq++
	m.compacting = true
	m.compactItem = &compactLine{running: true}
	m.transcript.add(m.compactItem)
	m.transcript.bottom()
	seq, view, in := m.ctxSeq, m.view, m.nextRequest()
	ctx := m.ctx
	return tea.Batch(m.setStatusFor("compacting… the model is summarising the earlier turns", time.Minute), func() tea.Msg {
		c, msgs, err := view.Compact(ctx, in, true)
		return compactDoneMsg{seq: seq, c: c, msgs: msgs, err: err}
	})
}

func (m *model) finishCompact(msg compactDoneMsg) tea.Cmd {
	m.compacting = false
	m.status = ""
	line := m.compactItem
	m.compactItem = nil
	m.totals.Add(msg.c.Usage)
	defer m.transcript.invalidate(line)
	if msg.err != nil {
		// The line becomes the note that says why nothing changed.
		var discarded *agent.SummaryDiscardedError
		switch {
		case errors.As(msg.err, &discarded):
			line.fail(sentence(explain(msg.err))+". The conversation is as it was.", false)
		default:
			line.fail(sentence(explain(msg.err)), !errors.Is(msg.err, agent.ErrNothingToCompact))
		}
		return nil
	}
	if m.run.active {
		// Cannot happen (runs wait for the compaction), but a summary
		// must never replace a conversation an agent is using.
		return nil
	}
	m.conv.Messages = msg.msgs
	m.windowStale = true // the request is smaller now
	line.finish(msg.c)
	c := msg.c
	if err := m.saveMessage(agent.Appended{Message: msg.msgs[0], Usage: &c.Usage, Compaction: &c}); err != nil {
		m.addNote("The compaction could not be saved: "+explain(err), true)
	}
	return m.refreshContext(m.pane.Showing(m.ctxTab))
}

// windowText is the header's word on the window: how full the last
// request left it.
func (m *model) windowText() string {
	if m.lastWindow == 0 {
		return ""
	}
	return "ctx " + format.WindowUse(m.lastPrompt, m.lastWindow, m.lastEstimated)
}

// sentence gives an error's text the capital a note starts with (Go's
// errors start in lower case).
func sentence(s string) string {
	for i, r := range s {
		return strings.ToUpper(string(r)) + s[i+len(string(r)):]
	}
	return s
}
