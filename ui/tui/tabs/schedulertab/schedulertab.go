// Package schedulertab is the side pane's Scheduler tab: package schedtab
// (the task table, its form and logs) behind the pane's interface, and
// a line saying so when the scheduler does not run in this session.
package schedulertab

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/schedtab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
)

// Tab is the Scheduler tab.
type Tab struct {
	s   *schedtab.Tab // nil: the scheduler does not run
	now func() time.Time
}

// New makes the tab over s (nil when the scheduler does not run); now is
// the workbench's clock.
func New(s *schedtab.Tab, now func() time.Time) *Tab { return &Tab{s: s, now: now} }

// Title is the tab's name.
func (t *Tab) Title() string { return "Scheduler" }

// Hint is the tab's keys.
func (t *Tab) Hint() string {
	return "n new · p pause · r resume · x cancel · ⏎/g run now · l logs · f: hide finished"
}

// Init loads the tasks and starts watching them.
func (t *Tab) Init() tea.Cmd {
	if t.s == nil {
		return nil
	}
	return t.s.Init()
}

// Close stops the watch and the runs started from the tab.
func (t *Tab) Close() {
	if t.s != nil {
		t.s.Close()
	}
}

// Update passes the scheduler's events and the tab's own messages on, and
// starts the clock of relative times when the tab is shown.
func (t *Tab) Update(msg tea.Msg) tea.Cmd {
	if t.s == nil {
		return nil
	}
	switch msg := msg.(type) {
	case events.Event:
		if msg.Task == nil {
			return nil
		}
		return t.s.OnEvent(msg)
	case tabs.Shown:
		return t.s.Shown(msg.At)
	case tabs.Size, tabs.Focus, tabs.Refresh:
		return nil
	}
	cmd, _ := t.s.Update(msg)
	return cmd
}

// Key is the table's keys (and the open modal's).
func (t *Tab) Key(k tea.KeyMsg) tea.Cmd {
	if t.s == nil {
		return nil
	}
	return t.s.Key(k, t.now())
}

// Changes reports the keys that change what may run: pause, resume,
// cancel, run now.
func (t *Tab) Changes(k tea.KeyMsg) bool {
	if t.s == nil {
		return false
	}
	switch k.String() {
	case "p", "r", "x", "g", "enter":
		return true
	}
	return false
}

// ModalOpen reports whether the form, a confirmation or a log is open.
func (t *Tab) ModalOpen() bool { return t.s != nil && t.s.ModalOpen() }

// ModalView is the open modal's box.
func (t *Tab) ModalView(st look.Styles, width, height int) (string, bool) {
	if t.s == nil {
		return "", false
	}
	return t.s.Modal(styles(st), width, height, t.now())
}

// View is the table.
func (t *Tab) View(st look.Styles, width, height int) []string {
	if t.s == nil {
		return []string{st.Muted.Render("The scheduler is not running in this session.")}
	}
	return t.s.View(styles(st), width, height, t.now())
}

// styles are the styles schedtab draws with.
func styles(st look.Styles) schedtab.Styles {
	return schedtab.Styles{
		Text: st.Text, Muted: st.Muted, Accent: st.Accent,
		Success: st.Success, Error: st.Error, Warning: st.Warning, Cancelled: st.Cancelled,
		Selection: st.Selection, DialogTitle: st.DialogTitle, DialogBorder: st.DialogBorder,
	}
}
