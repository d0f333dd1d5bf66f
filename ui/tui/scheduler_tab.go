package tui

// SchedulerView is what the Scheduler tab shows and drives.
type SchedulerView interface{}

// schedulerLines is the Scheduler tab's content.
func (m *model) schedulerLines(width int) []string {
	return []string{m.st.muted.Render("The scheduler is not running in this session.")}
}
