package routed

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

type tagged struct{ msg tea.Msg }

func wrap(m tea.Msg) tea.Msg { return tagged{m} }

// A command's message comes back tagged, a batch command by command:
// Bubble Tea runs a batch only as a tea.BatchMsg, so the batch itself
// must stay one.
func TestTagWrapsWhatACommandSays(t *testing.T) {
	if Tag(nil, wrap) != nil {
		t.Error("no command became one")
	}
	type pasted string
	if msg := Tag(func() tea.Msg { return pasted("hello") }, wrap)(); msg != (tagged{pasted("hello")}) {
		t.Fatalf("a command's message came back as %#v", msg)
	}
	if msg := Tag(func() tea.Msg { return nil }, wrap)(); msg != nil {
		t.Errorf("a command with nothing to say said %#v", msg)
	}
	batch, ok := Tag(tea.Batch(func() tea.Msg { return pasted("a") }, func() tea.Msg { return pasted("b") }), wrap)().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("a batch came back as %#v", batch)
	}
	for i, want := range []pasted{"a", "b"} {
		if got := batch[i](); got != (tagged{want}) {
			t.Errorf("the batch's command %d said %#v", i, got)
		}
	}
}
