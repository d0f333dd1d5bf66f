package schedtab

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/jarvis-workbench/jarvis/themes"
)

// Styles are the theme's styles the tab draws with. The TUI passes them to
// View and Modal on every frame, so a change of theme needs no call.
type Styles struct {
	Text, Muted, Accent                lipgloss.Style
	Success, Error, Warning, Cancelled lipgloss.Style
	Selection, DialogTitle             lipgloss.Style
	DialogBorder                       lipgloss.TerminalColor
}

// StylesOf takes the tab's styles from a theme.
func StylesOf(t themes.Theme) Styles {
	s := t.Styles
	return Styles{
		Text: s.Text, Muted: s.Muted, Accent: s.Accent,
		Success: s.Success, Error: s.Error, Warning: s.Warning, Cancelled: s.Cancelled,
		Selection: s.Selection, DialogTitle: s.DialogTitle, DialogBorder: t.Colors.DialogBorder,
	}
}

// shortID is the first eight characters of a task id, as the table shows
// it; any unique prefix works wherever an id is asked for.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
