package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// sessionListMsg carries the sessions for the /sessions overlay.
type sessionListMsg struct {
	list []SessionSummary
	err  error
}

// sessionLoadedMsg carries a session to open; continued is set for the
// one --continue reopens, which keeps what the command line set. lease
// is its lease, or held says another jarvis holds it (leaseErr: it could
// not be held, for another reason).
type sessionLoadedMsg struct {
	summary   SessionSummary
	tree      *sessions.Tree
	err       error
	continued bool
	lease     *sessions.Lease
	held      *sessions.HeldError
	leaseErr  error
}

// sessionsOverlay is the /sessions picker: the sessions as a tree, each
// fork under the session it came from.
type sessionsOverlay struct {
	list   []SessionSummary
	depth  []int
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
	store, mine := m.opts.Sessions, m.lease.held
	return func() tea.Msg {
		s, tree, err := store.Load(id)
		return loaded(store, mine, sessionLoadedMsg{summary: s, tree: tree, err: err})
	}
}

func (m *model) loadLastSession() tea.Cmd {
	store, mine := m.opts.Sessions, m.lease.held
	return func() tea.Msg {
		s, ok, err := store.Last()
		if err != nil {
			return sessionLoadedMsg{err: err}
		}
		if !ok {
			return noticeMsg{text: "No earlier session to continue; this is a new one."}
		}
		s, tree, err := store.Load(s.ID)
		return loaded(store, mine, sessionLoadedMsg{summary: s, tree: tree, err: err, continued: true})
	}
}

// loaded takes the lease of the session a load read (see session_lease.go).
func loaded(store SessionStore, mine *sessions.Lease, msg sessionLoadedMsg) sessionLoadedMsg {
	if msg.err == nil {
		msg.lease, msg.held, msg.leaseErr = holdSession(store, msg.summary.ID, mine)
	}
	return msg
}

func (m *model) showSessions(msg sessionListMsg) {
	if msg.err != nil {
		m.addNote("Cannot list sessions: "+explain(msg.err), true)
		return
	}
	if len(msg.list) == 0 {
		m.addNote("No saved sessions yet.", false)
		return
	}
	list, depth := sessionTree(msg.list)
	m.sessions = sessionsOverlay{list: list, depth: depth}
	m.overlays.push(sessionsPicker{m})
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
		m.overlays.pop()
		if m.run.active {
			m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
			return nil
		}
		return m.loadSession(o.list[o.cursor].ID)
	case "esc", "q":
		m.overlays.pop()
	}
	o.cursor = min(max(o.cursor, 0), len(o.list)-1)
	return nil
}

// openSession replaces the conversation and redraws its transcript.
func (m *model) openSession(msg sessionLoadedMsg) tea.Cmd {
	if msg.err != nil {
		m.addNote("Cannot open the session: "+explain(msg.err), true)
		return nil
	}
	if m.run.active {
		m.releaseUnused(msg.lease)
		m.addNote("A turn is running: cancel it (esc) before opening another session.", true)
		return nil
	}
	m.sessionID, m.title = msg.summary.ID, msg.summary.Title
	m.takeLease(msg.lease)
	m.lease.elsewhere = msg.held
	restored, check := m.restoreSetup(msg.summary, msg.continued)
	// Another conversation: "allow for this session" answers and the
	// tools' state (a REPL's variables) belong to the one left, as with /new.
	closeOld := m.resetForSession()
	m.clampPane()
	m.totals = msg.summary.Usage
	m.showTree(msg.tree)
	m.transcript.bottom()
	shown := len(sessions.ChatMessages(msg.tree.CurrentPath()))
	text := fmt.Sprintf("Opened session %s (%s, %s).", orNone(msg.summary.Title), format.Count(shown, "message"), format.Cost(m.totals.CostUSD+m.totals.ToolCostUSD, false))
	if n := len(msg.tree.Branches); n > 0 {
		text = fmt.Sprintf("Opened session %s (%s on the line shown, %d in all with %s; [ and ] flip, alt+↑ selects; %s).",
			orNone(msg.summary.Title), format.Count(shown, "message"), len(msg.tree.Messages), format.Count(n, "other attempt or edit"), format.Cost(m.totals.CostUSD+m.totals.ToolCostUSD, false))
	}
	if msg.summary.Parent != "" {
		text += fmt.Sprintf(" It is a fork of session %s.", shortID(msg.summary.Parent))
	}
	if restored != "" {
		text += " " + restored
	}
	m.addNote(text, false)
	switch {
	case msg.held != nil:
		m.addNote(m.heldOpenNote(), true)
	case msg.leaseErr != nil:
		m.addNote("Another jarvis could open this session while it is open here: "+msg.leaseErr.Error(), true)
	}
	return tea.Batch(closeOld, check, m.forgetWindow())
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
		depth := 0
		if i < len(o.depth) {
			depth = o.depth[i]
		}
		line := cols.row(o.list[i], depth)
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

// row is one session's line, exactly c.width cells; a fork is indented
// under the session it came from (depth levels).
func (c sessionCols) row(s SessionSummary, depth int) string {
	gap := strings.Repeat(" ", sessionGap)
	cells := []string{padRight(shortID(s.ID), sessionIDW)}
	if c.date > 0 {
		cells = append(cells, padRight(s.Updated.Format("Jan 02 15:04"), c.date))
	}
	title := safe.Text(format.OneLine(orNone(s.Title), 0))
	switch {
	case depth > 0:
		title = strings.Repeat("  ", depth-1) + "└ ⑂ " + title
	case s.Parent != "":
		title = "⑂ " + title // its parent is not in the list
	}
	if s.Branches > 0 {
		title += fmt.Sprintf(" (+%d)", s.Branches)
	}
	cells = append(cells, padRight(title, c.title),
		fmt.Sprintf("%*s", sessionMsgsW, format.Count(s.Messages, "msg")))
	if c.model > 0 {
		cells = append(cells, padRight(safe.Text(s.Model), c.model))
	}
	return padRight(strings.Join(cells, gap), c.width)
}

// sessionTree orders sessions as a tree: each session, newest first,
// followed by its forks (and theirs), each level newest first. A fork
// whose parent is not in the list stands on its own. depth gives each
// session's level.
func sessionTree(list []SessionSummary) ([]SessionSummary, []int) {
	present := make(map[string]bool, len(list))
	for _, s := range list {
		present[s.ID] = true
	}
	children := map[string][]SessionSummary{}
	var roots []SessionSummary
	for _, s := range list {
		if s.Parent != "" && present[s.Parent] && s.Parent != s.ID {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	out := make([]SessionSummary, 0, len(list))
	depth := make([]int, 0, len(list))
	seen := map[string]bool{}
	var walk func(s SessionSummary, d int)
	walk = func(s SessionSummary, d int) {
		if seen[s.ID] {
			return
		}
		seen[s.ID] = true
		out, depth = append(out, s), append(depth, d)
		for _, c := range children[s.ID] {
			walk(c, d+1)
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	return out, depth
}
