package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The Tools tab's key hint shows every key whole at 120 columns (and at
// the narrowest pane), wrapped between keys rather than cut.
func TestToolsHintFitsThePane(t *testing.T) {
	for _, width := range []int{120, MinWidth} {
		m := newTestModel(t, width, 40)
		m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
		s := screen(t, m)
		for _, k := range toolsKeys {
			if !strings.Contains(s, k) {
				t.Errorf("at %d columns the Tools tab lacks %q:\n%s", width, k, s)
			}
		}
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "tab: focus") && strings.Contains(l, "…") {
				t.Errorf("at %d columns the hint is cut: %q", width, l)
			}
		}
	}
}
