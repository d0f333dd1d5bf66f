package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (m *model) View() string {
	renders.nextFrame()
	if m.width == 0 {
		return ""
	}
	if m.width < MinWidth || m.height < MinHeight {
		msg := fmt.Sprintf("Terminal too small: %d×%d.\njarvis needs at least %d×%d.\nEnlarge the window, or press ctrl+c twice to quit.", m.width, m.height, MinWidth, MinHeight)
		if m.input.value() != "" {
			msg = fmt.Sprintf("Terminal too small: %d×%d.\njarvis needs at least %d×%d.\nWhat you typed waits in the prompt: enlarge the window to see it,\nor press ctrl+c to clear it, then twice to quit.", m.width, m.height, MinWidth, MinHeight)
		}
		if m.status != "" {
			msg += "\n" + m.status
		}
		box := m.st.warning.Width(max(m.width, 1)).Align(lipgloss.Center).Render(msg)
		lines := strings.Split(lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, box), "\n")
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, m.width, "")
		}
		return strings.Join(lines[:min(len(lines), m.height)], "\n")
	}
	tw := m.transcriptWidth()
	body := m.transcript.view(m.renderCtx(tw))
	if pw := m.paneWidth(); pw > 0 {
		pane := m.pane.View(m.st.look, pw, len(body))
		sep := m.st.muted.Render("│")
		if m.pane.Focused() {
			sep = m.st.accent.Render("│")
		}
		for i := range body {
			body[i] += sep + pane[i]
		}
	}
	if t, ok := m.pane.Modal(); ok {
		if box, ok := t.ModalView(m.st.look, m.width, len(body)); ok {
			body = overlayBox(body, box, m.width)
		}
	}
	if o := m.overlays.top(); o != nil {
		body = overlayBox(body, o.view(m.width, len(body)), m.width)
	}

	// One buffer the size of the last frame: growing it by doubling, frame
	// after frame, made most of what an idle or streaming jarvis allocates.
	var b strings.Builder
	b.Grow(m.frameBytes + m.width)
	b.WriteString(m.headerView())
	b.WriteByte('\n')
	for _, l := range body {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if m.pull.height() > 0 {
		b.WriteString(m.pull.view(m.st, m.width))
		b.WriteByte('\n')
	}
	if len(m.suggest) > 0 {
		b.WriteString(padRight(m.st.muted.Render(ansi.Truncate(safe.Text(strings.Join(m.suggest, "  ")), m.width, "…")), m.width))
		b.WriteByte('\n')
	}
	rule := strings.Repeat("─", m.width)
	if !m.pane.Focused() && !m.dialog.open() {
		b.WriteString(m.st.accent.Render(rule))
	} else {
		b.WriteString(m.st.muted.Render(rule))
	}
	b.WriteByte('\n')
	if m.chipRows() > 0 {
		b.WriteString(m.chipView(m.width))
		b.WriteByte('\n')
	}
	b.WriteString(m.input.ta.View())
	b.WriteByte('\n')
	b.WriteString(m.statusView())
	m.frameBytes = b.Len()
	return b.String()
}

func (m *model) headerView() string {
	dot := m.st.errorText.Render("○")
	switch {
	case !m.server.checked:
		dot = m.st.muted.Render("○")
	case m.server.online:
		dot = m.st.success.Render("●")
	}
	title := safe.Text(format.OneLine(m.title, 40))
	if title == "" {
		title = "new session"
	}
	parts := []string{
		m.st.headerKey.Render("jarvis"),
		dot + " " + safe.Text(orNone(m.modelRef())) + " @ " + m.hostText() + m.headerState(),
		m.agentName,
		format.Count(len(m.enabledTools()), "tool"),
		"“" + title + "”",
	}
	if w := m.windowText(); w != "" {
		parts = append(parts[:4], append([]string{w}, parts[4:]...)...)
	}
	if m.lease.elsewhere != nil {
		// First: what follows is cut on a narrow screen.
		parts = append(parts[:1], append([]string{m.st.warning.Render("open elsewhere")}, parts[1:]...)...)
	}
	return m.st.header.Render(padRight(" "+strings.Join(parts, m.st.muted.Render(" · ")), m.width))
}

func (m *model) statusView() string {
	left := " " + m.stateText()
	if !m.transcript.atBottom() {
		left += " · scrolled (end returns)"
	}
	right := m.totalsText() + " · ? keys "
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		right = ansi.Truncate(right, max(m.width-ansi.StringWidth(left)-1, 0), "…")
		gap = max(m.width-ansi.StringWidth(left)-ansi.StringWidth(right), 0)
	}
	return m.st.status.Render(padRight(left+strings.Repeat(" ", gap)+right, m.width))
}

// isMCPTool reports whether name belongs to a configured MCP server.
func (m *model) isMCPTool(name string) bool {
	if m.opts.MCP == nil {
		return false
	}
	server, _, ok := strings.Cut(name, "__")
	if !ok {
		return false
	}
	_, known := m.opts.MCP.Server(server)
	return known
}

// describeTools is BuildToolDescriptions of the enabled tools, with the
// pane's category and cost toggles, under a line saying in which form the
// current agent's model reads the tools: react reads exactly this text in
// its system prompt; orchestrator offers the tools' JSON schemas, which
// the model's chat template renders (the Context tab shows that prompt).
func (m *model) describeTools(category, cost bool) string {
	text := tools.DescribeSpecs(m.executor.AvailableTools(), category, cost)
	switch m.agentName {
	case agent.ReAct:
		return "react: the model reads exactly this text, in its system prompt.\n\n" + text
	case agent.Orchestrator:
		return "orchestrator: the model reads these tools as JSON schemas rendered by its chat template (" + m.pane.KeyOf(m.ctxTab) + " shows the prompt); this is the text react would send.\n\n" + text
	}
	return "simple: no tools are offered to the model.\n\n" + text
}

// overlayBox draws box centred over lines (each width cells wide). A box
// wider or taller than the screen is cut, so no overlay can push a line
// past the width or the frame past its height.
func overlayBox(lines []string, box string, width int) []string {
	rows := strings.Split(box, "\n")
	if len(rows) > len(lines) {
		rows = rows[:len(lines)]
	}
	bw := 0
	for i, r := range rows {
		if ansi.StringWidth(r) > width {
			rows[i] = ansi.Truncate(r, width, "")
		}
		bw = max(bw, ansi.StringWidth(rows[i]))
	}
	top := max((len(lines)-len(rows))/2, 0)
	left := max((width-bw)/2, 0)
	out := append([]string(nil), lines...)
	for i, r := range rows {
		y := top + i
		base := out[y]
		right := ansi.Cut(base, left+bw, width)
		out[y] = ansi.Truncate(base, left, "") + padRight(r, bw) + right
	}
	return out
}
