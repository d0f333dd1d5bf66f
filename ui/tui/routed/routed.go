// Package routed brings the messages of a component's own commands back
// to that component. bubbles' text inputs and areas answer their commands
// (a paste from the system clipboard) with messages of unexported types,
// which a workbench that routes messages by type would hand to whoever
// takes the rest; tagged, they find their way home.
package routed

import tea "github.com/charmbracelet/bubbletea"

// Tag returns cmd with the message it produces passed through wrap (nil
// stays nil). A batch's commands are tagged one by one, since Bubble Tea
// runs a batch only as a tea.BatchMsg.
func Tag(cmd tea.Cmd, wrap func(tea.Msg) tea.Msg) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		switch msg := cmd().(type) {
		case nil:
			return nil
		case tea.BatchMsg:
			out := make(tea.BatchMsg, 0, len(msg))
			for _, c := range msg {
				if c != nil {
					out = append(out, Tag(c, wrap))
				}
			}
			return out
		default:
			return wrap(msg)
		}
	}
}
