package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// sessionListMsg carries the sessions for the /sessions overlay.
type sessionListMsg struct {
	list []SessionSummary
	err  error
}

// sessionLoadedMsg carries a session to open.
type sessionLoadedMsg struct {
	summary SessionSummary
	msgs    []agent.Appended
	err     error
}

// sessionsOverlay is the /sessions picker.
type sessionsOverlay struct {
	list   []SessionSummary
	cursor int
}

func (m *model) listSessions() tea.Cmd {
	store := m.opts.Sessions
	return func() tea.Msg {
		list, err := store.List(200)
		return sessionListMsg{list: list, err: err}
	}
}

func (m *model) loadSession(id string) tea.Cmd {
	store := m.opts.Sessions
	return func() tea.Msg {
		s, msgs, err := store.Load(id)
		return sessionLoadedMsg{summary: s, msgs: msgs, err: err}
	}
}

func (m *model) loadLastSession() tea.Cmd {
	store := m.opts.Sessions
	return func() tea.Msg {
		s, ok, err := store.Last()
		if err != nil {
			return sessionLoadedMsg{err: err}
		}
		if !ok {
			return noticeMsg{text: "No earlier session to continue; this is a new one."}
		}
		s, msgs, err := store.Load(s.ID)
		return sessionLoadedMsg{summary: s, msgs: msgs, err: err}
	}
}

func (m *model) showSessions(msg sessionListMsg) {
	if msg.err != nil {
		m.addNote("Cannot list sessions: "+msg.err.Error(), true)
		return
	}
	if len(msg.list) == 0 {
		m.addNote("No saved sessions yet.", false)
		return
	}
	m.sessions = sessionsOverlay{list: msg.list}
	m.overlay = overlaySessions
}

func (m *model) sessionsKey(k tea.KeyMsg) tea.Cmd {
	o := &m.sessions
	switch k.String() {
	case "up", "k":
		o.cursor = max(o.cursor-1, 0)
	case "down", "j":
		o.cursor = min(o.cursor+1, len(o.list)-1)
	case "enter":
		m.overlay = overlayNone
		if m.running {
			m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
			return nil
		}
		return m.loadSession(o.list[o.cursor].ID)
	case "esc", "q":
		m.overlay = overlayNone
	case "ctrl+c":
		return tea.Quit
	}
	return nil
}

// openSession replaces the conversation and redraws its transcript.
func (m *model) openSession(msg sessionLoadedMsg) {
	if msg.err != nil {
		m.addNote("Cannot open the session: "+msg.err.Error(), true)
		return
	}
	if m.running {
		m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
		return
	}
	m.conv = &agent.Conversation{}
	m.transcript.clear()
	m.current, m.lastReply = nil, nil
	m.sessionID, m.title = msg.summary.ID, msg.summary.Title
	m.totals, m.toolCalls = msg.summary.Usage, 0
	if msg.summary.Model != "" {
		m.modelName = msg.summary.Model
	}
	if msg.summary.Agent != "" {
		m.agentName = msg.summary.Agent
	}
	var cur *assistantItem
	for _, a := range msg.msgs {
		m.conv.Messages = append(m.conv.Messages, a.Message)
		switch {
		case a.Message.Role == engine.RoleUser && !strings.HasPrefix(a.Message.Content, "Observation: "):
			m.transcript.add(&userItem{text: a.Message.Content})
			cur = nil
		case a.Message.Role == engine.RoleAssistant:
			if cur == nil {
				cur = newAssistantItem()
				m.transcript.add(cur)
			}
			if a.Message.Thinking != "" {
				cur.appendThinking(a.Message.Thinking)
			}
			cur.appendText(a.Message.Content)
			cur.text.final = true
			if a.Usage != nil {
				cur.blocks = append(cur.blocks, &lineBlock{kind: lineFooter, text: "↳ " + usageLine(*a.Usage, 0)})
			}
			cur.text, cur.thinking, cur.group = nil, nil, nil
			for _, c := range a.Message.ToolCalls {
				var args map[string]any
				if parsed, msg := parseArgs(c.Arguments); msg == "" {
					args = parsed
				}
				cur.panel(c.Name, c.ID, args, 0).state = panelCancelled
			}
		case a.Message.Role == engine.RoleTool || a.Result != nil:
			if cur == nil {
				continue
			}
			p := cur.panel(a.Message.ToolName, a.Message.ToolCallID, nil, 0)
			if a.Result != nil {
				p.state, p.latency, p.cost = statusOf(string(a.Result.Status)), a.Result.LatencySeconds, a.Result.CostUSD
				p.result = a.Result.Content
			} else {
				p.state, p.result = panelOK, a.Message.Content
			}
			p.version++
			m.toolCalls++
		}
		if cur != nil {
			cur.done = true
			m.lastReply = cur
		}
	}
	m.transcript.bottom()
	m.addNote(fmt.Sprintf("Opened session %s (%d messages, %s).", orNone(msg.summary.Title), len(msg.msgs), format.Cost(m.totals.CostUSD+m.totals.ToolCostUSD, false)), false)
}

// parseArgs decodes stored call arguments for redrawing a panel.
func parseArgs(s string) (map[string]any, string) {
	a, msg := tools.ParseArguments(s)
	return a, msg
}

func (o *sessionsOverlay) view(st *styles, width, height int) []string {
	out := []string{st.dialogTitle.Render("Sessions") + st.muted.Render("  ↑/↓ choose · enter opens · esc closes"), ""}
	room := height - 4
	start := min(max(o.cursor-room+1, 0), max(len(o.list)-room, 0))
	for i := start; i < min(start+room, len(o.list)); i++ {
		s := o.list[i]
		line := fmt.Sprintf("%-8s %-16s %-40s %3d msgs  %s", shortID(s.ID), s.Updated.Format("Jan 02 15:04"),
			format.Cut(orNone(s.Title), 40), s.Messages, s.Model)
		if i == o.cursor {
			line = st.selection.Render(padRight(line, width-4))
		}
		out = append(out, line)
	}
	return out
}
