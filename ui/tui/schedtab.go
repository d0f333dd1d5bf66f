package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent/events"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
)

// schedTab is the Scheduler tab. (Being written: this is its interface.)
type schedTab struct {
	s *scheduler.Scheduler
}

func newSchedTab(s *scheduler.Scheduler, validate func(agent string, tools []string) error, toolNames func() []string) *schedTab {
	return &schedTab{s: s}
}

func (t *schedTab) init() tea.Cmd { return nil }
func (t *schedTab) view(st *styles, width, height int, now time.Time) []string {
	return []string{st.muted.Render("Scheduler tab")}
}
func (t *schedTab) modal(st *styles, width, height int, now time.Time) (string, bool) {
	return "", false
}
func (t *schedTab) key(k tea.KeyMsg, now time.Time) tea.Cmd { return nil }
func (t *schedTab) update(msg tea.Msg) (tea.Cmd, bool)      { return nil, false }
func (t *schedTab) onEvent(e events.Event) tea.Cmd          { return nil }
func (t *schedTab) modalOpen() bool                         { return false }
