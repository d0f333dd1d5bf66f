package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/toolstab"
)

// mcpChangedMsg says an MCP server changed state or its tool list.
type mcpChangedMsg struct{}

// waitMCP waits for the next change signal (a command, so the wait is off
// the UI goroutine) and is re-armed after each.
func (m *model) waitMCP() tea.Cmd {
	ch := m.mcpChanges
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return mcpChangedMsg{}
	}
}

// mcpChanged tells the transcript about servers that failed or came back,
// and rebuilds the tools so enabled MCP tools follow their servers; during
// a run the rebuild waits for the run to end.
func (m *model) mcpChanged() tea.Cmd {
	m.noteMCPOutages()
	if m.run.active {
		m.mcpDirty = true
		return m.waitMCP()
	}
	closeOld, err := m.rebuildTools(m.enabled, false)
	if err != nil {
		m.addNote(explain(err), true)
	}
	m.noteMCPOff()
	m.clampPane()
	return tea.Batch(closeOld, m.waitMCP())
}

// noteMCPOff says, once, before the conversation starts, which servers
// came up with all their tools off and how to offer them to the model: a
// server's tools are off until chosen (each costs room in the window),
// and without a word the person who configured it finds the model
// denying it has them. It waits for every server's first attempt, so that
// the servers are told in one note.
func (m *model) noteMCPOff() {
	if m.opts.MCP == nil || m.mcpOffSaid {
		return
	}
	if len(m.conv.Messages) > 0 || m.run.active {
		m.mcpOffSaid = true
		return
	}
	status := m.opts.MCP.Status()
	if slices.ContainsFunc(status, func(s mcp.ServerStatus) bool { return s.State == mcp.StateStarting && s.Restarts == 0 }) {
		return
	}
	m.mcpOffSaid = true
	on := map[string]bool{}
	for _, n := range m.enabledTools() {
		on[n] = true
	}
	var off []mcp.ServerStatus
	for _, s := range status {
		if s.State == mcp.StateReady && len(s.Tools) > 0 && !slices.ContainsFunc(s.Tools, func(t mcp.ToolInfo) bool { return on[t.Name] }) {
			off = append(off, s)
		}
	}
	tab := m.pane.KeyOf(m.tools)
	switch len(off) {
	case 0:
	case 1:
		them := map[bool]string{true: "it", false: "them"}[len(off[0].Tools) == 1]
		m.addNote(fmt.Sprintf("MCP server '%s' is ready with its %s off: /tools +%s__* offers %s to the model "+
			"(or space on its row in the Tools tab, %s).", off[0].Name, format.Count(len(off[0].Tools), "tool"), off[0].Name, them, tab), false)
	default:
		var names []string
		for _, s := range off {
			names = append(names, fmt.Sprintf("'%s' (%s)", s.Name, format.Count(len(s.Tools), "tool")))
		}
		m.addNote(fmt.Sprintf("MCP servers %s are ready with their tools off: /tools +SERVER__* offers a server's tools to the model "+
			"(/tools +%s__*), or space on its row in the Tools tab (%s).", joinAnd(names), off[0].Name, tab), false)
	}
}

// mcpPending reports whether name is an MCP tool of a configured server
// that has not listed it (yet): it stays enabled and joins later.
func (m *model) mcpPending(name string) bool {
	if m.opts.MCP == nil {
		return false
	}
	server, _, ok := strings.Cut(name, "__")
	if !ok {
		return false
	}
	_, known := m.opts.MCP.Server(server)
	return known
}

// mcpRows are the Tools tab's MCP part: each server with its state, then
// its tools.
func (m *model) mcpRows(enabled map[string]bool) []toolstab.Row {
	if m.opts.MCP == nil {
		return nil
	}
	var rows []toolstab.Row
	now := m.now()
	for _, s := range m.opts.MCP.Status() {
		// What all its tools would cost in the prompt, for the
		// decision the row's space makes.
		cost := 0
		for _, t := range s.Tools {
			cost += m.toolTokens[t.Name]
		}
		head := fmt.Sprintf("%s · %s", s.Name, s.Summary(now))
		if cost > 0 {
			head += " · " + format.Tokens(cost) + " tok"
		}
		rows = append(rows, toolstab.Row{Header: true, Name: safe.Text(format.OneLine(head, 0)),
			OK: s.State == mcp.StateReady, Pattern: s.Name + mcp.Separator + "*"})
		for _, t := range s.Tools {
			rows = append(rows, toolstab.Row{Name: t.Name, Enabled: enabled[t.Name], Confirm: t.Spec.RequiresConfirmation,
				MCP: map[bool]string{true: "", false: "unavailable"}[s.Available()], Tokens: m.toolTokens[t.Name]})
		}
	}
	return rows
}

// noteMCPOutages says in the transcript, once per outage, that a server
// failed (why, and where to look), and that it is back when it recovers:
// without it a failed server shows only in the Tools tab, and its tools
// just go missing. A server restarting in a loop is told about once.
func (m *model) noteMCPOutages() {
	if m.opts.MCP == nil {
		return
	}
	if m.mcpDown == nil {
		m.mcpDown = map[string]bool{}
	}
	for _, s := range m.opts.MCP.Status() {
		switch {
		case s.State == mcp.StateFailed && !m.mcpDown[s.Name]:
			m.mcpDown[s.Name] = true
			m.mcpNote(fmt.Sprintf("MCP server '%s' failed: %s. Its tools are unavailable while jarvis restarts it; "+
				"the Tools tab (%s) shows its state, and `jarvis mcp tools %s` in a shell starts it alone and shows the whole error.",
				s.Name, strings.TrimSuffix(s.Reason, "."), m.pane.KeyOf(m.tools), s.Name), true)
		case s.State == mcp.StateReady && m.mcpDown[s.Name]:
			delete(m.mcpDown, s.Name)
			m.mcpNote(fmt.Sprintf("MCP server '%s' is back, with %s.", s.Name, format.Count(len(s.Tools), "tool")), false)
		}
	}
}

// mcpNote adds a note where the transcript is being written: to the reply
// in progress during a run, else after the last item.
func (m *model) mcpNote(text string, isErr bool) {
	text = safe.Text(text)
	if m.run.active && m.run.current != nil {
		m.run.current.note(text, isErr)
		return
	}
	m.addNote(text, isErr)
}
