// Package look is what the workbench's components share to draw and to
// word things: the theme's styles they draw with, and the workbench's
// names for its controls in the advice the layers below give. Package tui
// and its components (the side pane's tabs) both import it; it imports
// none of them, so a component never needs package tui.
package look

import (
	"fmt"
	"strconv"

	"github.com/charmbracelet/lipgloss"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/themes"
)

// Styles are the theme's styles a component draws with. The model passes
// them on every frame, so a change of theme (/theme) needs no call.
type Styles struct {
	Text, Muted, Accent, User, Thinking lipgloss.Style
	Success, Error, Warning, Cancelled  lipgloss.Style
	Selection, TabActive, TabInactive   lipgloss.Style
	DialogTitle                         lipgloss.Style
	DialogBorder                        lipgloss.TerminalColor
}

// Of takes the styles from a theme.
func Of(t themes.Theme) Styles {
	s := t.Styles
	return Styles{
		Text: s.Text, Muted: s.Muted, Accent: s.Accent, User: s.User, Thinking: s.Thinking,
		Success: s.Success, Error: s.Error, Warning: s.Warning, Cancelled: s.Cancelled,
		Selection: s.Selection, TabActive: s.TabActive, TabInactive: s.TabInactive,
		DialogTitle: s.DialogTitle, DialogBorder: t.Colors.DialogBorder,
	}
}

// Controls name the workbench's controls in the advice the layers below
// give (see engine.Say): slash commands and keys.
var Controls = engine.Controls{
	Agent:  func(name string) string { return "the " + name + " agent (/agent " + name + ")" },
	Model:  func() string { return "/model" },
	Models: func() string { return "/model" },
	Window: func(n int) string {
		if n > 0 {
			return fmt.Sprintf("/ctx %d", n)
		}
		return "/ctx N"
	},
	Tools:   func() string { return "/tools, or the Tools tab" },
	Host:    func() string { return "--host when you start jarvis" },
	Pull:    func(model string) string { return "/pull " + model },
	Compact: func() string { return "/compact" },
	New:     func() string { return "/new" },
	Think:   func() string { return "think = \"false\" in the config" },
	Turns:   func() string { return "max_turns in the config" },
}

// Explain is err's message with its advice in the workbench's words.
func Explain(err error) string { return engine.Explain(err, Controls) }

// Say renders advice in the workbench's words.
func Say(s string) string { return engine.Say(s, Controls) }

// GroupInt writes n with its thousands grouped (131,072), as the
// workbench shows window sizes.
func GroupInt(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// PageStep is how far a paging key moves a list or a view that shows
// page rows: pgup and pgdown a page, ctrl+u and ctrl+d half of one
// (at least a row), as in less and vi. ok is false for any other key.
func PageStep(key string, page int) (step int, ok bool) {
	page = max(page, 1)
	switch key {
	case "pgup":
		return -page, true
	case "pgdown":
		return page, true
	case "ctrl+u":
		return -max(page/2, 1), true
	case "ctrl+d":
		return max(page/2, 1), true
	}
	return 0, false
}
