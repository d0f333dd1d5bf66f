package tui

import (
	"context"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// The current model's state on its server, for the header: loaded (in
// memory, answers at once), loading (a question is waiting for it to
// load), or cold (it loads at the next question). It is read from the
// server's list of loaded models (Ollama's /api/ps), which is cheap, and
// only when it may have changed: after each run, after /model and
// /unload, and on a slow timer while the workbench is in front (the
// terminal reports focus); never in a busy loop, so an idle workbench
// stays idle. Servers that do not list what they have loaded show no
// state.

// stateEvery is how often the state is read while the workbench is in
// front: a model unloads after minutes of disuse (keep_alive), so this
// is soon enough to see it.
const stateEvery = 30 * time.Second

type loadState int

const (
	stateUnknown loadState = iota
	stateCold
	stateLoading
	stateLoaded
)

// modelState is the header's word on the current model.
type modelState struct {
	state loadState
	info  engine.LoadedModel
	// seq numbers the reads; a read answering for an older model or
	// server is dropped.
	seq int
	// every is the timer's period (0: no timer, as in tests).
	every time.Duration
	// ticking is set while a tick is on its way. Every read (each run's
	// end makes one) re-arms the timer, and a bubbletea tick cannot be
	// stopped: its goroutine waits out the whole period. So a read while
	// a tick is pending starts none, and the workbench never waits on
	// more than one; a session of quick turns held one per turn.
	ticking bool
	// blurred is set while the terminal says another window is in front.
	blurred bool
	// gone is the model /unload freed: the server may list it for a
	// while as it winds down, which must not read as loaded.
	gone string
}

// reset forgets the state (another model, another server).
func (s *modelState) reset() {
	s.state, s.info, s.gone = stateUnknown, engine.LoadedModel{}, ""
	s.seq++
}

// modelStateMsg is a read of the server's loaded models for seq.
type modelStateMsg struct {
	seq    int
	loaded []engine.LoadedModel
	err    error
}

// modelStateTickMsg is the slow timer.
type modelStateTickMsg struct{}

// refreshModelState reads the server's loaded models, when the server
// lists them.
func (m *model) refreshModelState() tea.Cmd {
	ll, ok := m.opts.Engine.(engine.LoadLister)
	if !ok || m.modelName == "" {
		return nil
	}
	m.mstate.seq++
	seq := m.mstate.seq
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		loaded, err := ll.Loaded(ctx)
		return modelStateMsg{seq: seq, loaded: loaded, err: err}
	}
}

func (m *model) applyModelState(msg modelStateMsg) tea.Cmd {
	s := &m.mstate
	if msg.seq != s.seq {
		return nil
	}
	switch {
	case msg.err != nil:
		// The server check says what is wrong; the header just stops
		// claiming a state.
		s.state = stateUnknown
	default:
		found := false
		for _, l := range msg.loaded {
			if engine.SameModel(l.Name, m.modelName) && !(s.gone != "" && engine.SameModel(l.Name, s.gone)) {
				s.state, s.info, found = stateLoaded, l, true
			}
		}
		if !found && !(s.state == stateLoading && m.run.active) {
			s.state, s.info = stateCold, engine.LoadedModel{}
		}
		if !slices.ContainsFunc(msg.loaded, func(l engine.LoadedModel) bool { return engine.SameModel(l.Name, s.gone) }) {
			s.gone = "" // wound down: from now on the list says the truth
		}
	}
	return m.armStateTimer()
}

// armStateTimer starts the slow timer, while the workbench is in front
// and no tick is pending.
func (m *model) armStateTimer() tea.Cmd {
	s := &m.mstate
	if s.every <= 0 || s.blurred || s.ticking {
		return nil
	}
	s.ticking = true
	return tea.Tick(s.every, func(time.Time) tea.Msg { return modelStateTickMsg{} })
}

// modelStateTick reads the state, unless another window is in front: the
// timer then stops until the focus comes back.
func (m *model) modelStateTick() tea.Cmd {
	m.mstate.ticking = false
	if m.mstate.blurred {
		return nil
	}
	return m.refreshModelState()
}

// focusChanged follows the terminal's focus: the timer stops while
// another window is in front, and the state is read again on return.
func (m *model) focusChanged(focused bool) tea.Cmd {
	s := &m.mstate
	if focused == !s.blurred {
		return nil
	}
	s.blurred = !focused
	if !focused {
		return nil // the pending tick finds the workbench blurred
	}
	return m.refreshModelState()
}

// modelRunEvent follows a run: a question sent to a cold model waits for
// it to load; its first word shows it loaded.
func (m *model) modelRunEvent(e events.Event) {
	s := &m.mstate
	switch e.Type {
	case events.RunStart:
		s.gone = ""
		if s.state == stateCold {
			s.state = stateLoading
		}
	case events.Token, events.Thinking, events.TurnEnd, events.ToolCallStart:
		if s.state == stateLoading || s.state == stateCold {
			s.state = stateLoaded
		}
	}
}

// loadStateText is the header's word on the model ("" when not known).
func (m *model) loadStateText() string {
	switch m.mstate.state {
	case stateLoaded:
		return "loaded"
	case stateLoading:
		return "loading…"
	case stateCold:
		return "cold"
	}
	return ""
}

// unloadCommand is /unload [NAME]: free the model's memory now.
func (m *model) unloadCommand(arg string) tea.Cmd {
	endpoint, name := m.srvs.current, m.modelName
	if arg != "" {
		endpoint, name = m.opts.Config.SplitModel(arg)
	}
	if name == "" {
		m.addNote("No model is set: /unload NAME frees a loaded model.", true)
		return nil
	}
	if m.run.active && endpoint == m.srvs.current && engine.SameModel(name, m.modelName) {
		m.addNote("A turn is running on this model: unload it when the turn is done (esc cancels it).", true)
		return nil
	}
	e, _ := m.srvs.find(endpoint)
	u, ok := e.Engine.(engine.Unloader)
	if !ok {
		m.addNote(fmt.Sprintf("The server at %s cannot unload a model on request; stop or restart it to free the memory.", hostOf(e.Engine)), true)
		return nil
	}
	target := endpoint
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := u.Unload(ctx, name); err != nil {
			return noticeMsg{text: "Could not unload " + config.JoinModel(target, name) + ": " + explain(err), isErr: true}
		}
		return unloadedMsg{endpoint: target, model: name}
	}
}

// unloadedMsg reports a model freed.
type unloadedMsg struct{ endpoint, model string }

func (m *model) applyUnloaded(msg unloadedMsg) tea.Cmd {
	m.addNote(fmt.Sprintf("Unloaded %s: the server freed its memory; it loads again at the next question.", config.JoinModel(msg.endpoint, msg.model)), false)
	if msg.endpoint == m.srvs.current && engine.SameModel(msg.model, m.modelName) {
		m.mstate.state, m.mstate.info, m.mstate.gone = stateCold, engine.LoadedModel{}, msg.model
		return tea.Batch(m.refreshModelState(), m.refreshContext(m.pane.Showing(m.ctxTab)))
	}
	return nil
}

// loadedText describes a loaded model for /model's list: "4.1 GB VRAM,
// window 8,192, until 14:05".
func loadedText(l engine.LoadedModel, now time.Time) string {
	text := format.Bytes(l.VRAMBytes) + " VRAM"
	if l.ContextLength > 0 {
		text += ", window " + groupInt(l.ContextLength)
	}
	if !l.ExpiresAt.IsZero() && l.ExpiresAt.Sub(now) < 50*365*24*time.Hour {
		text += ", until " + l.ExpiresAt.Local().Format("15:04")
	}
	return text
}

// headerState is the header's " · loaded" after the model ("" when the
// state is not known).
func (m *model) headerState() string {
	s := m.loadStateText()
	if s == "" {
		return ""
	}
	return m.st.muted.Render(" · ") + s
}
