package tui

import (
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// sessionMessages is how many messages the store holds for session id.
func sessionMessages(t *testing.T, l *live, id string) int {
	t.Helper()
	s, _, err := l.m.opts.Sessions.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

// Two workbenches on one session: the second says the session is open
// in the first, writes nothing to it (the question stays in its prompt),
// and goes on in a fork of it with ctrl+p. Once the first lets go, the
// second can open it and write to it.
func TestASessionOpenElsewhereIsNotWrittenAndOffersAFork(t *testing.T) {
	srv := fakeServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	first := newLive(t, srv, dbPath, false)
	first.do(first.m.Init())
	first.typeLine("What is 15% of 340?")
	id := first.m.sessionID
	if id == "" || first.m.lease.held == nil || first.m.lease.held.ID() != id {
		t.Fatalf("the first workbench does not hold its new session %q", id)
	}

	second := newLiveAlongside(t, srv, dbPath, true)
	second.update(tea.WindowSizeMsg{Width: 160, Height: 40})
	second.do(second.m.Init())
	s := second.screen()
	for _, want := range []string{"is open in another jarvis (the workbench, pid", "ctrl+p (or /fork) goes on in a fork", "open elsewhere", "15% of 340 is 51."} {
		if !strings.Contains(s, want) {
			t.Errorf("the second workbench's screen lacks %q:\n%s", want, s)
		}
	}
	chats, stored := len(srv.Chats()), sessionMessages(t, second, id)

	second.typeLine("And 20% of it?")
	if got := second.m.input.value(); got != "And 20% of it?" {
		t.Errorf("the question left the prompt: %q", got)
	}
	if !strings.Contains(lastNote(second.m), "so nothing was sent") {
		t.Errorf("sending said %q", lastNote(second.m))
	}
	second.m.input.reset()
	second.typeLine("/retry")
	second.typeLine("/compact")
	second.m.opts.Sessions.(storeAdapter).flush()
	if n := len(srv.Chats()); n != chats {
		t.Errorf("%d requests reached the server from a session open elsewhere", n-chats)
	}
	if n := sessionMessages(t, first, id); n != stored {
		t.Errorf("the session open elsewhere went from %d to %d messages", stored, n)
	}

	// ctrl+p: a fork of it, held here, takes the question.
	second.update(tea.KeyMsg{Type: tea.KeyCtrlP})
	fork := second.m.sessionID
	if fork == id || fork == "" || second.m.lease.elsewhere != nil || second.m.lease.held == nil || second.m.lease.held.ID() != fork {
		t.Fatalf("ctrl+p did not go on in a held fork: session %q (was %q)", fork, id)
	}
	second.typeLine("And 20% of it?")
	if n := len(srv.Chats()); n != chats+1 {
		t.Fatalf("the fork did not send the question (%d requests)", n-chats)
	}
	if n := sessionMessages(t, first, id); n != stored {
		t.Errorf("the fork's turn was written to the session it came from: %d messages, had %d", n, stored)
	}

	// The first lets go (/new): the session opens for writing now.
	first.typeLine("/new")
	second.typeLine("/sessions " + id)
	if second.m.sessionID != id || second.m.lease.elsewhere != nil || second.m.lease.held == nil || second.m.lease.held.ID() != id {
		t.Fatalf("after the first let go, the second does not hold the session (%q)", second.m.sessionID)
	}
	if strings.Contains(second.screen(), "open elsewhere") {
		t.Errorf("the header still says the session is open elsewhere:\n%s", second.screen())
	}
}

// A workbench on a session held elsewhere finds out when it is let go:
// sending reopens it with what the other added, and the question, kept
// in the prompt, goes with the next enter.
func TestASessionLetGoIsReopenedWithWhatTheOtherAdded(t *testing.T) {
	srv := fakeServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	first := newLive(t, srv, dbPath, false)
	first.do(first.m.Init())
	first.typeLine("What is 15% of 340?")
	id := first.m.sessionID

	second := newLiveAlongside(t, srv, dbPath, true)
	second.do(second.m.Init())
	if second.m.lease.elsewhere == nil {
		t.Fatal("the session is not held elsewhere for the second workbench")
	}
	first.typeLine("thanks")
	first.m.opts.Sessions.(storeAdapter).flush()
	first.typeLine("/new")

	second.typeLine("one more question")
	if second.m.lease.elsewhere != nil || second.m.lease.held == nil || second.m.lease.held.ID() != id {
		t.Fatal("the second workbench did not take the session let go")
	}
	if !strings.Contains(second.screen(), "thanks") {
		t.Errorf("the session was not reopened with what the other added:\n%s", second.screen())
	}
	if got := second.m.input.value(); got != "one more question" {
		t.Fatalf("the prompt holds %q", got)
	}
	before := sessionMessages(t, second, id)
	second.update(tea.KeyMsg{Type: tea.KeyEnter})
	second.m.opts.Sessions.(storeAdapter).flush()
	if n := sessionMessages(t, second, id); n <= before {
		t.Errorf("the question was not written to the session: %d messages, had %d", n, before)
	}
}
