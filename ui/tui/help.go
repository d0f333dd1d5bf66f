package tui

import (
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// The help overlay lists the keys and the commands. It is as wide as the
// screen allows up to helpMaxWidth, in two columns when the screen has
// room for them (helpTwoColumns cells), descriptions wrapped under
// themselves, and scrolls when it is still taller than the screen.
const (
	helpMaxWidth    = 90
	helpTwoColumns  = 116
	helpMaxWidthTwo = 140
	helpGap         = 3 // cells between the two columns
)

// helpLayout is the help laid out for the current screen.
type helpLayout struct {
	width int      // the box's width inside its border
	body  []string // the scrolling part, each line at most width-2 cells
	rows  int      // body lines shown at a time
}

// helpBlock is a run of lines the columns are not split inside: a section
// title or one entry.
type helpBlock struct {
	lines []string
	title bool
}

func (m *model) helpLayout() helpLayout {
	w := min(m.width-4, helpMaxWidth)
	two := m.width >= helpTwoColumns
	if two {
		w = min(m.width-4, helpMaxWidthTwo)
	}
	inner := max(w-2, 10) // inside the padding
	colW := inner
	if two {
		colW = (inner - helpGap) / 2
	}
	blocks := m.helpBlocks(colW)
	var body []string
	if two {
		left, right := splitBlocks(blocks)
		body = joinColumns(left, right, colW)
	} else {
		body = flatten(blocks)
	}
	// The box: border (2), body, a blank and the footer.
	rows := max(min(len(body), m.transcript.height-4), 1)
	return helpLayout{width: w, body: body, rows: rows}
}

// helpBlocks renders the entries for a column colW cells wide: the key in
// a column of its own, the description wrapped beside it.
func (m *model) helpBlocks(colW int) []helpBlock {
	keyW := min(19, colW/2)
	entry := func(key, desc string) helpBlock {
		keys := wrapLine(key, keyW)
		descs := wrapText(desc, colW-keyW-1)
		var b helpBlock
		for i := 0; i < max(len(keys), len(descs)); i++ {
			k, d := "", ""
			if i < len(keys) {
				k = keys[i]
			}
			if i < len(descs) {
				d = descs[i]
			}
			b.lines = append(b.lines, m.st.accent.Render(padRight(k, keyW))+" "+d)
		}
		return b
	}
	title := func(s string) helpBlock {
		return helpBlock{lines: []string{m.st.dialogTitle.Render(s)}, title: true}
	}
	blocks := []helpBlock{title("Keys")}
	for _, k := range keyHelp {
		if k[0] != paneKeys {
			blocks = append(blocks, entry(k[0], k[1]))
			continue
		}
		for _, t := range m.paneHelp() {
			blocks = append(blocks, entry(t[0], t[1]))
		}
	}
	blocks = append(blocks, title("Commands"))
	for _, c := range commands {
		blocks = append(blocks, entry(strings.TrimSpace("/"+c.name+" "+c.args), c.help))
	}
	return blocks
}

// splitBlocks splits blocks into two columns of about the same height,
// never leaving a section title at the bottom of the left column.
func splitBlocks(blocks []helpBlock) (left, right []string) {
	heights := make([]int, len(blocks)+1) // heights[i]: lines of blocks[:i]
	for i, b := range blocks {
		heights[i+1] = heights[i] + len(b.lines)
	}
	total := heights[len(blocks)]
	best, bestH := len(blocks), total
	for i := 1; i < len(blocks); i++ {
		if blocks[i-1].title {
			continue
		}
		if h := max(heights[i], total-heights[i]); h < bestH {
			best, bestH = i, h
		}
	}
	return flatten(blocks[:best]), flatten(blocks[best:])
}

// flatten joins blocks, with a blank line before every title but the
// first.
func flatten(blocks []helpBlock) []string {
	var out []string
	for i, b := range blocks {
		if b.title && i > 0 {
			out = append(out, "")
		}
		out = append(out, b.lines...)
	}
	return out
}

func joinColumns(left, right []string, colW int) []string {
	out := make([]string, max(len(left), len(right)))
	for i := range out {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = padRight(l, colW) + strings.Repeat(" ", helpGap) + r
	}
	return out
}

// helpKey scrolls or closes the help; other keys do nothing, so a key
// typed by mistake does not close it unseen.
func (m *model) helpKey(k tea.KeyMsg) tea.Cmd {
	l := m.helpLayout()
	switch k.String() {
	case "up", "k":
		m.helpScroll--
	case "down", "j":
		m.helpScroll++
	case "pgup", "ctrl+u":
		m.helpScroll -= max(l.rows-1, 1)
	case "pgdown", "ctrl+d", " ":
		m.helpScroll += max(l.rows-1, 1)
	case "home":
		m.helpScroll = 0
	case "end":
		m.helpScroll = len(l.body)
	case "esc", "q", "?", "enter":
		m.overlays.pop()
		return nil
	}
	m.clampHelp()
	return nil
}

// clampHelp keeps the help's scroll position in range for the screen.
func (m *model) clampHelp() {
	l := m.helpLayout()
	m.helpScroll = min(max(m.helpScroll, 0), max(len(l.body)-l.rows, 0))
}

// helpView draws the help box, at most as tall as the transcript.
func (m *model) helpView() string {
	l := m.helpLayout()
	scroll := min(max(m.helpScroll, 0), max(len(l.body)-l.rows, 0))
	lines := append([]string(nil), l.body[scroll:scroll+l.rows]...)
	foot := "esc, q or ? closes"
	if len(l.body) > l.rows {
		foot = "↑/↓ pgup/pgdn scroll · lines " + strconv.Itoa(scroll+1) + "–" + strconv.Itoa(scroll+l.rows) +
			" of " + strconv.Itoa(len(l.body)) + " · esc closes"
	}
	lines = append(lines, "", m.st.muted.Render(ansi.Truncate(foot, l.width-2, "…")))
	return lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Width(l.width).Render(strings.Join(lines, "\n"))
}
