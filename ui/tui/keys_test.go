package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
)

func TestPageKeysScrollTheFocusedPane(t *testing.T) {
	m := newTestModel(t, 140, 32)
	send(m, "/tools calculator,think,file_read,http_request,web_search,llm,repl") // a long description
	longTranscript(t, m, 100)
	press(m, "ctrl+t")
	press(m, "tab")
	if !m.pane.Focused() {
		t.Fatal("tab did not focus the pane")
	}
	before := screen(t, m)
	press(m, "pgdown")
	if m.tools.DescScroll() == 0 || screen(t, m) == before {
		t.Fatal("pgdown did not scroll the tool descriptions")
	}
	descPage := m.tools.Page()
	if m.tools.DescScroll() != descPage {
		t.Fatalf("pgdown: description at %d, want a page (%d)", m.tools.DescScroll(), descPage)
	}
	press(m, "ctrl+u")
	if m.tools.DescScroll() != descPage-descPage/2 {
		t.Fatalf("ctrl+u: description at %d, want %d", m.tools.DescScroll(), descPage-descPage/2)
	}
	for i := 0; i < 100; i++ {
		press(m, "pgdown")
	}
	end := m.tools.DescScroll()
	press(m, "pgup")
	if m.tools.DescScroll() >= end {
		t.Fatal("pgup after the end did not move: the position ran past the end")
	}
	if !m.transcript.atBottom() {
		t.Fatal("the transcript scrolled while the pane had focus")
	}

	// The Events tab scrolls its log the same way.
	for i := 0; i < 200; i++ {
		m.log.Record(events.Event{Type: events.Notice, Time: testTime, Text: fmt.Sprintf("event %d", i)})
	}
	press(m, "f4")
	press(m, "pgup")
	if m.log.Scroll() == 0 || strings.Contains(screen(t, m), "event 199") {
		t.Fatal("pgup did not scroll the event log")
	}
	page := m.log.Page()
	if m.log.Scroll() != page {
		t.Fatalf("pgup: log at %d, want a page (%d)", m.log.Scroll(), page)
	}
	press(m, "ctrl+d")
	if m.log.Scroll() != page-page/2 {
		t.Fatalf("ctrl+d: log at %d, want %d", m.log.Scroll(), page-page/2)
	}
	press(m, "ctrl+d")
	press(m, "ctrl+d")
	if m.log.Scroll() != 0 || !strings.Contains(screen(t, m), "event 199") {
		t.Fatalf("ctrl+d did not return to the newest event (scroll %d)", m.log.Scroll())
	}

	// Without focus the same keys scroll the transcript.
	press(m, "tab")
	press(m, "pgup")
	if m.transcript.atBottom() {
		t.Fatal("pgup without pane focus did not scroll the transcript")
	}
}

func TestViewDoesNotMoveScrollPositions(t *testing.T) {
	m := newTestModel(t, 140, 32)
	press(m, "ctrl+t")
	m.tools.SetCursor(999)
	m.tools.SetDescScroll(999)
	screen(t, m)
	press(m, "f4")
	m.log.SetScroll(999)
	screen(t, m)
	if m.tools.Cursor() != 999 || m.tools.DescScroll() != 999 || m.log.Scroll() != 999 {
		t.Fatalf("View clamped the pane: cursor %d, description %d, log %d", m.tools.Cursor(), m.tools.DescScroll(), m.log.Scroll())
	}
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 32})
	if m.tools.Cursor() == 999 || m.tools.DescScroll() == 999 || m.log.Scroll() == 999 {
		t.Fatal("a resize did not clamp the pane's positions")
	}
}

// ctrlCIn puts a model in each place ctrl+c used to quit from at once.
var ctrlCIn = map[string]func(*model){
	"help":      func(m *model) { press(m, "?") },
	"sessions":  func(m *model) { m.Update(sessionListMsg{list: []SessionSummary{{ID: "s1", Title: "old"}}}) },
	"too small": func(m *model) { m.Update(tea.WindowSizeMsg{Width: 40, Height: 10}) },
	"prompt":    func(m *model) {},
}

func TestCtrlCCancelsTheRunEverywhere(t *testing.T) {
	for where, open := range ctrlCIn {
		t.Run(where, func(t *testing.T) {
			m := newTestModel(t, 100, 30)
			fakeRun(m, "long question")
			cancelled := false
			m.run.cancel = func() { cancelled = true }
			open(m)
			if quits(press(m, "ctrl+c")) {
				t.Fatal("ctrl+c quit with a turn running")
			}
			if !cancelled {
				t.Fatal("ctrl+c did not cancel the running turn")
			}
		})
	}
}

func TestCtrlCQuitsOnlyWhenPressedTwice(t *testing.T) {
	for where, open := range ctrlCIn {
		t.Run(where, func(t *testing.T) {
			m := newTestModel(t, 100, 30)
			open(m)
			if quits(press(m, "ctrl+c")) {
				t.Fatal("one ctrl+c quit")
			}
			if !strings.Contains(screen(t, m), "press ctrl+c again") {
				t.Fatalf("the first ctrl+c does not say what the second does:\n%s", screen(t, m))
			}
			if !quits(press(m, "ctrl+c")) {
				t.Fatal("the second ctrl+c did not quit")
			}
		})
	}
}

func TestQuitCommandCancelsARunningTurnFirst(t *testing.T) {
	m := newTestModel(t, 100, 30)
	fakeRun(m, "long question")
	cancelled := false
	m.run.cancel = func() { cancelled = true }
	if quits(send(m, "/quit")) || !cancelled {
		t.Fatalf("/quit during a turn: quit without cancelling (cancelled %v)", cancelled)
	}
	if !strings.Contains(screen(t, m), "/quit again") {
		t.Fatalf("the note does not say how to leave:\n%s", screen(t, m))
	}
	if !quits(send(m, "/quit")) {
		t.Fatal("/quit while the turn is cancelling did not quit")
	}
	idle := newTestModel(t, 100, 30)
	if !quits(send(idle, "/quit")) {
		t.Fatal("/quit on an idle prompt did not quit")
	}
}

func TestStatusMessagesClearThemselves(t *testing.T) {
	m := newTestModel(t, 100, 30)
	press(m, "ctrl+y") // nothing to copy yet
	first := m.statusSeq
	if !strings.Contains(screen(t, m), "nothing to copy yet") {
		t.Fatal("no status message")
	}
	m.Update(statusMsg("copied 3 characters"))
	m.Update(statusClearMsg{id: first}) // the first message's timer
	if !strings.Contains(screen(t, m), "copied 3 characters") {
		t.Fatal("an older message's timer cleared a newer message")
	}
	m.Update(statusClearMsg{id: m.statusSeq})
	if s := screen(t, m); strings.Contains(s, "copied") || !strings.Contains(s, "ready") {
		t.Fatalf("the status message did not clear:\n%s", s)
	}
	// The clearing tick is a real timer, not an immediate message.
	cmd := m.setStatus("x")
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case <-done:
		t.Fatal("the status cleared at once")
	case <-time.After(50 * time.Millisecond):
	}
}

// ctrl+c clears the prompt when no turn runs, as the help says; what it
// held is one ↑ away, and quitting takes two more.
func TestCtrlCClearsThePrompt(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a question I changed my mind about")})
	if quits(press(m, "ctrl+c")) {
		t.Fatal("ctrl+c with text in the prompt quit")
	}
	if v := m.input.value(); v != "" {
		t.Fatalf("the prompt still holds %q", v)
	}
	if s := screen(t, m); strings.Contains(s, "press ctrl+c again") {
		t.Fatalf("clearing the prompt armed the quit:\n%s", s)
	}
	press(m, "up")
	if v := m.input.value(); v != "a question I changed my mind about" {
		t.Fatalf("↑ after clearing gives %q", v)
	}
	m.input.reset()
	m.showHelp()
	if s := screen(t, m); !strings.Contains(s, "clear the prompt") {
		t.Fatalf("the help does not say which key clears the prompt:\n%s", s)
	}
}

// What is typed or pasted while the screen is too small waits in the
// prompt, and enter sends nothing unseen; the screen says it waits.
func TestTypingOnATooSmallScreenWaitsInThePrompt(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a long ")})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("pasted text"), Paste: true})
	if cmd := press(m, "enter"); cmd != nil || m.run.active {
		t.Fatal("enter on the too-small screen sent the prompt")
	}
	if !strings.Contains(m.View(), "What you typed waits in the prompt") {
		t.Fatalf("the too-small screen does not say the text waits:\n%s", m.View())
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if got := m.input.value(); got != "a long pasted text" {
		t.Fatalf("the prompt holds %q after the screen grew", got)
	}
}
