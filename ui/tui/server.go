package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/engine"
)

// serverState is what the TUI knows about the model server.
type serverState struct {
	checked bool
	online  bool
	version string
	models  []string
	// failures counts consecutive failed checks, for the retry back-off.
	failures int
	lastErr  string
	// checking is true while a checkServer chain is scheduled or running:
	// every failure (a check, /model, a run that could not reach the
	// server) starts one only when none is, so retries never multiply.
	checking bool
}

// serverMsg is the result of a server check.
type serverMsg struct {
	version  string
	models   []string
	caps     []string
	model    string // the model the check looked at
	picked   bool   // model was chosen because none was set
	err      error
	modelErr error
	chain    bool // from checkServer, whose chain this message ends
}

// checkServer asks the server for its version, its models and the current
// model's capabilities, after delay. When the server is down the TUI stays
// usable (sessions, tools, /commands) and checks again with back-off.
func (m *model) checkServer(delay time.Duration) tea.Cmd {
	eng, model := m.opts.Engine, m.modelName
	m.server.checking = true
	check := func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := eng.Version(ctx)
		if err != nil {
			return serverMsg{err: err, chain: true}
		}
		msg := serverMsg{version: v, model: model, chain: true}
		infos, err := eng.ListModels(ctx)
		if err != nil {
			msg.modelErr = err
			return msg
		}
		for _, i := range infos {
			msg.models = append(msg.models, i.Name)
		}
		if msg.model == "" {
			msg.model, msg.picked = pickModel(ctx, eng, infos)
			if msg.model == "" {
				msg.modelErr = fmt.Errorf("the server has no models. Download one in another terminal with 'ollama pull qwen3', then pick it with /model")
				return msg
			}
		}
		msg.caps, msg.modelErr = eng.Capabilities(ctx, msg.model)
		return msg
	}
	if delay == 0 {
		return check
	}
	return tea.Tick(delay, func(time.Time) tea.Msg { return check() })
}

// pickModel chooses the first model with tool support, else the first.
func pickModel(ctx context.Context, eng engine.InferenceEngine, infos []engine.ModelInfo) (string, bool) {
	if len(infos) == 0 {
		return "", false
	}
	for _, i := range infos {
		if caps, err := eng.Capabilities(ctx, i.Name); err == nil && slices.Contains(caps, engine.CapTools) {
			return i.Name, true
		}
	}
	return infos[0].Name, true
}

// checkModel checks one model after /model.
func (m *model) checkModel(name string) tea.Cmd {
	eng := m.opts.Engine
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		caps, err := eng.Capabilities(ctx, name)
		v, verr := eng.Version(ctx)
		if verr != nil {
			return serverMsg{err: verr}
		}
		return serverMsg{version: v, model: name, caps: caps, modelErr: err, models: nil}
	}
}

func (m *model) handleServer(msg serverMsg) tea.Cmd {
	s := &m.server
	if msg.chain {
		s.checking = false
	}
	wasOnline, first := s.online, !s.checked
	s.checked = true
	if msg.err != nil {
		text := msg.err.Error()
		if wasOnline || first || text != s.lastErr {
			m.addNote(strings.TrimSuffix(text, ".")+". jarvis keeps checking in the background; tools, sessions and /commands work meanwhile.", true)
		}
		return m.serverDown(msg.err)
	}
	s.online, s.failures, s.lastErr, s.version = true, 0, "", msg.version
	if msg.models != nil {
		s.models = msg.models
	}
	if !wasOnline && !first {
		m.addNote("Connected to Ollama "+msg.version+".", false)
	}
	if msg.picked && m.modelName == "" {
		m.modelName = msg.model
		m.addNote("No model set; using "+msg.model+" (the first with tool support). Switch with /model.", false)
	}
	if msg.chain && !msg.picked && m.modelName != "" && msg.model != m.modelName {
		// /model changed the model while this check was on its way.
		return m.checkModel(m.modelName)
	}
	if msg.modelErr != nil {
		m.addNote(msg.modelErr.Error(), true)
		return nil
	}
	if msg.model != "" && len(m.enabled) > 0 && m.agentName == "orchestrator" && !slices.Contains(msg.caps, engine.CapTools) && msg.caps != nil {
		m.addNote(fmt.Sprintf("%s has no native tool support; the orchestrator will use the react protocol (tools described in the prompt).", msg.model), false)
	}
	return nil
}

// serverDown marks the server offline and starts checking it again with
// back-off, unless a check is already on its way.
func (m *model) serverDown(err error) tea.Cmd {
	s := &m.server
	s.checked, s.online = true, false
	s.failures++
	s.lastErr = err.Error()
	if s.checking {
		return nil
	}
	delay := min(time.Duration(1<<min(s.failures, 5))*time.Second, 30*time.Second)
	return m.checkServer(delay)
}
