package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
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
	// host is the server checked: a check of a server /model has left
	// since says nothing about the current one.
	host string
}

// checkServer asks the server for its version, its models and the current
// model's capabilities, after delay. When the server is down the TUI stays
// usable (sessions, tools, /commands) and checks again with back-off.
func (m *model) checkServer(delay time.Duration) tea.Cmd {
	eng, model, drv := m.opts.Engine, m.modelName, m.currentServer().Driver
	m.server.checking = true
	check := func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := eng.Version(ctx)
		if err != nil {
			return serverMsg{err: err, chain: true, host: eng.Host()}
		}
		msg := serverMsg{version: v, model: model, chain: true, host: eng.Host()}
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
				msg.modelErr = noModelToPick(drv, len(infos))
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

// pickModel chooses the first model with tool support, else the first
// that can chat (an embedding model cannot answer at all).
func pickModel(ctx context.Context, eng engine.InferenceEngine, infos []engine.ModelInfo) (string, bool) {
	chat := ""
	for _, i := range infos {
		caps, err := eng.Capabilities(ctx, i.Name)
		if err != nil {
			continue
		}
		if slices.Contains(caps, engine.CapTools) && !embeddingOnly(caps) {
			return i.Name, true
		}
		if chat == "" && !embeddingOnly(caps) {
			chat = i.Name
		}
	}
	return chat, chat != ""
}

// embeddingOnly reports whether caps are those of a model that embeds
// and cannot chat.
func embeddingOnly(caps []string) bool {
	return slices.Contains(caps, engine.CapEmbedding) && !slices.Contains(caps, engine.CapCompletion)
}

// noModelToPick says why no model could be chosen, and what to do.
func noModelToPick(drv engine.Driver, models int) error {
	switch {
	case !drv.CanPull:
		return fmt.Errorf("the server lists no model that can chat; start it with one (llama-server -m FILE, vllm serve MODEL, or LM Studio's loader), then pick it with /model")
	case models == 0:
		return fmt.Errorf("the server has no models. Download one with /pull qwen3 (or pick one on an endpoint with /model)")
	}
	return fmt.Errorf("none of the server's %s can chat (embedding models only). Download one with /pull qwen3", format.Count(models, "model"))
}

// cannotSend says why a question cannot go to the model now, in the
// workbench's words ("" when it can). A server that is down is the cause
// even when no model could be chosen because of it.
func (m *model) cannotSend() string {
	switch {
	case m.modelName == "" && m.server.checked && !m.server.online:
		why := strings.TrimSuffix(m.server.lastErr, ".")
		return fmt.Sprintf("The server at %s is not answering, so nothing was sent: %s. jarvis keeps checking; ↑ brings the question back.", m.hostText(), why)
	case m.modelName == "" && !m.server.checked:
		return "jarvis is still asking the server which model to use; send again in a moment (↑ brings the question back)."
	case m.modelName == "":
		return "No model is set, so nothing was sent. Pick one with /model NAME (tab completes the server's models), or start jarvis with --model."
	case m.missing != "" && m.missing == m.modelRef():
		if m.pull.offer != nil {
			return fmt.Sprintf("%s is not on the server, so nothing was sent. ctrl+p downloads it; /model picks another.", m.missing)
		}
		return fmt.Sprintf("%s cannot answer here, so nothing was sent. Pick another with /model (tab lists them).", m.missing)
	}
	return ""
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
			return serverMsg{err: verr, host: eng.Host()}
		}
		return serverMsg{version: v, model: name, caps: caps, modelErr: err, models: nil, host: eng.Host()}
	}
}

func (m *model) handleServer(msg serverMsg) tea.Cmd {
	s := &m.server
	if msg.chain {
		s.checking = false
	}
	if msg.host != "" && msg.host != m.opts.Engine.Host() {
		// /model moved to another server meanwhile; its own check runs.
		return nil
	}
	wasOnline, first := s.online, !s.checked
	s.checked = true
	if msg.err != nil {
		text := explain(msg.err)
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
		m.addNote("Connected to "+m.serverName(msg.version)+".", false)
	}
	if msg.picked && m.modelName == "" {
		m.modelName = msg.model
		m.view.SetModel(msg.model)
		m.addNote("No model set; using "+msg.model+" (the first with tool support). Switch with /model.", false)
	}
	if msg.chain && !msg.picked && m.modelName != "" && msg.model != m.modelName {
		// /model changed the model while this check was on its way.
		return m.checkModel(m.modelName)
	}
	if msg.model != "" && msg.model != m.modelName {
		return nil // a check of a model /model has left since
	}
	if msg.modelErr != nil {
		if !m.modelMissing(msg.modelErr) {
			m.addNote(msg.modelErr.Error(), true)
		}
		return nil
	}
	if m.refusesEmbedding(msg.caps) {
		return nil
	}
	if msg.caps != nil {
		// The model is there and can chat: /model's switch stands.
		m.srvs.prev, m.srvs.prevEndpoint = "", ""
	}
	if msg.model != "" && len(m.enabled) > 0 && m.agentName == "orchestrator" && !slices.Contains(msg.caps, engine.CapTools) && msg.caps != nil {
		m.addNote(fmt.Sprintf("%s has no native tool support; the orchestrator will use the react protocol (tools described in the prompt).", msg.model), false)
	}
	if msg.picked {
		return m.refreshModelState()
	}
	return nil
}

// serverDown marks the server offline and starts checking it again with
// back-off, unless a check is already on its way.
func (m *model) serverDown(err error) tea.Cmd {
	s := &m.server
	s.checked, s.online = true, false
	s.failures++
	s.lastErr = explain(err)
	if s.checking {
		return nil
	}
	delay := min(time.Duration(1<<min(s.failures, 5))*time.Second, 30*time.Second)
	return m.checkServer(delay)
}
