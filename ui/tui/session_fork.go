package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// lastSeqOf is the last message of the line a shown question or answer
// covers: the question itself, or the answer's last message.
func (m *model) lastSeqOf(it item) int {
	path := m.convo.tree.CurrentPath()
	switch it := it.(type) {
	case *userItem:
		return it.seq
	case *assistantItem:
		last := 0
		for i, msg := range path {
			if msg.Seq <= it.after {
				continue
			}
			if history.IsQuestion(msg) && i > 0 {
				break
			}
			last = msg.Seq
		}
		return last
	}
	if len(path) == 0 {
		return 0
	}
	return path[len(path)-1].Seq
}

// fork starts a new session with the conversation so far, or up to the
// selected question or answer. The new session records where it came
// from; the old one stays as it is.
func (m *model) fork() tea.Cmd {
	if why := m.busyReason("fork"); why != "" {
		m.addNote(why, true)
		return nil
	}
	upTo := m.lastSeqOf(m.convo.selected)
	if upTo == 0 {
		m.addNote("Nothing to fork yet: the conversation is empty.", true)
		return nil
	}
	old := m.convo.tree
	var copies []sessions.Message
	var totals sessions.Totals
	for _, msg := range old.CurrentPath() {
		if msg.Seq > upTo {
			break
		}
		msg.Branch = ""
		msg.Seq = len(copies) + 1
		copies = append(copies, msg)
		totals.Add(msg)
	}
	fromID, fromTitle := m.sessionID, m.title
	newID := ""
	if m.opts.Sessions != nil && fromID != "" {
		id, err := m.opts.Sessions.Fork(fromID, old.Current, upTo, SessionMeta{Title: fromTitle, Model: m.modelRef(), Agent: m.agentName, Tools: m.enabled, NumCtx: m.ctxSet})
		if err != nil {
			m.addNote("Cannot fork: "+explain(err), true)
			return nil
		}
		newID = id
	}
	var lease *sessions.Lease
	var leaseErr error
	if newID != "" {
		lease, leaseErr = m.opts.Sessions.Hold(newID)
	}
	closeOld := m.resetForSession()
	m.sessionID, m.title = newID, fromTitle
	m.takeLease(lease)
	m.convo.meta = m.setupMeta()
	m.totals = events.Usage{PromptTokens: totals.PromptTokens, OutputTokens: totals.OutputTokens, CostUSD: totals.CostUSD, ToolCostUSD: totals.ToolCostUSD}
	m.showTree(&sessions.Tree{Messages: copies})
	where := "this conversation"
	if fromID != "" {
		where = fmt.Sprintf("session %s (%s)", shortID(fromID), orNone(fromTitle))
	}
	text := fmt.Sprintf("Forked: a new session with %s of %s, up to its message %d. The original is unchanged; /sessions shows the fork under it.",
		format.Count(len(copies), "message"), where, upTo)
	if newID == "" {
		text = fmt.Sprintf("Forked: a new conversation with %s, up to message %d (not saved: sessions are not being stored).", format.Count(len(copies), "message"), upTo)
	}
	m.addNote(text, false)
	if leaseErr != nil {
		m.addNote("Another jarvis could open the fork while it is open here: "+leaseErr.Error(), true)
	}
	return tea.Batch(closeOld, m.forgetWindow())
}

// resetForSession forgets what belongs to the conversation left: its
// "allow for this session" answers and the tools' state (a REPL's
// variables), as /new does. The returned command closes the old tools.
func (m *model) resetForSession() tea.Cmd {
	m.approvals = tools.NewApprovals()
	closeOld, err := m.rebuildTools(m.enabled, true)
	if err != nil {
		m.addNote(explain(err), true)
	}
	m.convo.selected, m.convo.editing = nil, nil
	return closeOld
}
