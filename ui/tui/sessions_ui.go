package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
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
	page := max(m.transcript.height-4, 1) // the rows the list shows
	switch k.String() {
	case "up", "k":
		o.cursor--
	case "down", "j":
		o.cursor++
	case "pgup":
		o.cursor -= page
	case "pgdown":
		o.cursor += page
	case "home":
		o.cursor = 0
	case "end":
		o.cursor = len(o.list) - 1
	case "enter":
		m.overlay = overlayNone
		if m.running {
			m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
			return nil
		}
		return m.loadSession(o.list[o.cursor].ID)
	case "esc", "q":
		m.overlay = overlayNone
	}
	o.cursor = min(max(o.cursor, 0), len(o.list)-1)
	return nil
}

// openSession replaces the conversation and redraws its transcript.
func (m *model) openSession(msg sessionLoadedMsg) tea.Cmd {
	if msg.err != nil {
		m.addNote("Cannot open the session: "+msg.err.Error(), true)
		return nil
	}
	if m.running {
		m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
		return nil
	}
	m.conv = &agent.Conversation{}
	m.transcript.clear()
	m.current, m.lastReply, m.question = nil, nil, nil
	m.sessionID, m.title = msg.summary.ID, msg.summary.Title
	// Another conversation: "allow for this session" answers and the
	// tools' state (a REPL's variables) belong to the one left, as with /new.
	m.approvals = tools.NewApprovals()
	closeOld, err := m.rebuildTools(m.enabled, true)
	if err != nil {
		m.addNote(err.Error(), true)
	}
	m.totals, m.toolCalls = msg.summary.Usage, 0
	if msg.summary.Model != "" {
		m.modelName = msg.summary.Model
	}
	if msg.summary.Agent != "" {
		m.agentName = msg.summary.Agent
	}
	var cur *assistantItem
	for _, a := range msg.msgs {
		if c := a.Compaction; c != nil {
			// The model saw the summary and the kept messages from here
			// on; the transcript keeps everything.
			m.conv.Compact(c.Summary, c.Kept)
			m.transcript.add(&noteItem{text: compactedText(*c)})
			cur = nil
			continue
		}
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
				cur.blocks = append(cur.blocks, &lineBlock{kind: lineFooter, text: "↳ " + format.Usage(*a.Usage, 0)})
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
				p.setResult(a.Result.Content)
			} else {
				p.state = panelOK
				p.setResult(a.Message.Content)
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
	return closeOld
}

// parseArgs decodes stored call arguments for redrawing a panel.
func parseArgs(s string) (map[string]any, string) {
	a, msg := tools.ParseArguments(s)
	return a, msg
}

// sessionsWidth is the /sessions box's width inside its border.
func sessionsWidth(screen int) int { return min(screen-4, 100) }

// view draws the list width cells wide and at most height rows tall: the
// title, a blank line, and as many sessions as fit around the cursor.
func (o *sessionsOverlay) view(st *styles, width, height int) []string {
	head := st.dialogTitle.Render("Sessions") + st.muted.Render("  ↑/↓ choose · enter opens · esc closes")
	out := []string{ansi.Truncate(head, width, "…"), ""}
	room := max(height-len(out), 1)
	start := min(max(o.cursor-room+1, 0), max(len(o.list)-room, 0))
	cols := sessionColumns(o.list, width)
	for i := start; i < min(start+room, len(o.list)); i++ {
		line := cols.row(o.list[i])
		if i == o.cursor {
			line = st.selection.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// sessionCols are the widths of the list's columns for a box width; a
// zero width hides the column. The title takes what the others leave.
type sessionCols struct {
	width, date, title, model int
}

const (
	sessionIDW   = 8
	sessionDateW = 12 // Jan 02 15:04
	sessionMsgsW = 9  // 1234 msgs
	sessionGap   = 2
)

func sessionColumns(list []SessionSummary, width int) sessionCols {
	c := sessionCols{width: width}
	left := width - sessionIDW - sessionGap - sessionMsgsW - sessionGap
	if left-sessionDateW-sessionGap >= 24 {
		c.date = sessionDateW
		left -= sessionDateW + sessionGap
	}
	longest := 0
	for _, s := range list {
		longest = max(longest, ansi.StringWidth(safe.Text(s.Model)))
	}
	if m := min(longest, left/3); m >= 6 {
		c.model = m
		left -= m + sessionGap
	}
	c.title = max(left, 1)
	return c
}

// row is one session's line, exactly c.width cells.
func (c sessionCols) row(s SessionSummary) string {
	gap := strings.Repeat(" ", sessionGap)
	cells := []string{padRight(shortID(s.ID), sessionIDW)}
	if c.date > 0 {
		cells = append(cells, padRight(s.Updated.Format("Jan 02 15:04"), c.date))
	}
	cells = append(cells, padRight(safe.Text(format.OneLine(orNone(s.Title), 0)), c.title),
		fmt.Sprintf("%*s", sessionMsgsW, fmt.Sprintf("%d msgs", s.Messages)))
	if c.model > 0 {
		cells = append(cells, padRight(safe.Text(s.Model), c.model))
	}
	return padRight(strings.Join(cells, gap), c.width)
}
