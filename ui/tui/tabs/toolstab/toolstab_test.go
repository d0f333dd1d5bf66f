package toolstab

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
)

// fakeHost lists rows and records what the tab asks of it.
type fakeHost struct {
	rows    []Row
	toggled []string
	asked   []string
}

func (h *fakeHost) Rows() []Row { return h.rows }
func (h *fakeHost) Describe(category, cost bool) string {
	return "the tools, category " + map[bool]string{true: "on", false: "off"}[category]
}
func (h *fakeHost) Toggle(name string) tea.Cmd    { h.toggled = append(h.toggled, name); return nil }
func (h *fakeHost) AskAlways(name string) tea.Cmd { h.asked = append(h.asked, name); return nil }

func key(s string) tea.KeyMsg {
	switch s {
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case " ":
		return tea.KeyMsg{Type: tea.KeySpace}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// The tab acts on the row under its cursor through its host (space on a
// server's header row toggles all its tools; A never acts on it), keeps
// its cursor on the list when the list shrinks, and says which of its
// keys change what may run.
func TestTheToolsTabActsThroughItsHost(t *testing.T) {
	h := &fakeHost{rows: []Row{{Name: "calculator", Enabled: true}, {Name: "srv · ready", Header: true, OK: true, Pattern: "srv__*"}, {Name: "srv__fetch"}}}
	tab := New(h)
	tab.Update(tabs.Size{Width: 40, Height: 20})
	tab.Key(key(" "))
	tab.Key(key("down"))
	tab.Key(key(" ")) // the header
	tab.Key(key("A"))
	tab.Key(key("down"))
	tab.Key(key("A"))
	if strings.Join(h.toggled, ",") != "calculator,srv__*" || strings.Join(h.asked, ",") != "srv__fetch" {
		t.Fatalf("toggled %v, asked %v; want calculator and srv__* toggled and srv__fetch asked", h.toggled, h.asked)
	}
	for _, k := range []string{" ", "A"} {
		if !tab.Changes(key(k)) {
			t.Errorf("%q does not count as a change", k)
		}
	}
	if tab.Changes(key("c")) || tab.Changes(key("down")) {
		t.Error("c or ↓ counts as a change of what may run")
	}
	h.rows = h.rows[:1]
	tab.Update(tabs.Refresh{Visible: true, Showing: true})
	if tab.Cursor() != 0 {
		t.Fatalf("the cursor stayed at %d on a list of one", tab.Cursor())
	}

	th, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	tab.Update(tabs.Focus{Focused: true})
	tab.Key(key("c"))
	view := ansi.Strip(strings.Join(tab.View(look.Of(th), 40, 20), "\n"))
	for _, want := range []string{"[x] calculator", "space: on/off", "category off"} {
		if !strings.Contains(view, want) {
			t.Errorf("the tab lacks %q:\n%s", want, view)
		}
	}
	tab.Ask(&Question{Text: "Always allow calculator? y yes · n no"})
	if view := ansi.Strip(strings.Join(tab.View(look.Of(th), 40, 20), "\n")); !strings.Contains(view, "Always allow calculator?") || strings.Contains(view, "space: on/off") {
		t.Errorf("the question does not stand in place of the hint:\n%s", view)
	}
}
