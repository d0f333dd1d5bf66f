package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// pastedRows is a paste of ten lines.
func pastedRows() string {
	var rows []string
	for i := 1; i <= 10; i++ {
		rows = append(rows, fmt.Sprintf("row-%02d", i))
	}
	return strings.Join(rows, "\n")
}

// After a bracketed paste the prompt shows the lines around the cursor
// (the end of the paste), not the paste's first lines.
func TestPastedLinesScrollTheQuestionToTheCursor(t *testing.T) {
	m := newTestModel(t, 100, 24)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(pastedRows()), Paste: true})
	v := screen(t, m)
	prompt := strings.Join(strings.Split(v, "\n")[m.height-1-m.input.ta.Height():m.height-1], "\n")
	if !strings.Contains(prompt, "row-10") || strings.Contains(prompt, "row-01") {
		t.Fatalf("the prompt shows\n%s\nwant the last rows of the paste, where the cursor is", prompt)
	}
	// A long prompt recalled from the history ends at its cursor too.
	m.input.remember(pastedRows())
	m.input.reset()
	press(m, "up")
	v = screen(t, m)
	prompt = strings.Join(strings.Split(v, "\n")[m.height-1-m.input.ta.Height():m.height-1], "\n")
	if !strings.Contains(prompt, "row-10") {
		t.Fatalf("the recalled prompt shows\n%s\nwant its last rows", prompt)
	}
}
