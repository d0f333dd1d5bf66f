package tui

import (
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/contexttab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/eventstab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/schedulertab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/toolstab"
)

// SchedulerView is the scheduler the TUI runs and shows in its Scheduler tab.
type SchedulerView = *scheduler.Scheduler

// The side pane's tabs are components (package tabs and one package a
// tab under it); the model holds the pane and, for the tabs it feeds
// data, a typed handle.

// newPane makes the side pane with its tabs, in order (F3 selects the
// first). A new tab is its package and a line here.
func (m *model) newPane() *tabs.Pane {
	m.tools = toolstab.New(toolsHost{m})
	m.log = eventstab.New()
	m.ctxTab = contexttab.New(contextHost{m})
	return tabs.NewPane(
		m.tools,
		m.log,
		schedulertab.New(m.sched, func() time.Time { return m.now() }),
		m.ctxTab,
	)
}

// paneHelp is the help's lines on the side pane's tabs: each one's F-key
// and name, and the keys it takes while the pane has focus.
func (m *model) paneHelp() [][2]string {
	var out [][2]string
	for i, t := range m.pane.Tabs() {
		out = append(out, [2]string{tabs.KeyName(i) + " " + t.Title(), "side pane tab: " + t.Hint()})
	}
	return out
}

// toolsHost is the model as the Tools tab's host.
type toolsHost struct{ m *model }

func (h toolsHost) Rows() []toolstab.Row                { return h.m.toolRows() }
func (h toolsHost) Describe(category, cost bool) string { return h.m.describeTools(category, cost) }
func (h toolsHost) Toggle(name string) tea.Cmd          { return h.m.toggleTool(name) }
func (h toolsHost) AskAlways(name string) tea.Cmd       { return h.m.askAlways(name) }

// contextHost is the model as the Context tab's host.
type contextHost struct{ m *model }

func (h contextHost) Agent() string    { return h.m.agentName }
func (h contextHost) Messages() int    { return len(h.m.conv.Messages) }
func (h contextHost) Refresh() tea.Cmd { return h.m.refreshContext(true) }
func (h contextHost) Render() tea.Cmd  { return h.m.renderContext() }

// toolRows lists the registry's tools for the Tools tab.
func (m *model) toolRows() []toolstab.Row {
	on := map[string]bool{}
	for _, n := range m.enabledTools() {
		on[n] = true
	}
	rows := append(rowsFor(m.opts.Registry, on, m.specs, m.toolTokens, m.isMCPTool), m.mcpRows(on)...)
	for i := range rows {
		rows[i].Always = !rows[i].Header && m.appr.always[rows[i].Name]
	}
	return rows
}

// rowsFor lists the built-in tools with whether each is enabled (MCP tools,
// named SERVER__TOOL, are listed under their servers instead).
func rowsFor(registry *tools.Registry, enabled map[string]bool, specs map[string]tools.Spec, tokens map[string]int, isMCP func(string) bool) []toolstab.Row {
	var rows []toolstab.Row
	for _, n := range registry.Names() {
		if isMCP(n) {
			continue
		}
		s := specs[n]
		rows = append(rows, toolstab.Row{Name: n, Enabled: enabled[n], Confirm: s.RequiresConfirmation, Tokens: tokens[n]})
	}
	return rows
}

// toggleTool enables or disables the named tool; a pattern turns on the
// tools it matches, or off when all of them are on.
func (m *model) toggleTool(name string) tea.Cmd {
	if tools.IsPattern(name) {
		matched := m.opts.Registry.Expand([]string{name})
		on := m.enabledTools()
		sign := "+"
		if len(matched) > 0 && !slices.ContainsFunc(matched, func(n string) bool { return !slices.Contains(on, n) }) {
			sign = "-"
		}
		next, err := editTools(m.opts.Registry, m.enabled, sign+name)
		if err != nil {
			m.addNote(err.Error(), true)
			return nil
		}
		return m.setTools(next)
	}
	if slices.Contains(m.enabledTools(), name) {
		return m.setTools(withoutTool(m.opts.Registry, m.enabled, name))
	}
	return m.setTools(append(slices.Clone(m.enabled), name))
}

// enabledTools are the tools that are on, the patterns of the list
// replaced by the tools they matched when the tools were last built (as
// the executor has them); a tool of an MCP server that has not listed it
// yet is on, named.
func (m *model) enabledTools() []string {
	if m.offeredFor != nil && slices.Equal(m.offeredFor, m.enabled) {
		return m.offered
	}
	return m.opts.Registry.Expand(m.enabled)
}

// withoutTool is a tool list with one tool turned off: removed where it is
// named, and a pattern that covers it replaced by the other tools it
// matches now (the server's tools that come later are no longer covered:
// the list names what was chosen one by one).
func withoutTool(reg *tools.Registry, entries []string, name string) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		switch {
		case e == name:
		case tools.IsPattern(e) && tools.MatchPattern(e, name):
			for _, n := range reg.Expand([]string{e}) {
				if n != name && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		case !slices.Contains(out, e):
			out = append(out, e)
		}
	}
	return out
}

// shortID is the first 8 characters of an id, as lists show it.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
