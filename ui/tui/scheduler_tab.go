package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/tui/schedtab"
)

// SchedulerView is the scheduler the TUI runs and shows in its Scheduler tab.
type SchedulerView = *scheduler.Scheduler

// The Scheduler tab is package schedtab: a component the model owns and
// calls (Init, Update with the tab's own messages, Key while the pane is
// focused on it or one of its modals is open, View and Modal when drawing,
// OnEvent for scheduler events, Shown when the tab comes on screen, Close
// at the end). It does its IO in commands, like the rest of the TUI.

// schedulerLines is the Scheduler tab's content.
func (m *model) schedulerLines(width, height int) []string {
	if m.sched == nil {
		return []string{m.st.muted.Render("The scheduler is not running in this session.")}
	}
	return m.sched.View(m.st.sched(), width, height, m.now())
}

// schedEvent passes scheduler events to the tab.
func (m *model) schedEvent(e events.Event) tea.Cmd {
	if m.sched == nil || e.Task == nil {
		return nil
	}
	return m.sched.OnEvent(e)
}

// sched returns the styles the Scheduler tab draws with.
func (st *styles) sched() schedtab.Styles {
	return schedtab.Styles{
		Text: st.text, Muted: st.muted, Accent: st.accent,
		Success: st.success, Error: st.errorText, Warning: st.warning, Cancelled: st.cancelled,
		Selection: st.selection, DialogTitle: st.dialogTitle, DialogBorder: st.dialogBorder,
	}
}
