// Package contexttab is the side pane's Context tab (F6): the window,
// what the next request takes of it part by part, the biggest items,
// each tool's cost, and the prompt exactly as the server renders it. The
// workbench asks the server (its commands) and sets the tab's Data; the
// tab draws it and scrolls.
package contexttab

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// Data is what the workbench found out for the tab.
type Data struct {
	// Loading: a count is on its way.
	Loading bool
	// Have: Budget holds a count (Err says why not when it failed).
	Have   bool
	Budget agent.Budget
	Err    error

	// HaveRender: the server was asked to render the prompt; Rendered
	// is its answer, RenderErr why it could not, Unsupported that it
	// cannot render without answering, RenderedAt when it was asked.
	HaveRender  bool
	Rendered    string
	RenderErr   error
	Unsupported bool
	RenderedAt  time.Time

	// Cold is set when the last refresh did not render the prompt
	// because that would have loaded the model.
	Cold bool
}

// Host is what the tab needs of the workbench.
type Host interface {
	// Agent is the agent the next request goes with.
	Agent() string
	// Messages is how many messages the conversation has.
	Messages() int
	// Refresh counts the next request again (the tab came on screen).
	Refresh() tea.Cmd
	// Render asks the server for the prompt even if that loads the
	// model (r).
	Render() tea.Cmd
}

// Tab is the Context tab.
type Tab struct {
	Data
	host Host

	scroll int
	size   tabs.Size

	// wrapped caches the rendered prompt's lines for one width.
	wrapped      []string
	wrappedWidth int
	wrappedAt    time.Time
}

// New makes the tab over host.
func New(host Host) *Tab { return &Tab{host: host} }

// Title is the tab's name.
func (c *Tab) Title() string { return "Context" }

// Hint is the tab's keys.
func (c *Tab) Hint() string { return "↑↓ pgup pgdn scroll · r renders the prompt" }

// Scroll is how far down the tab is scrolled.
func (c *Tab) Scroll() int { return c.scroll }

// Update counts the request again when the tab comes on screen, and
// keeps the scroll in range.
func (c *Tab) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tabs.Shown:
		return c.host.Refresh()
	case tabs.Size:
		c.size = msg
	case tabs.Refresh:
		if msg.Showing {
			c.clamp() // it draws the whole tab to count its lines
		}
	}
	return nil
}

// Key scrolls (↑ ↓ j k, pgup pgdn, ctrl+u ctrl+d, home) and renders the
// prompt (r).
func (c *Tab) Key(k tea.KeyMsg) tea.Cmd {
	if step, ok := look.PageStep(k.String(), c.size.Height); ok {
		c.scroll += step
		c.clamp()
		return nil
	}
	switch k.String() {
	case "up", "k":
		c.scroll--
	case "down", "j":
		c.scroll++
	case "home":
		c.scroll = 0
	case "r":
		c.clamp()
		return c.host.Render()
	}
	c.clamp()
	return nil
}

// clamp keeps the scroll in range of what the tab shows now.
func (c *Tab) clamp() {
	if c.size.Width == 0 {
		return
	}
	n := len(c.lines(look.Styles{}, c.size.Width, c.host.Agent(), c.host.Messages()))
	c.scroll = min(max(c.scroll, 0), max(n-max(c.size.Height, 1), 0))
}

// biggestShown is how many of the costliest items the tab lists.
const biggestShown = 6

// lines draws the whole tab's content for width; the pane shows a window
// of it (scroll).
func (c *Tab) lines(st look.Styles, width int, agentName string, msgs int) []string {
	var out []string
	add := func(style lipgloss.Style, s string) {
		for _, l := range termtext.WrapLine(s, width) {
			out = append(out, style.Render(l))
		}
	}
	switch {
	case c.Err != nil:
		add(st.Error, "The window could not be found: "+look.Explain(c.Err))
		return out
	case !c.Have && c.Loading:
		add(st.Muted, "Counting what the model will read…")
		return out
	case !c.Have:
		add(st.Muted, "Set a model to see what it reads.")
		return out
	}
	b := c.Budget
	add(st.Text, fmt.Sprintf("Window %s tokens · %s", look.GroupInt(b.Window.Tokens), b.Model))
	add(st.Muted, look.Say(b.Window.Source))
	if b.Calibrated {
		add(st.Muted, fmt.Sprintf("Counts calibrated on the server's (×%.2f of jarvis's estimate).", b.Ratio))
	} else {
		add(st.Muted, "Counts are jarvis's estimate, padded until the first reply calibrates them.")
	}
	out = append(out, "")
	out = append(out, c.bar(st, width)...)
	add(st.Text, fmt.Sprintf("Next request: %s, with %s kept for the reply.", format.WindowUse(b.Prompt, b.Window.Tokens, !b.Calibrated), format.Tokens(b.Reply)))
	if b.CutResults > 0 {
		add(st.Warning, fmt.Sprintf("%s cut for the model (the transcript has them whole).", format.Count(b.CutResults, "tool result")))
	}
	if b.ImageTokens > 0 {
		add(st.Muted, fmt.Sprintf("Images take about %s tokens of the history (what this model family spends on each).", format.Tokens(b.ImageTokens)))
	}
	if big := b.Biggest(biggestShown); len(big) > 0 {
		out = append(out, "", st.Accent.Render("Biggest items"))
		for _, p := range big {
			what := p.Name
			if p.Kind == agent.PartResult {
				what = "result of " + p.Name
			}
			if p.Cut {
				what += " (cut)"
			}
			if p.Images > 0 {
				what += " with " + format.Count(p.Images, "image")
			}
			out = append(out, itemLine(st, fmt.Sprintf("#%d %s", p.Index+1, what), p.Tokens, width))
		}
	}
	out = append(out, "", st.Accent.Render("Tools"))
	sent := agentName
	if b.Agent != "" {
		sent = b.Agent // what the next request really is
	}
	if sent == agent.ReAct && agentName == agent.Orchestrator {
		add(st.Warning, fmt.Sprintf("orchestrator went on as react: %s cannot call tools natively.", b.Model))
	}
	switch sent {
	case agent.Orchestrator:
		add(st.Muted, "orchestrator offers them as definitions; the model reads their JSON schemas as its chat template renders them (below).")
		for _, p := range b.ToolCosts() {
			out = append(out, itemLine(st, p.Name, p.Tokens, width))
		}
	case agent.ReAct:
		add(st.Muted, "react describes them in its system prompt (the BuildToolDescriptions text, in the Tools tab); they are part of the system prompt's cost.")
	default:
		add(st.Muted, "The simple agent offers no tools.")
	}
	hint := " · r refreshes"
	if c.Cold {
		hint = ""
	}
	out = append(out, "", st.Accent.Render("The prompt as the server renders it")+st.Muted.Render(hint))
	if c.Cold {
		add(st.Muted, fmt.Sprintf("%s is not loaded, and rendering the prompt would load it on the server: press r (with the pane focused) to render it anyway.", b.Model))
		if c.HaveRender && c.RenderErr == nil && !c.Unsupported {
			add(st.Muted, "The last render, from "+c.RenderedAt.Local().Format("15:04")+":")
		}
	}
	switch {
	case c.Cold && !c.HaveRender:
	case !c.HaveRender && c.Loading:
		add(st.Muted, "Asking the server…")
	case !c.HaveRender:
		add(st.Muted, "Press r (with the pane focused) to ask the server.")
	case c.Unsupported:
		add(st.Warning, "This server cannot render a prompt without answering it (it lacks _debug_render_only), so here are the messages jarvis sends instead; the template is applied by the server.")
		add(st.Muted, fmt.Sprintf("%s and the system prompt.", format.Count(msgs, "message")))
	case c.RenderErr != nil:
		add(st.Error, "The server could not render the prompt: "+look.Explain(c.RenderErr))
	default:
		if c.wrappedWidth != width || !c.wrappedAt.Equal(c.RenderedAt) {
			c.wrapped, c.wrappedWidth, c.wrappedAt = wrapPrompt(c.Rendered, width), width, c.RenderedAt
		}
		for _, l := range c.wrapped {
			out = append(out, st.Text.Render(l))
		}
	}
	return out
}

// wrapPrompt wraps the rendered prompt, keeping its line breaks and
// showing tabs, as text from the server may hold anything.
func wrapPrompt(s string, width int) []string {
	var out []string
	for _, l := range strings.Split(safe.Text(s), "\n") {
		out = append(out, termtext.WrapLine(termtext.ExpandTabs(l), width)...)
	}
	return out
}

// itemLine is "name ..... 1.2k" fitted to width.
func itemLine(st look.Styles, name string, tokens, width int) string {
	n := format.Tokens(tokens)
	room := max(width-ansi.StringWidth(n)-3, 4)
	name = ansi.Truncate(safe.Text(name), room, "…")
	gap := max(width-ansi.StringWidth(name)-ansi.StringWidth(n)-2, 1)
	return "  " + st.Text.Render(name) + strings.Repeat(" ", gap) + st.Muted.Render(n)
}

// bar draws the window as one bar split by part, and its legend.
func (c *Tab) bar(st look.Styles, width int) []string {
	b := c.Budget
	parts := []struct {
		name  string
		n     int
		style lipgloss.Style
	}{
		{"system", b.System, st.Accent},
		{"tools", b.Tools, st.Warning},
		{"history", b.History, st.User},
		{"tool results", b.Results, st.Success},
		{"reply", b.Reply, st.Thinking},
	}
	total := max(b.Window.Tokens, b.Prompt+b.Reply)
	cells := max(width-2, 10)
	var bar strings.Builder
	used := 0
	for _, p := range parts {
		w := 0
		if total > 0 {
			w = int(float64(p.n) * float64(cells) / float64(total))
		}
		if p.n > 0 && w == 0 {
			w = 1
		}
		w = min(w, cells-used)
		bar.WriteString(p.style.Render(strings.Repeat("█", w)))
		used += w
	}
	free := cells - used
	bar.WriteString(st.Muted.Render(strings.Repeat("░", max(free, 0))))
	out := []string{bar.String()}
	var legend []string
	for _, p := range parts {
		legend = append(legend, p.style.Render("■")+" "+p.name+" "+format.Tokens(p.n))
	}
	if f := b.Window.Tokens - b.Prompt - b.Reply; f > 0 {
		legend = append(legend, st.Muted.Render("░")+" free "+format.Tokens(f))
	} else {
		legend = append(legend, st.Error.Render("over by "+format.Tokens(-f)))
	}
	line := ""
	for _, l := range legend {
		if line != "" && ansi.StringWidth(line)+ansi.StringWidth(l)+2 > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += l
	}
	return append(out, line)
}

// View is the part of the tab that fits height, from the scroll position.
func (c *Tab) View(st look.Styles, width, height int) []string {
	all := c.lines(st, width, c.host.Agent(), c.host.Messages())
	scroll := min(max(c.scroll, 0), max(len(all)-height, 0))
	return all[scroll:min(scroll+height, len(all))]
}
