package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
)

// probeTab is a tab as a new one is written: its own type, and a line in
// newPane.
type probeTab struct {
	keys    []string
	notices []string
	focused bool
}

func (p *probeTab) Title() string { return "Probe" }
func (p *probeTab) Hint() string  { return "z: zap" }
func (p *probeTab) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case events.Event:
		if msg.Type == events.Notice {
			p.notices = append(p.notices, msg.Text)
		}
	case tabs.Focus:
		p.focused = msg.Focused
	}
	return nil
}
func (p *probeTab) Key(k tea.KeyMsg) tea.Cmd { p.keys = append(p.keys, k.String()); return nil }
func (p *probeTab) View(st look.Styles, width, height int) []string {
	out := []string{st.Text.Render("probe sees " + strings.Join(p.notices, ","))}
	if p.focused {
		out = append(out, st.Muted.Render(p.Hint()))
	}
	return out
}

// A tab added to the pane is on its F-key, in the tab bar and the help,
// gets the bus's events, the focus and the keys: the workbench needs
// nothing else of it.
func TestATabAddedToThePaneIsDrivenByTheWorkbench(t *testing.T) {
	m := newTestModel(t, 140, 36)
	p := &probeTab{}
	m.pane = tabs.NewPane(append(m.pane.Tabs(), p)...) // the line in newPane
	m.layout()

	m.Update(tea.KeyMsg{Type: tea.KeyF7})
	if !m.pane.Visible || m.pane.Current() != p {
		t.Fatalf("F7 did not show the added tab (visible %v)", m.pane.Visible)
	}
	m.Update(eventsMsg{{Type: events.Notice, Time: testTime, Text: "hello"}})
	s := screen(t, m)
	if !strings.Contains(s, " Probe ") || !strings.Contains(s, "probe sees hello") {
		t.Fatalf("the tab is not on screen with the event:\n%s", s)
	}
	press(m, "tab")
	if !m.pane.Focused() || !p.focused || !strings.Contains(screen(t, m), "z: zap") {
		t.Fatal("tab did not focus the added tab")
	}
	press(m, "down")
	press(m, "home")
	m.Update(tea.KeyMsg{Type: tea.KeyUp, Alt: true}) // not the transcript's selection while the pane has focus
	if strings.Join(p.keys, ",") != "down,home,alt+up" || m.convo.selected != nil {
		t.Fatalf("the tab got the keys %v, want down,home,alt+up", p.keys)
	}
	if !strings.Contains(screen(t, m), "probe sees hello") || !m.transcript.atBottom() {
		t.Fatal("the keys moved the transcript instead of reaching the tab")
	}
	press(m, "tab")
	press(m, "?")
	press(m, "pgdown")
	if s := readable(screen(t, m)); !strings.Contains(s, "F7Probe") || !strings.Contains(s, "z:zap") || !strings.Contains(s, "F3Tools") {
		t.Fatalf("the help does not list the added tab's key:\n%s", screen(t, m))
	}
}
