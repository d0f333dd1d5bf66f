package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The prompt's own commands come back to it tagged, a batch command by
// command: Bubble Tea runs a batch only as a tea.BatchMsg, so the batch
// itself must stay one.
func TestForInputTagsWhatThePromptsCommandsSay(t *testing.T) {
	if forInput(nil) != nil {
		t.Error("no command became one")
	}
	type pasted string
	msg := forInput(func() tea.Msg { return pasted("hello") })()
	if got, ok := msg.(inputResult); !ok || got.msg != pasted("hello") {
		t.Fatalf("a command's message came back as %#v", msg)
	}
	if msg := forInput(func() tea.Msg { return nil })(); msg != nil {
		t.Errorf("a command with nothing to say said %#v", msg)
	}
	batch, ok := forInput(tea.Batch(func() tea.Msg { return pasted("a") }, func() tea.Msg { return pasted("b") }))().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("a batch came back as %#v", batch)
	}
	for i, want := range []pasted{"a", "b"} {
		if got, ok := batch[i]().(inputResult); !ok || got.msg != want {
			t.Errorf("the batch's command %d said %#v", i, got)
		}
	}
}
