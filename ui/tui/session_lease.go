package tui

import (
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// A session is open in one jarvis at a time (sessions.Store.Hold): two
// workbenches on one session, or a workbench and `jarvis ask --session`,
// would each append to the line they loaded and interleave. The
// workbench holds the session it shows: the one it opened (/sessions,
// --continue), created (with its first message) or forked; it lets it go
// for the next one (/new, another session) and when it ends. A session
// another jarvis holds opens to be read: nothing is written to it (no
// question, retry, edit, compaction or choice of attempt), and ctrl+p or
// /fork goes on in a fork of it here. Sending again checks whether the
// other has let go; then the session is reopened with what it added.

// leaseState is the workbench's hold on the session it shows.
type leaseState struct {
	// held is this workbench's lease on the session shown (nil for a
	// session not created yet, or without a database).
	held *sessions.Lease
	// elsewhere is set while the session shown is held by another
	// jarvis: nothing is written to it.
	elsewhere *sessions.HeldError
}

// leaseTriedMsg says whether the session shown could be held after all.
type leaseTriedMsg struct {
	id    string
	lease *sessions.Lease
	held  *sessions.HeldError
	err   error
}

// takeLease makes l the lease of the session shown (nil: none), letting
// go of the one held before.
func (m *model) takeLease(l *sessions.Lease) {
	if old := m.lease.held; old != nil && old != l {
		old.Release()
	}
	m.lease = leaseState{held: l}
}

// dropLease lets the session shown go: another conversation starts, or
// the workbench ends.
func (m *model) dropLease() { m.takeLease(nil) }

// holdSession takes the lease of session id, unless mine (the lease the
// workbench has) holds it already. It runs in commands: it touches files.
func holdSession(store SessionStore, id string, mine *sessions.Lease) (*sessions.Lease, *sessions.HeldError, error) {
	if mine != nil && mine.ID() == id {
		return mine, nil, nil
	}
	l, err := store.Hold(id)
	var held *sessions.HeldError
	if errors.As(err, &held) {
		return nil, held, nil
	}
	return l, nil, err
}

// releaseUnused lets go of a lease a load took for a session that was not
// opened after all.
func (m *model) releaseUnused(l *sessions.Lease) {
	if l != nil && l != m.lease.held {
		l.Release()
	}
}

// heldNote says why nothing was done to the session shown ("sent",
// "compacted"), "" when it may be written to.
func (m *model) heldNote(what string) string {
	if m.lease.elsewhere == nil {
		return ""
	}
	return fmt.Sprintf("%s, so nothing was %s: what each of you adds would interleave in it. %s", m.heldWhere(), what, forkOffer)
}

// heldOpenNote is what opening a session held elsewhere says.
func (m *model) heldOpenNote() string {
	return fmt.Sprintf("%s: it is shown as it is stored, and nothing is written to it from here, or what each of you adds would interleave in it. %s", m.heldWhere(), forkOffer)
}

// forkOffer is the way on from a session held elsewhere.
const forkOffer = "ctrl+p (or /fork) goes on in a fork of it here; /new starts afresh."

// heldWhere names the session shown and the jarvis that holds it.
func (m *model) heldWhere() string {
	e := m.lease.elsewhere
	title := safe.Text(format.OneLine(m.title, 40))
	if title == "" {
		title = shortID(e.ID)
	}
	who := "another jarvis"
	if h := e.Holder.String(); h != "" {
		who += " (" + h + ")"
	}
	return fmt.Sprintf("Session “%s” is open in %s", title, who)
}

// sessionWritable reports whether changes to the session shown are
// saved: it is stored and held here.
func (m *model) sessionWritable() bool {
	return m.opts.Sessions != nil && m.sessionID != "" && m.lease.elsewhere == nil
}

// holdAgain is sending to a session held elsewhere: the other jarvis may
// have let go since. The prompt keeps the text meanwhile.
func (m *model) holdAgain() tea.Cmd {
	store, id := m.opts.Sessions, m.sessionID
	return func() tea.Msg {
		l, held, err := holdSession(store, id, nil)
		return leaseTriedMsg{id: id, lease: l, held: held, err: err}
	}
}

// leaseTried reopens the session when the other jarvis let go of it, with
// what it added; else it says it is still held.
func (m *model) leaseTried(msg leaseTriedMsg) tea.Cmd {
	if msg.id != m.sessionID || m.lease.elsewhere == nil {
		m.releaseUnused(msg.lease)
		return nil
	}
	switch {
	case msg.held != nil:
		m.lease.elsewhere = msg.held
		m.addNote(m.heldNote("sent"), true)
		return nil
	case msg.err != nil:
		m.addNote("Cannot hold session "+shortID(msg.id)+": "+msg.err.Error(), true)
		return nil
	}
	m.takeLease(msg.lease)
	m.addNote("The other jarvis has let go of this session: it is opened again with what it added. enter sends your message.", false)
	return m.loadSession(msg.id)
}

// acceptFork is ctrl+p on a session held elsewhere: go on in a fork.
func (m *model) acceptFork() (tea.Cmd, bool) {
	if m.lease.elsewhere == nil {
		return nil, false
	}
	return m.fork(), true
}
