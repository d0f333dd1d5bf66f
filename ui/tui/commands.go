package tui

import (
	"fmt"
	"os"
	"slices"
	"strings"

	osc52 "github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// runCommand runs a slash command. Anything slow (server, database, files)
// happens in the returned command.
func (m *model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	if cmd, ok := m.convoCommand(name, arg); ok {
		return cmd
	}
	switch name {
	case "model":
		return m.modelCommand(arg)
	case "pull":
		return m.pullCommand(arg)
	case "unload":
		return m.unloadCommand(arg)
	case "agent":
		if !slices.Contains(agent.Names, arg) {
			m.addNote(fmt.Sprintf("Unknown agent %q. Choose one of: %s.", arg, strings.Join(agent.Names, ", ")), true)
			return nil
		}
		m.agentName = arg
		m.addNote("Agent set to "+arg+".", false)
	case "tools":
		if arg == "" {
			m.addNote(m.toolsNote()+" Set with /tools a,b (or /tools none), add with /tools +a, take away with /tools -a; "+
				"SERVER__* is every tool of an MCP server.", false)
			return nil
		}
		names, err := editTools(m.opts.Registry, m.enabled, arg)
		if err == nil {
			err = m.checkToolEntries(names)
		}
		if err != nil {
			m.addNote(err.Error(), true)
			return nil
		}
		return m.setTools(names)
	case "new":
		if m.run.active {
			m.addNote("A turn is running: cancel it (esc) before starting a new session.", true)
			return nil
		}
		return m.newSession()
	case "sessions":
		if m.opts.Sessions == nil {
			m.addNote("Sessions are not being saved (no database).", true)
			return nil
		}
		if arg != "" {
			return m.loadSession(arg)
		}
		return m.listSessions()
	case "clear":
		m.transcript.clear()
		m.convo.selected = nil
		if m.run.active && m.run.question != nil && m.run.current != nil {
			// The running turn keeps its place: its reply is still arriving.
			m.transcript.add(m.run.question)
			m.transcript.add(m.run.current)
			m.transcript.setLive(m.run.current)
		}
	case "export":
		return m.export(arg)
	case "changes":
		return m.changesCommand()
	case "undo":
		return m.undoCommand(arg)
	case "ctx":
		return m.ctxCommand(arg)
	case "compact":
		return m.compactCommand()
	case "eval":
		return m.evalCommand(arg)
	case "theme":
		return m.setTheme(arg)
	case "copy":
		return m.copyLast()
	case "mouse":
		return m.toggleMouse()
	case "help":
		m.showHelp()
	case "quit", "exit", "q":
		if m.run.active && m.run.cancel != nil {
			// Like ctrl+c: the turn is stopped first, and shown stopped.
			m.cancelRun()
			m.addNote("The running turn was cancelled. /quit again (or ctrl+c twice) leaves jarvis.", false)
			return nil
		}
		return m.quit()
	default:
		m.addNote(fmt.Sprintf("Unknown command /%s. /help lists the commands.", name), true)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// setTools changes the enabled tools for the next turns.
func (m *model) setTools(names []string) tea.Cmd {
	if m.run.active {
		m.addNote("A turn is running: change the tools when it is done (esc cancels it).", true)
		return nil
	}
	closeOld, err := m.rebuildTools(names, false)
	if err != nil {
		m.addNote(explain(err), true)
		return nil
	}
	m.clampPane()
	m.addNote(m.toolsNote(), false)
	return closeOld
}

// toolsNote says which tools are on: the list as set, and what its
// patterns stand for now.
func (m *model) toolsNote() string {
	note := "Tools: " + orNone(strings.Join(m.enabled, ", ")) + "."
	if slices.ContainsFunc(m.enabled, tools.IsPattern) {
		note += " That is " + format.Count(len(m.enabledTools()), "tool") + " now."
	}
	return note
}

// editTools is the tool list /tools ARG asks for: ARG itself, or, when
// each of its entries starts with + or -, the current list with those
// tools added and taken away.
func editTools(reg *tools.Registry, current []string, arg string) ([]string, error) {
	entries := tools.ParseList(arg)
	edits := len(entries) > 0 && !slices.ContainsFunc(entries, func(e string) bool { return e[0] != '+' && e[0] != '-' })
	if !edits {
		if slices.ContainsFunc(entries, func(e string) bool { return e[0] == '+' || e[0] == '-' }) {
			return nil, fmt.Errorf("/tools %s mixes a list with + and -: give the whole list (/tools a,b), or only changes (/tools +a,-b)", arg)
		}
		return entries, nil
	}
	next := slices.Clone(current)
	for _, e := range entries {
		name := strings.TrimSpace(e[1:])
		if name == "" {
			return nil, fmt.Errorf("/tools %s: a + or - needs a tool name after it (/tools +file_read)", arg)
		}
		if e[0] == '-' {
			next = withoutTool(reg, next, name)
			if tools.IsPattern(name) {
				next = slices.DeleteFunc(next, func(n string) bool { return tools.MatchPattern(name, n) })
			}
		} else if !slices.Contains(next, name) {
			next = append(next, name)
		}
	}
	return next, nil
}

// checkToolEntries refuses a pattern that is malformed or that matches no
// tool and names no configured MCP server (whose tools may come later):
// a list that silently selects nothing is a typo.
func (m *model) checkToolEntries(entries []string) error {
	for _, e := range entries {
		if !tools.IsPattern(e) {
			continue
		}
		if err := tools.CheckPattern(e); err != nil {
			return err
		}
		if len(m.opts.Registry.Expand([]string{e})) > 0 {
			continue
		}
		if server, _, ok := strings.Cut(e, "__"); ok && !tools.IsPattern(server) && m.mcpPending(server+"__") {
			continue
		}
		return fmt.Errorf("no tool matches %q: the tools are listed in the Tools tab (%s)", e, m.pane.KeyOf(m.tools))
	}
	return nil
}

// newSession starts a fresh conversation; the old one stays in the store.
// Approvals and tool state (a REPL's variables) start afresh too.
func (m *model) newSession() tea.Cmd {
	m.conv = &agent.Conversation{}
	m.convo.tree, m.convo.selected, m.convo.editing = &sessions.Tree{}, nil, nil
	m.sessionID, m.title = "", ""
	m.dropLease()
	m.transcript.clear()
	m.run.current, m.lastReply, m.run.question = nil, nil, nil
	m.totals = events.Usage{}
	m.toolCalls = 0
	m.approvals = tools.NewApprovals()
	closeOld, err := m.rebuildTools(m.enabled, true)
	if err != nil {
		m.addNote(explain(err), true)
	}
	m.addNote("New session.", false)
	return tea.Batch(closeOld, m.forgetWindow())
}

func (m *model) setTheme(name string) tea.Cmd {
	if name == "" {
		m.addNote("Theme: "+m.themeName+". Themes: "+strings.Join(themes.Names(), ", ")+".", false)
		return nil
	}
	st, md, err := loadTheme(name)
	if err != nil {
		m.addNote(explain(err), true)
		return nil
	}
	m.st, m.md, m.themeName = st, md, name
	return nil
}

// completions offers arguments for /model, /agent, /tools, /theme.
func (m *model) completions(cmd, arg string) []string {
	switch cmd {
	case "agent":
		return agent.Names
	case "tools":
		names := m.opts.Registry.Names()
		if m.opts.MCP != nil {
			for _, st := range m.opts.MCP.Status() {
				names = append(names, st.Name+"__*")
			}
		}
		// /tools +NAME adds and -NAME takes away: complete the name
		// after the sign.
		if sign := arg[:min(len(arg), 1)]; sign == "+" || sign == "-" {
			for i, n := range names {
				names[i] = sign + n
			}
			return names
		}
		return append(names, "none")
	case "theme":
		return themes.Names()
	case "model", "pull", "unload":
		return m.modelCompletions()
	case "ctx":
		return []string{"auto", "2048", "4096", "8192", "16384", "32768"}
	}
	return nil
}

// copyLast copies the last answer with OSC 52, which works over SSH and in
// most terminals; the note says what to do when it does not.
func (m *model) copyLast() tea.Cmd {
	var text string
	if m.lastReply != nil {
		text = m.lastReply.plainText()
	}
	if text == "" && m.run.current != nil {
		text = m.run.current.plainText()
	}
	if text == "" {
		return m.setStatus("nothing to copy yet")
	}
	seq := osc52.New(text)
	if os.Getenv("TMUX") != "" {
		seq = seq.Tmux()
	} else if strings.HasPrefix(os.Getenv("TERM"), "screen") {
		seq = seq.Screen()
	}
	out := m.opts.Out
	if out == nil {
		out = os.Stdout
	}
	n := len([]rune(text))
	return func() tea.Msg {
		if _, err := seq.WriteTo(out); err != nil {
			return statusMsg("copy failed: " + explain(err))
		}
		return statusMsg("copied " + format.Count(n, "character") + " (OSC 52; if your terminal ignores it, press F2 and select with the mouse)")
	}
}
