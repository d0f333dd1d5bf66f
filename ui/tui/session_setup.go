package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// A session records what it runs with (model, agent, tools, the window
// the person set), and opening it makes them the workbench's again: a
// conversation continued with other tools is another conversation. The
// session reopened by --continue keeps what the command line set
// (--model, --agent, --tools, --num-ctx), as `jarvis ask --continue`
// does. The record follows the session: each run writes what changed
// since the last (/model, /agent, /tools, the Tools tab, /ctx).

// flagSource is how the configuration names a setting the command line
// gave.
func flagSource(key string) string { return "flag --" + key }

// restoreSetup makes s's model, agent and tools the workbench's, except
// those the command line set when keepFlags is true. It returns the
// sentence the opening note ends with and the commands that check the
// restored model. The tools are only named here: the caller rebuilds
// them with the session's other state.
func (m *model) restoreSetup(s SessionSummary, keepFlags bool) (string, tea.Cmd) {
	pinned := func(key string) bool {
		return keepFlags && m.opts.Config != nil && m.opts.Config.Source(key) == flagSource(key)
	}
	var restored, kept []string
	var cmd tea.Cmd
	switch {
	case s.Model == "":
	case pinned("model"):
		if s.Model != m.modelRef() {
			kept = append(kept, "--model "+m.modelRef())
		}
	case s.Model != m.modelRef():
		endpoint, name := m.opts.Config.SplitModel(s.Model)
		m.useServer(endpoint, name)
		cmd = tea.Batch(m.checkModel(name), m.refreshModelState())
		fallthrough
	default:
		restored = append(restored, "model "+m.modelRef())
	}
	switch {
	case s.Agent == "":
	case pinned("agent"):
		if s.Agent != m.agentName {
			kept = append(kept, "--agent "+m.agentName)
		}
	default:
		m.agentName = s.Agent
		restored = append(restored, "agent "+s.Agent)
	}
	var gone []string
	switch {
	case pinned("tools"):
		if !slices.Equal(s.Tools, m.enabled) {
			kept = append(kept, "--tools "+orNone(strings.Join(m.enabled, ",")))
		}
	default:
		var names []string
		for _, n := range s.Tools {
			if m.opts.Registry.Has(n) || m.mcpPending(n) || tools.IsPattern(n) && m.checkToolEntries([]string{n}) == nil {
				names = append(names, n)
			} else {
				gone = append(gone, n)
			}
		}
		m.enabled = names
		restored = append(restored, toolsPhrase(names))
	}
	windowPinned := keepFlags && flagWindow(m.opts.Config) > 0
	switch w := m.restoreWindow(s.NumCtx, windowPinned); {
	case w != "":
		restored = append(restored, w)
	case windowPinned && s.NumCtx != m.ctxSet:
		kept = append(kept, fmt.Sprintf("--num-ctx %d", m.ctxSet))
	}
	m.convo.meta = SessionMeta{Model: s.Model, Agent: s.Agent, Tools: slices.Clone(s.Tools), NumCtx: s.NumCtx}

	var b strings.Builder
	if len(restored) > 0 {
		b.WriteString("Restored its " + joinAnd(restored) + ".")
	}
	if len(kept) > 0 {
		b.WriteString(" Kept " + joinAnd(kept) + " from the command line.")
	}
	if len(gone) > 0 {
		b.WriteString(" " + format.Count(len(gone), "tool") + " it had " + map[bool]string{true: "is", false: "are"}[len(gone) == 1] +
			" not available now: " + strings.Join(gone, ", ") + ".")
	}
	return strings.TrimSpace(b.String()), cmd
}

// toolsPhrase names a set of tools in a sentence.
func toolsPhrase(names []string) string {
	if len(names) == 0 {
		return "tools (none)"
	}
	return "tools " + strings.Join(names, ", ")
}

// joinAnd joins phrases as a sentence lists them: "a", "a and b", "a, b
// and c".
func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// recordSetup writes what the session runs with when it changed since it
// was last recorded, so that opening it again restores it.
func (m *model) recordSetup(meta SessionMeta) {
	if m.opts.Sessions == nil || m.sessionID == "" {
		m.convo.meta = meta
		return
	}
	old := m.convo.meta
	if old.Model == meta.Model && old.Agent == meta.Agent && slices.Equal(old.Tools, meta.Tools) && old.NumCtx == meta.NumCtx {
		return
	}
	if err := m.opts.Sessions.SetMeta(m.sessionID, meta); err != nil {
		m.addNote("Could not record the session's model, tools and window: "+explain(err), true)
		return
	}
	m.convo.meta = meta
}
