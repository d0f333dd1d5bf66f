package tui

import (
	"errors"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// /changes lists what the tools changed in the session's files, turn by
// turn, with the diffs; /undo takes back the last call's changes (or, with
// a number, every change of that turn, as /changes numbers them), and
// refuses, naming the file, when a file is no longer what the change left.

// ChangeStore is the part of a SessionStore that keeps the tools' changes
// (the database's store has it; a store without it has no undo).
type ChangeStore interface {
	// Changes returns the session's changes, oldest first, and its
	// messages (which turn made which change).
	Changes(id string) ([]sessions.Change, []sessions.Message, error)
	// Undo restores the last call's changes, or turn's, and records it.
	Undo(id string, turn int) ([]sessions.Change, error)
}

func (a storeAdapter) Changes(id string) ([]sessions.Change, []sessions.Message, error) {
	a.flush()
	_, list, err := a.s.Changes(id)
	if err != nil {
		return nil, nil, err
	}
	_, msgs, err := a.s.Load(id)
	return list, msgs, err
}

func (a storeAdapter) Undo(id string, turn int) ([]sessions.Change, error) {
	a.flush()
	return files.Undo(a.s, id, turn)
}

// changesMsg carries what /changes or /undo found.
type changesMsg struct {
	undo    bool
	changes []sessions.Change
	msgs    []sessions.Message
	err     error
}

// changeStore returns the session's change store, or says why there is
// none.
func (m *model) changeStore() (ChangeStore, string, bool) {
	cs, ok := m.opts.Sessions.(ChangeStore)
	switch {
	case !ok:
		m.addNote("Changes are not recorded here (no database).", true)
		return nil, "", false
	case m.sessionID == "":
		m.addNote("No file was changed in this session.", false)
		return nil, "", false
	}
	return cs, m.sessionID, true
}

func (m *model) changesCommand() tea.Cmd {
	cs, id, ok := m.changeStore()
	if !ok {
		return nil
	}
	return func() tea.Msg {
		list, msgs, err := cs.Changes(id)
		return changesMsg{changes: list, msgs: msgs, err: err}
	}
}

func (m *model) undoCommand(arg string) tea.Cmd {
	turn := 0
	if arg != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
		if err != nil || n < 1 {
			m.addNote("Usage: /undo (the last change) or /undo N (every change of turn N, as /changes numbers them).", true)
			return nil
		}
		turn = n
	}
	if m.run.active {
		m.addNote("A turn is running: cancel it (esc) before undoing, so no tool changes the files meanwhile.", true)
		return nil
	}
	cs, id, ok := m.changeStore()
	if !ok {
		return nil
	}
	return func() tea.Msg {
		undone, err := cs.Undo(id, turn)
		return changesMsg{undo: true, changes: undone, err: err}
	}
}

// showChanges puts what /changes or /undo found in the transcript.
func (m *model) showChanges(msg changesMsg) {
	switch {
	case msg.undo && errors.Is(msg.err, files.ErrNothingToUndo):
		m.addNote("Nothing to undo: every change the tools made in this session was undone already, or there was none (/changes lists them).", false)
	case msg.err != nil && msg.undo:
		m.addNote("Undo refused: "+safe.Text(msg.err.Error())+".", true)
	case msg.err != nil:
		m.addNote("The changes cannot be read: "+safe.Text(msg.err.Error()), true)
	case msg.undo:
		names := make([]string, 0, len(msg.changes))
		for _, c := range msg.changes {
			names = append(names, safe.Text(c.Name()))
		}
		m.addNote("Undone ("+format.Count(len(msg.changes), "change")+"): "+strings.Join(uniq(names), ", ")+" put back as before. "+
			"The model reads a file again before it changes it.", false)
	case len(msg.changes) == 0:
		m.addNote("No file was changed in this session.", false)
	default:
		m.transcript.add(&changesItem{groups: sessions.GroupChanges(msg.msgs, msg.changes)})
	}
}

func uniq(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// changesItem is /changes's listing: turn by turn, each change's file,
// tool and whether it was undone, with its diff.
type changesItem struct {
	groups []sessions.ChangeGroup
	cache  cached
}

func (c *changesItem) render(rc renderCtx) []string {
	return c.cache.get(rc.textKey(), 0, func() []string {
		st := rc.st
		out := []string{st.accent.Render("Files changed in this session (/undo takes back the last change, /undo N turn N's):")}
		for _, g := range c.groups {
			head := "Turn " + strconv.Itoa(g.Turn)
			if g.Turn == 0 {
				head = "This turn"
			}
			if q := strings.TrimSpace(g.Question); q != "" {
				head += ": " + format.Cut(strings.Join(strings.Fields(q), " "), 60)
			}
			out = append(out, "", st.text.Render(safe.Text(head)))
			for _, ch := range g.Changes {
				diff := textdiff.Unified(strings.TrimPrefix(ch.Name(), "./"), ch.Before, ch.After, ch.BeforeExists, ch.AfterExists)
				line := "  " + diffSummary(diff) + " · " + ch.Tool + " · " + ch.At.Local().Format("15:04:05")
				if ch.Undone() {
					line += " · undone"
				}
				out = append(out, st.muted.Render(safe.Text(line)))
				for _, l := range diffLines(st, diff, rc.width-4) {
					out = append(out, "    "+l)
				}
			}
		}
		return out
	})
}

func (c *changesItem) height(rc renderCtx) int { return len(c.render(rc)) }
func (c *changesItem) lines(rc renderCtx, from, to int) []string {
	return sliceLines(c.render(rc), from, to)
}
