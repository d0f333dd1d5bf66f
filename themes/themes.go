// Package themes holds the colour themes of the terminal interface: for
// each theme a palette of semantic colours (text, user, assistant, tool
// outcomes, borders, status bar, dialogs...), lipgloss styles built from it,
// and a matching glamour style for markdown, with its own syntax-highlighting
// palette for code blocks.
//
// Themes: dark and light, for the two kinds of terminal background, and
// high-contrast (pure black or white text, saturated accents, solid status
// bar and selection) in a variant for each background. "auto" and
// "high-contrast" pick the variant for the background Detect found.
//
// Detect asks the terminal for its background colour and must run before
// the Bubble Tea program starts: the terminal answers on the program's
// input, and once Bubble Tea reads that input the answer arrives as stray
// key presses while the question times out. So the interface calls Detect
// once at startup; Get then resolves "auto" from that answer and never
// touches the terminal, which makes it safe inside the program (/theme).
// For the same reason nothing here uses glamour.WithAutoStyle or lipgloss
// AdaptiveColor, both of which query the terminal lazily.
package themes

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/lipgloss"
)

// Names of the themes and backgrounds.
const (
	Auto              = "auto"
	Dark              = "dark"
	Light             = "light"
	HighContrast      = "high-contrast"
	HighContrastDark  = "high-contrast-dark"
	HighContrastLight = "high-contrast-light"
)

// names is the order help texts and completion show.
var names = []string{Auto, Dark, Light, HighContrast, HighContrastDark, HighContrastLight}

// Names returns the names Get accepts.
func Names() []string { return append([]string(nil), names...) }

// Theme is everything the interface draws with.
type Theme struct {
	// Name is the concrete theme: never "auto" or "high-contrast", which
	// Get resolves, so it can key rendering caches.
	Name string
	// Background is the terminal background the theme is made for: Dark
	// or Light.
	Background string
	Colors     Palette
	// Styles are built on lipgloss's default renderer; StylesFor builds
	// them on another.
	Styles Styles
	// Markdown is the glamour style; MarkdownOptions wraps it for a
	// renderer. Its pointers are shared: copy before changing a field.
	Markdown ansi.StyleConfig
}

// Palette names the colours by what they mean on screen. Colours are hex
// RGB; lipgloss reduces them to what the terminal can show.
type Palette struct {
	// Text is the body text; Muted secondary information (times, usage
	// lines, hints); Faint decoration (rules, placeholders).
	Text, Muted, Faint lipgloss.Color
	// Accent marks what is active: the focused pane, the selected tab,
	// headings.
	Accent lipgloss.Color
	// User and Assistant mark who speaks; Thinking is the dimmed
	// reasoning text.
	User, Assistant, Thinking lipgloss.Color
	// Border frames panes and tool panels; BorderFocus the focused one.
	Border, BorderFocus lipgloss.Color
	// Tool call states: Running while a call runs, then one of the
	// outcomes. Warning is for notices that are not errors.
	Running, Success, Error, Warning, Denied, Timeout, Cancelled lipgloss.Color
	// Cost is dollar figures.
	Cost lipgloss.Color
	// Selection is the highlighted row of a list (sessions, tools,
	// completion).
	SelectionFg, SelectionBg lipgloss.Color
	// Header is the top bar, StatusBar the bottom one; StatusKey the key
	// hints on the status bar's background.
	HeaderFg, HeaderBg       lipgloss.Color
	StatusBarFg, StatusBarBg lipgloss.Color
	StatusKey                lipgloss.Color
	// DialogBorder frames the confirmation dialog, DialogTitle its title.
	DialogBorder, DialogTitle lipgloss.Color
}

// Styles are the palette as lipgloss styles, one per kind of thing drawn.
// Borders are set on the styles that draw a frame (Panel, PanelFocus,
// Dialog, Input); the rest colour text only.
type Styles struct {
	Text, Muted, Faint, Accent lipgloss.Style
	User, Assistant, Thinking  lipgloss.Style

	Running, Success, Error, Warning, Denied, Timeout, Cancelled lipgloss.Style
	Cost                                                         lipgloss.Style

	Header, HeaderKey lipgloss.Style
	Status, StatusKey lipgloss.Style

	Panel, PanelFocus, PanelTitle lipgloss.Style
	Dialog, DialogTitle           lipgloss.Style
	TabActive, TabInactive        lipgloss.Style
	Selection                     lipgloss.Style
	Input, InputPrompt            lipgloss.Style
	HelpKey, HelpDesc             lipgloss.Style
}

// detected is the background the last Detect found ("" before any).
var detected atomic.Value

// Detected returns the background the last Detect call found, Dark when
// Detect has not run.
func Detected() string {
	if bg, _ := detected.Load().(string); bg != "" {
		return bg
	}
	return Dark
}

// Get returns the named theme. "auto" (or "") and "high-contrast" resolve
// with the background Detect found, without asking the terminal. Names are
// not case-sensitive.
func Get(name string) (Theme, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", Auto:
		n = Detected()
	case HighContrast:
		n = HighContrast + "-" + Detected()
	}
	switch n {
	case Dark:
		return build(Dark, Dark, darkPalette, darkMarkdown()), nil
	case Light:
		return build(Light, Light, lightPalette, lightMarkdown()), nil
	case HighContrastDark:
		return build(HighContrastDark, Dark, hcDarkPalette, hcDarkMarkdown()), nil
	case HighContrastLight:
		return build(HighContrastLight, Light, hcLightPalette, hcLightMarkdown()), nil
	}
	return Theme{}, fmt.Errorf("unknown theme %q; choose one of: %s", name, strings.Join(names, ", "))
}

func build(name, bg string, p Palette, md ansi.StyleConfig) Theme {
	t := Theme{Name: name, Background: bg, Colors: p, Markdown: md}
	t.Styles = t.StylesFor(lipgloss.DefaultRenderer())
	return t
}

// StylesFor builds the theme's styles on renderer r (a renderer with a fixed
// colour profile, for tests that compare output).
func (t Theme) StylesFor(r *lipgloss.Renderer) Styles {
	p := t.Colors
	fg := func(c lipgloss.Color) lipgloss.Style { return r.NewStyle().Foreground(c) }
	frame := func(c lipgloss.Color) lipgloss.Style {
		return r.NewStyle().Foreground(p.Text).Border(lipgloss.RoundedBorder()).BorderForeground(c)
	}
	bar := r.NewStyle().Foreground(p.StatusBarFg).Background(p.StatusBarBg)
	head := r.NewStyle().Foreground(p.HeaderFg).Background(p.HeaderBg)
	return Styles{
		Text:      fg(p.Text),
		Muted:     fg(p.Muted),
		Faint:     fg(p.Faint),
		Accent:    fg(p.Accent).Bold(true),
		User:      fg(p.User).Bold(true),
		Assistant: fg(p.Assistant).Bold(true),
		Thinking:  fg(p.Thinking).Italic(true),

		Running:   fg(p.Running),
		Success:   fg(p.Success),
		Error:     fg(p.Error).Bold(true),
		Warning:   fg(p.Warning),
		Denied:    fg(p.Denied),
		Timeout:   fg(p.Timeout),
		Cancelled: fg(p.Cancelled),
		Cost:      fg(p.Cost),

		Header:    head,
		HeaderKey: head.Bold(true),
		Status:    bar,
		StatusKey: bar.Foreground(p.StatusKey).Bold(true),

		Panel:       frame(p.Border),
		PanelFocus:  frame(p.BorderFocus),
		PanelTitle:  fg(p.Text).Bold(true),
		Dialog:      frame(p.DialogBorder).Padding(0, 1),
		DialogTitle: fg(p.DialogTitle).Bold(true),
		TabActive:   fg(p.Accent).Bold(true).Underline(true),
		TabInactive: fg(p.Muted),
		Selection:   r.NewStyle().Foreground(p.SelectionFg).Background(p.SelectionBg),
		Input:       frame(p.BorderFocus),
		InputPrompt: fg(p.Accent).Bold(true),
		HelpKey:     fg(p.Accent).Bold(true),
		HelpDesc:    fg(p.Muted),
	}
}
