package tui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/store"
)

// SaveQueue is the database's write queue (store.Queue): the TUI shows
// what it still holds ("saving 2…") and, when the person quits, waits for
// it with a visible count rather than leaving messages unsaved.
type SaveQueue interface {
	State() store.QueueState
	OnChange(fn func(store.QueueState))
	Flush(ctx context.Context) error
}

// saveStateMsg carries a change of the queue's state.
type saveStateMsg store.QueueState

// quitWait is how long quitting waits for pending writes. Whatever is left
// then is in the queue's journal, and the next start saves it.
const quitWait = 30 * time.Second

// watchSaves forwards the queue's changes to the program. Sending happens
// on a goroutine of its own, so the queue never waits for the program.
func (m *model) watchSaves() {
	q := m.opts.Saves
	if q == nil {
		return
	}
	send := m.send
	q.OnChange(func(st store.QueueState) { go send(saveStateMsg(st)) })
}

func (m *model) applySaveState(st store.QueueState) tea.Cmd {
	m.saves = st
	m.saves.Err = nil
	if st.Err != nil {
		// Not a failure the person must act on: the write is kept, and
		// the note says where.
		m.addNote(st.Err.Error(), true)
	}
	if m.quitting && st.Pending == 0 {
		return tea.Quit
	}
	return nil
}

// quit leaves at once when nothing is waiting to be saved; otherwise it
// waits for the writes (the status bar counts them down) for up to
// quitWait. Asking to quit again while waiting leaves now: the writes left
// are kept in the queue's journal for the next start.
func (m *model) quit() tea.Cmd {
	if m.opts.Saves == nil || m.quitting {
		return tea.Quit
	}
	if m.opts.Saves.State().Pending == 0 {
		return tea.Quit
	}
	m.quitting, m.quitBy = true, m.now().Add(quitWait)
	return m.ensureTick()
}

// savingText is the status bar's word on pending writes: only while they
// wait for the file (a write that lands at once is not worth a flicker),
// and always while quitting.
func (m *model) savingText() string {
	n := m.saves.Pending
	if n == 0 || !m.saves.Waiting && !m.quitting {
		return ""
	}
	what := "1 write"
	if n != 1 {
		what = fmt.Sprintf("%d writes", n)
	}
	text := "saving " + what + "…"
	if m.saves.Holder != "" {
		text += " (the database is busy: " + m.saves.Holder + ")"
	}
	if m.quitting {
		left := max(m.quitBy.Sub(m.now()).Round(time.Second), 0)
		text += fmt.Sprintf(" · quitting when saved (%s; ctrl+c leaves now and keeps them for next time)", left)
	}
	return text
}
