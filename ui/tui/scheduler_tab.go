package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
)

// SchedulerView is the scheduler the TUI runs and shows in its Scheduler tab.
type SchedulerView = *scheduler.Scheduler

// The model talks to the Scheduler tab through these methods of *schedTab
// (schedtab.go):
//
//	newSchedTab(s *scheduler.Scheduler, validate func(agent string, tools []string) error, toolNames func() []string) *schedTab
//	(t *schedTab) init() tea.Cmd                         // first load and live updates
//	(t *schedTab) view(st *styles, width, height int, now time.Time) []string
//	(t *schedTab) modal(st *styles, width, height int, now time.Time) (string, bool)
//	(t *schedTab) key(k tea.KeyMsg, now time.Time) tea.Cmd  // pane focused on the tab, or a modal open
//	(t *schedTab) update(msg tea.Msg) (tea.Cmd, bool)      // its own messages; false: not one of them
//	(t *schedTab) onEvent(e events.Event) tea.Cmd          // scheduler_task_start / _end
//	(t *schedTab) modalOpen() bool

// schedulerLines is the Scheduler tab's content.
func (m *model) schedulerLines(width, height int) []string {
	if m.sched == nil {
		return []string{m.st.muted.Render("The scheduler is not running in this session.")}
	}
	return m.sched.view(m.st, width, height, m.now())
}

// schedEvent passes scheduler events to the tab.
func (m *model) schedEvent(e events.Event) tea.Cmd {
	if m.sched == nil || e.Task == nil {
		return nil
	}
	return m.sched.onEvent(e)
}
