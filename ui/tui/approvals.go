package tui

import (
	"strings"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/toolstab"
)

// AlwaysStore keeps the always-grants (store/approvals): the dialog's A
// adds one, the Tools tab's A adds a tool-wide one or revokes a tool's,
// and shows which tools have some.
type AlwaysStore interface {
	tools.AlwaysApprovals
	Names() ([]string, error)
	RevokeAll(tool string) (int, error)
}

// approvalState is the workbench's side of the confirmation policy.
type approvalState struct {
	policy *tools.Policy
	// always is what the Tools tab shows (the store's names, as last read
	// and as changed here since).
	always map[string]bool
	// enabled is the tools the person turned on, read by the policy from
	// the tools' goroutines: an MCP tool that is off cannot be reached
	// through mcp_adapter.
	enabled atomic.Pointer[map[string]bool]
}

// newPolicy builds the workbench's policy: the config's confirm settings,
// the always-approvals, the session's approvals, then the dialog, and the
// audit log for every decision.
func (m *model) newPolicy() *tools.Policy {
	o := tools.PolicyOptions{
		Source: tools.SourceTUI, Overrides: tools.ConfigOverrides(m.opts.ToolDeps.Settings),
		Audit: m.opts.Audit, Approvals: m.approvals,
		Asker: &dialogConfirmer{send: func(msg any) { m.send(msg) }},
		TurnedOff: func(name string) bool {
			on := m.appr.enabled.Load()
			return strings.Contains(name, mcp.Separator) && (on == nil || !(*on)[name])
		},
	}
	if m.opts.Always != nil {
		o.Always = m.opts.Always
	}
	return tools.NewPolicy(o)
}

// noteEnabled publishes the enabled tools to the policy.
func (m *model) noteEnabled(names []string) {
	on := make(map[string]bool, len(names))
	for _, n := range names {
		on[n] = true
	}
	m.appr.enabled.Store(&on)
}

// alwaysMsg carries the always-allowed tools as read from the store.
type alwaysMsg struct {
	names []string
	err   error
}

// loadAlways reads the always-allowed tools off the UI goroutine.
func (m *model) loadAlways() tea.Cmd {
	s := m.opts.Always
	if s == nil {
		return nil
	}
	return func() tea.Msg {
		names, err := s.Names()
		return alwaysMsg{names: names, err: err}
	}
}

func (m *model) applyAlways(msg alwaysMsg) {
	if msg.err != nil {
		m.addNote("The always-allowed tools could not be read: "+explain(msg.err), true)
		return
	}
	m.appr.always = map[string]bool{}
	for _, n := range msg.names {
		m.appr.always[n] = true
	}
}

// markAlways changes what the Tools tab shows at once; the store is the
// policy's to write (dialog) or the Tools tab's question's.
func (m *model) markAlways(name string, on bool) {
	if m.appr.always == nil {
		m.appr.always = map[string]bool{}
	}
	if on {
		m.appr.always[name] = true
	} else {
		delete(m.appr.always, name)
	}
}

// alwaysDoneMsg reports a change made from the Tools tab.
type alwaysDoneMsg struct {
	name string
	on   bool
	n    int // grants revoked
	err  error
}

// askAlways is the Tools tab's A on the selected tool: it asks before
// always-allowing the whole tool, or before revoking the tool's
// always-grants. A tool whose grants name a directory, a host, a channel
// or a task cannot be allowed whatever it does: the note says how its
// grants are given.
func (m *model) askAlways(name string) tea.Cmd {
	s := m.opts.Always
	if s == nil {
		return m.setStatus("always-approvals need the database, which this workbench runs without")
	}
	shown := safe.Text(name)
	if m.appr.always[name] {
		m.tools.Ask(&toolstab.Question{Text: "Revoke every always-grant of " + shown + "? y yes · n no", Yes: func() tea.Cmd {
			m.markAlways(name, false)
			return func() tea.Msg {
				n, err := s.RevokeAll(name)
				return alwaysDoneMsg{name: name, n: n, err: err}
			}
		}})
		return nil
	}
	if kind := m.grantKinds[name]; !(tools.Scope{Kind: kind}).WideGrantable() {
		return m.setStatus(shown + " is approved per " + kind.Noun() + ": press A in its dialog to always allow that one" + reachHint(kind, name))
	}
	m.tools.Ask(&toolstab.Question{Text: "Always allow " + shown + ", with any arguments, in every session? y yes · n no", Yes: func() tea.Cmd {
		m.markAlways(name, true)
		return func() tea.Msg {
			return alwaysDoneMsg{name: name, on: true, err: s.AllowAlways(tools.Grant{Tool: name})}
		}
	}})
	return nil
}

func reachHint(kind tools.ScopeKind, name string) string {
	if kind == tools.ScopeDir {
		return "; [tool." + name + "] allowed_dirs in the config sets where it may reach"
	}
	return ""
}

// questionKey answers the side pane's question: y (held) says yes, n or
// esc no; typing goes to the prompt and drops the question.
func (m *model) questionKey(k tea.KeyMsg) tea.Cmd {
	q := m.tools.Question()
	switch k.String() {
	case "y":
		return m.hold(k, "", func() tea.Cmd {
			if m.tools.Question() != q {
				return nil
			}
			m.tools.Ask(nil)
			return q.Yes()
		})
	case "n", "esc":
		m.tools.Ask(nil)
		return nil
	}
	if typingKey(k) {
		m.tools.Ask(nil)
		m.toDraft(k)
	}
	return nil
}

func (m *model) alwaysDone(msg alwaysDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.markAlways(msg.name, !msg.on)
		m.addNote("The approval of "+safe.Text(msg.name)+" could not be changed: "+explain(msg.err), true)
		return nil
	}
	text := safe.Text(msg.name) + " asks for confirmation again (" + format.Count(msg.n, "always-grant") + " revoked)"
	if msg.on {
		text = safe.Text(msg.name) + " is always allowed, any call (A again revokes it)"
		if forced, set := tools.ConfigOverrides(m.opts.ToolDeps.Settings)[msg.name]; set && forced {
			text += "; the config's confirm = true still makes it ask"
		}
	}
	return m.setStatus(text)
}
