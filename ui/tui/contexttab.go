package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// contextTab is the side pane's Context tab (F6): the window, what the
// next request takes of it part by part, the biggest items, each tool's
// cost, and the prompt exactly as the server renders it. Its data comes
// from refreshContext; the view only draws.
type contextTab struct {
	seq     int
	loading bool
	have    bool
	budget  agent.Budget
	err     error

	haveRender  bool
	rendered    string
	renderErr   error
	unsupported bool
	renderedAt  time.Time

	scroll int
	// cold is set when the last refresh did not render the prompt
	// because that would have loaded the model.
	cold bool
	// compacting is the transcript's line of a /compact in progress.
	compacting *compactLine

	// wrapped caches the rendered prompt's lines for one width.
	wrapped      []string
	wrappedWidth int
	wrappedAt    time.Time
}

// biggestShown is how many of the costliest items the tab lists.
const biggestShown = 6

// lines draws the whole tab's content for width; the pane shows a window
// of it (scroll).
func (c *contextTab) lines(st *styles, width int, agentName string, msgs int) []string {
	var out []string
	add := func(style lipgloss.Style, s string) {
		for _, l := range wrapLine(s, width) {
			out = append(out, style.Render(l))
		}
	}
	switch {
	case c.err != nil:
		add(st.errorText, "The window could not be found: "+explain(c.err))
		return out
	case !c.have && c.loading:
		add(st.muted, "Counting what the model will read…")
		return out
	case !c.have:
		add(st.muted, "Set a model to see what it reads.")
		return out
	}
	b := c.budget
	add(st.text, fmt.Sprintf("Window %s tokens · %s", groupInt(b.Window.Tokens), b.Model))
	add(st.muted, say(b.Window.Source))
	if b.Calibrated {
		add(st.muted, fmt.Sprintf("Counts calibrated on the server's (×%.2f of jarvis's estimate).", b.Ratio))
	} else {
		add(st.muted, "Counts are jarvis's estimate, padded until the first reply calibrates them.")
	}
	out = append(out, "")
	out = append(out, c.bar(st, width)...)
	add(st.text, fmt.Sprintf("Next request: %s, with %s kept for the reply.", format.WindowUse(b.Prompt, b.Window.Tokens, !b.Calibrated), format.Tokens(b.Reply)))
	if b.CutResults > 0 {
		add(st.warning, fmt.Sprintf("%s cut for the model (the transcript has them whole).", format.Count(b.CutResults, "tool result")))
	}
	if b.ImageTokens > 0 {
		add(st.muted, fmt.Sprintf("Images take about %s tokens of the history (what this model family spends on each).", format.Tokens(b.ImageTokens)))
	}
	if big := b.Biggest(biggestShown); len(big) > 0 {
		out = append(out, "", st.accent.Render("Biggest items"))
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
	out = append(out, "", st.accent.Render("Tools"))
	sent := agentName
	if b.Agent != "" {
		sent = b.Agent // what the next request really is
	}
	if sent == agent.ReAct && agentName == agent.Orchestrator {
		add(st.warning, fmt.Sprintf("orchestrator went on as react: %s cannot call tools natively.", b.Model))
	}
	switch sent {
	case agent.Orchestrator:
		add(st.muted, "orchestrator offers them as definitions; the model reads their JSON schemas as its chat template renders them (below).")
		for _, p := range b.ToolCosts() {
			out = append(out, itemLine(st, p.Name, p.Tokens, width))
		}
	case agent.ReAct:
		add(st.muted, "react describes them in its system prompt (the BuildToolDescriptions text, in the Tools tab); they are part of the system prompt's cost.")
	default:
		add(st.muted, "The simple agent offers no tools.")
	}
	hint := " · r refreshes"
	if c.cold {
		hint = ""
	}
	out = append(out, "", st.accent.Render("The prompt as the server renders it")+st.muted.Render(hint))
	if c.cold {
		add(st.muted, fmt.Sprintf("%s is not loaded, and rendering the prompt would load it on the server: press r (with the pane focused) to render it anyway.", b.Model))
		if c.haveRender && c.renderErr == nil && !c.unsupported {
			add(st.muted, "The last render, from "+c.renderedAt.Local().Format("15:04")+":")
		}
	}
	switch {
	case c.cold && !c.haveRender:
	case !c.haveRender && c.loading:
		add(st.muted, "Asking the server…")
	case !c.haveRender:
		add(st.muted, "Press r (with the pane focused) to ask the server.")
	case c.unsupported:
		add(st.warning, "This server cannot render a prompt without answering it (it lacks _debug_render_only), so here are the messages jarvis sends instead; the template is applied by the server.")
		add(st.muted, fmt.Sprintf("%s and the system prompt.", format.Count(msgs, "message")))
	case c.renderErr != nil:
		add(st.errorText, "The server could not render the prompt: "+explain(c.renderErr))
	default:
		if c.wrappedWidth != width || !c.wrappedAt.Equal(c.renderedAt) {
			c.wrapped, c.wrappedWidth, c.wrappedAt = wrapPrompt(c.rendered, width), width, c.renderedAt
		}
		for _, l := range c.wrapped {
			out = append(out, st.text.Render(l))
		}
	}
	return out
}

// wrapPrompt wraps the rendered prompt, keeping its line breaks and
// showing tabs, as text from the server may hold anything.
func wrapPrompt(s string, width int) []string {
	var out []string
	for _, l := range strings.Split(safe.Text(s), "\n") {
		out = append(out, wrapLine(expandTabs(l), width)...)
	}
	return out
}

// itemLine is "name ..... 1.2k" fitted to width.
func itemLine(st *styles, name string, tokens, width int) string {
	n := format.Tokens(tokens)
	room := max(width-ansi.StringWidth(n)-3, 4)
	name = ansi.Truncate(safe.Text(name), room, "…")
	gap := max(width-ansi.StringWidth(name)-ansi.StringWidth(n)-2, 1)
	return "  " + st.text.Render(name) + strings.Repeat(" ", gap) + st.muted.Render(n)
}

// bar draws the window as one bar split by part, and its legend.
func (c *contextTab) bar(st *styles, width int) []string {
	b := c.budget
	parts := []struct {
		name  string
		n     int
		style lipgloss.Style
	}{
		{"system", b.System, st.accent},
		{"tools", b.Tools, st.warning},
		{"history", b.History, st.user},
		{"tool results", b.Results, st.success},
		{"reply", b.Reply, st.thinking},
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
	bar.WriteString(st.muted.Render(strings.Repeat("░", max(free, 0))))
	out := []string{bar.String()}
	var legend []string
	for _, p := range parts {
		legend = append(legend, p.style.Render("■")+" "+p.name+" "+format.Tokens(p.n))
	}
	if f := b.Window.Tokens - b.Prompt - b.Reply; f > 0 {
		legend = append(legend, st.muted.Render("░")+" free "+format.Tokens(f))
	} else {
		legend = append(legend, st.errorText.Render("over by "+format.Tokens(-f)))
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

// view is the part of the tab that fits height, from the scroll position.
func (c *contextTab) view(st *styles, width, height int, agentName string, msgs int) []string {
	all := c.lines(st, width, agentName, msgs)
	scroll := min(max(c.scroll, 0), max(len(all)-height, 0))
	return all[scroll:min(scroll+height, len(all))]
}
