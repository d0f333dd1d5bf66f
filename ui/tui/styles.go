package tui

import (
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"

	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
)

// styles are the lipgloss styles the TUI draws with, taken from the theme
// (again when /theme changes it). name keys the rendering caches.
type styles struct {
	name string

	text, muted, accent, user, assistant, thinking          lipgloss.Style
	success, errorText, warning, denied, timeout, cancelled lipgloss.Style

	header, headerKey, status         lipgloss.Style
	border, dialogBorder              lipgloss.TerminalColor
	panelTitle                        lipgloss.Style
	dialogTitle                       lipgloss.Style
	tabActive, tabInactive, selection lipgloss.Style

	// look is the same styles for the components (the pane's tabs).
	look look.Styles
}

func newStyles(t themes.Theme) *styles {
	s := t.Styles
	return &styles{
		name: t.Name,
		text: s.Text, muted: s.Muted, accent: s.Accent, user: s.User, assistant: s.Assistant, thinking: s.Thinking,
		success: s.Success, errorText: s.Error, warning: s.Warning, denied: s.Denied, timeout: s.Timeout, cancelled: s.Cancelled,
		header: s.Header, headerKey: s.HeaderKey, status: s.Status,
		border: t.Colors.Border, dialogBorder: t.Colors.DialogBorder,
		panelTitle: s.PanelTitle, dialogTitle: s.DialogTitle,
		tabActive: s.TabActive, tabInactive: s.TabInactive, selection: s.Selection,
		look: look.Of(t),
	}
}

// loadTheme returns the styles and markdown renderer of a theme. The name
// must already be resolved or resolvable without asking the terminal
// (themes.Detect ran before the program started).
func loadTheme(name string) (*styles, *markdown, error) {
	t, err := themes.Get(name)
	if err != nil {
		return nil, nil, err
	}
	// Newlines are kept: a model that breaks a line (a poem, an address,
	// a list without markers) means it, even where markdown would join.
	md := newMarkdown(func(width int) (*glamour.TermRenderer, error) {
		return glamour.NewTermRenderer(append(themes.MarkdownOptions(t, width), glamour.WithPreservedNewLines())...)
	})
	return newStyles(t), md, nil
}
