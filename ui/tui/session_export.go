package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/history"
)

// /export writes the session as markdown, its images in a directory
// beside it, as app/history writes every export (`jarvis sessions
// export` too): without a path to the exports directory under the data
// directory, never replacing a file.

// export writes the session as markdown (see the top of this file).
func (m *model) export(arg string) tea.Cmd {
	if m.opts.Sessions == nil || m.sessionID == "" {
		m.addNote("Nothing to export yet: the session has no saved messages.", true)
		return nil
	}
	store, id, now := m.opts.Sessions, m.sessionID, m.now()
	return func() tea.Msg {
		path, err := history.ExportPath(arg, id, now)
		if err != nil {
			return noticeMsg{text: "Export failed: " + explain(err), isErr: true}
		}
		res, err := store.Export(id, path)
		if err != nil {
			return noticeMsg{text: "Export failed: " + explain(err), isErr: true}
		}
		return noticeMsg{text: history.ExportedText(res)}
	}
}
