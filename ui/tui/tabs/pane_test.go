package tabs_test

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
)

// probe is a tab written the way a new one is: a type with the Tab
// methods, given to the pane in one line.
type probe struct {
	title   string
	keys    []string
	events  int
	shown   int
	focused bool
	size    tabs.Size
}

func (p *probe) Title() string { return p.title }
func (p *probe) Hint() string  { return "x: count" }
func (p *probe) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case events.Event:
		p.events++
	case tabs.Shown:
		p.shown++
	case tabs.Focus:
		p.focused = msg.Focused
	case tabs.Size:
		p.size = msg
	}
	return nil
}
func (p *probe) Key(k tea.KeyMsg) tea.Cmd {
	p.keys = append(p.keys, k.String())
	return nil
}
func (p *probe) View(st look.Styles, width, height int) []string {
	body := []string{p.title + " body", "keys " + strings.Join(p.keys, ",")}
	if p.focused {
		body = append(body, p.Hint())
	}
	return body
}

func styles(t *testing.T) look.Styles {
	th, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	return look.Of(th)
}

func TestANewTabIsALine(t *testing.T) {
	first, added := &probe{title: "First"}, &probe{title: "Probe"}
	p := tabs.NewPane(first, added) // the one line
	now := time.Unix(0, 0)
	p.Resize(40, 12)
	if added.size != (tabs.Size{Width: 39, Height: 11}) {
		t.Fatalf("the tab was given %+v, want the pane less its bar and a column", added.size)
	}

	if i, ok := p.FKey("f4"); !ok || i != 1 {
		t.Fatalf("f4 selects %d (%v), want the second tab", i, ok)
	}
	if k := p.KeyOf(added); k != "F4" {
		t.Fatalf("the added tab's key is written %q, want F4", k)
	}
	if _, ok := p.FKey("f5"); ok {
		t.Fatal("f5 selects a tab the pane does not have")
	}
	if _, ok := p.FKey("f44"); ok {
		t.Fatal("f44 selects a tab")
	}
	p.Show(true, now)
	i, _ := p.FKey("f4")
	p.Select(i, now)
	if p.Current() != added || !p.Showing(added) || added.shown != 1 {
		t.Fatalf("F4 did not show the added tab (current %q, shown %d)", p.Current().Title(), added.shown)
	}
	view := p.View(styles(t), 40, 12)
	if len(view) != 12 {
		t.Fatalf("the pane drew %d lines, want 12", len(view))
	}
	for _, l := range view {
		if w := ansi.StringWidth(l); w != 40 {
			t.Fatalf("a line is %d cells, want 40: %q", w, l)
		}
	}
	s := ansi.Strip(strings.Join(view, "\n"))
	if !strings.Contains(s, "First") || !strings.Contains(s, "Probe") || !strings.Contains(s, "Probe body") {
		t.Fatalf("the pane does not show the tab bar and the tab:\n%s", s)
	}

	p.Focus(true)
	if !added.focused || !strings.Contains(ansi.Strip(strings.Join(p.View(styles(t), 40, 12), "\n")), "x: count") {
		t.Fatal("the tab was not told it has the focus")
	}
	p.Key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")}, now)
	p.Key(tea.KeyMsg{Type: tea.KeyDown}, now)
	if strings.Join(added.keys, ",") != "x,down" || len(first.keys) != 0 {
		t.Fatalf("keys reached %v (the first tab %v), want x,down on the added tab", added.keys, first.keys)
	}
	p.Key(tea.KeyMsg{Type: tea.KeyRight}, now)
	if p.Current() != first {
		t.Fatal("right did not move on, round to the first tab")
	}
	p.Key(tea.KeyMsg{Type: tea.KeyTab}, now)
	if p.Focused() || added.focused {
		t.Fatal("tab did not give the focus back")
	}
	p.Update(events.Event{Type: events.Notice, Text: "hello"})
	if added.events != 1 || first.events != 1 {
		t.Fatalf("an event reached the tabs %d and %d times, want once each", first.events, added.events)
	}
	if p.Changes(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")}) {
		t.Fatal("a tab that is not Guarded has keys that change what may run")
	}
}
