// Package toolstab is the side pane's Tools tab: the tools the model may
// call, each on or off (space), always allowed or asking (A), what each
// costs in the prompt, and below them the text the model is told about
// them, in the form the current agent sends it. The tab draws and moves
// its cursor; the workbench (its Host) lists the tools and makes the
// changes.
package toolstab

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// Row is one line of the tab's list.
type Row struct {
	Name    string
	Enabled bool
	Confirm bool
	MCP     string // "unavailable" for an MCP tool whose server is down
	// Header rows name an MCP server and its state; OK is true when it
	// is ready. Toggling a header toggles Pattern, all the server's tools.
	Header, OK bool
	Pattern    string
	// Tokens is what the tool's definition costs in the prompt.
	Tokens int
	// Always: the tool is always allowed (it runs without asking).
	Always bool
}

// Host is what the tab needs of the workbench.
type Host interface {
	// Rows lists the tools as they are now.
	Rows() []Row
	// Describe is the text the model reads about the enabled tools,
	// with or without the category and cost lines.
	Describe(category, cost bool) string
	// Toggle turns the named tool on or off; given a pattern, all the
	// tools it matches.
	Toggle(name string) tea.Cmd
	// AskAlways starts always-allowing the named tool, or revoking its
	// always-grants: it asks first (Ask).
	AskAlways(name string) tea.Cmd
}

// Question is a yes/no question the tab asks before a change that lets
// more run; the workbench answers it (y, held like any answer).
type Question struct {
	Text string
	Yes  func() tea.Cmd
}

// Keys are the tab's keys, as its hint lists them.
var Keys = []string{"tab: focus", "space: on/off", "A: always", "c: category", "$: cost"}

// Tab is the Tools tab.
type Tab struct {
	host Host

	cursor       int
	showCategory bool
	showCost     bool
	descScroll   int
	question     *Question

	size    tabs.Size
	focused bool
}

// New makes the tab over host.
func New(host Host) *Tab { return &Tab{host: host, showCategory: true} }

// Title is the tab's name.
func (t *Tab) Title() string { return "Tools" }

// Hint is the tab's keys.
func (t *Tab) Hint() string { return strings.Join(Keys, " · ") }

// Ask puts a question under the list (nil takes it away).
func (t *Tab) Ask(q *Question) { t.question = q }

// Question is the question the tab asks, nil when none.
func (t *Tab) Question() *Question { return t.question }

// Selected is the row under the cursor; ok is false for an empty list.
func (t *Tab) Selected() (Row, bool) {
	rows := t.host.Rows()
	if len(rows) == 0 {
		return Row{}, false
	}
	return rows[min(max(t.cursor, 0), len(rows)-1)], true
}

// Cursor is the list's cursor; SetCursor moves it.
func (t *Tab) Cursor() int         { return t.cursor }
func (t *Tab) SetCursor(i int)     { t.cursor = i }
func (t *Tab) DescScroll() int     { return t.descScroll }
func (t *Tab) SetDescScroll(i int) { t.descScroll = i }

// Describe is the description as the tab's toggles ask for it.
func (t *Tab) Describe() string { return t.host.Describe(t.showCategory, t.showCost) }

// Update follows the pane's size and focus, and keeps the positions in
// range when the tools change.
func (t *Tab) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tabs.Size:
		t.size = msg
	case tabs.Focus:
		t.focused = msg.Focused
	case tabs.Refresh:
		t.cursor = min(max(t.cursor, 0), max(len(t.host.Rows())-1, 0))
		if msg.Visible {
			t.clamp()
		}
	}
	return nil
}

// Changes reports the keys that change what may run: space and enter
// turn a tool on or off, A always-allows it.
func (t *Tab) Changes(k tea.KeyMsg) bool {
	switch k.String() {
	case " ", "enter", "A":
		return true
	}
	return false
}

// Key moves the cursor (↑ ↓), pages the description (pgup pgdn, ctrl+u
// ctrl+d), toggles the category and cost lines (c, $), and acts on the
// selected tool (space, enter, A).
func (t *Tab) Key(k tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	if step, ok := look.PageStep(k.String(), t.descRoom()); ok {
		t.descScroll += step
		t.clamp()
		return nil
	}
	switch k.String() {
	case "up", "k":
		t.cursor--
	case "down", "j":
		t.cursor++
	case "c":
		t.showCategory = !t.showCategory
	case "$":
		t.showCost = !t.showCost
	case " ", "enter":
		switch r, ok := t.Selected(); {
		case ok && !r.Header:
			cmd = t.host.Toggle(r.Name)
		case ok && r.Pattern != "":
			cmd = t.host.Toggle(r.Pattern)
		}
	case "A":
		if r, ok := t.Selected(); ok && !r.Header {
			cmd = t.host.AskAlways(r.Name)
		}
	}
	t.clamp()
	return cmd
}

// Page is a page of the description: what its part of the tab shows.
func (t *Tab) Page() int { return max(t.descRoom(), 1) }

func (t *Tab) descRoom() int {
	_, desc := rooms(max(t.size.Height, 1), len(t.host.Rows()), len(t.note(t.size.Width)))
	return desc
}

// clamp keeps the cursor and the description's scroll in range for what
// the tab shows now. It runs in Update and Key, so View only reads them.
func (t *Tab) clamp() {
	rows := t.host.Rows()
	t.cursor = min(max(t.cursor, 0), max(len(rows)-1, 0))
	if t.size.Width == 0 {
		return
	}
	_, room := rooms(max(t.size.Height, 1), len(rows), len(t.note(t.size.Width)))
	desc := wrapDescription(t.Describe(), t.size.Width)
	t.descScroll = min(max(t.descScroll, 0), max(len(desc)-room, 0))
}

// rooms splits the tab's height between the list of nrows tools and the
// description, under the note (notes lines: the key hint or the tab's
// question) and the rule between them.
func rooms(height, nrows, notes int) (list, desc int) {
	list = min(nrows, max(height/3, 3))
	return list, max(height-list-notes-1, 0)
}

// note is what stands between the list and the description, width cells
// wide: the question the tab asks, or the key hint, wrapped between its
// keys so that each shows whole at any pane width.
func (t *Tab) note(width int) []string {
	if q := t.question; q != nil {
		return termtext.WrapLine(q.Text, width)
	}
	var out []string
	line := ""
	for _, k := range Keys {
		switch {
		case line == "":
			line = k
		case ansi.StringWidth(line+" · "+k) <= width:
			line += " · " + k
		default:
			out = append(out, line)
			line = k
		}
	}
	return append(out, line)
}

// View draws the tab. Positions out of range (the list or the
// description changed since they were set) are clamped here for drawing
// only; Update clamps the stored ones.
func (t *Tab) View(st look.Styles, width, height int) []string {
	rows, described, focused := t.host.Rows(), t.Describe(), t.focused
	var out []string
	note := t.note(width)
	listRoom, room := rooms(height, len(rows), len(note))
	cursor := min(max(t.cursor, 0), max(len(rows)-1, 0))
	start := min(max(cursor-listRoom+1, 0), max(len(rows)-listRoom, 0))
	for i := start; i < min(start+listRoom, len(rows)); i++ {
		r := rows[i]
		if r.Header {
			style := st.Warning
			if r.OK {
				style = st.Success
			}
			line := style.Render("◆ " + r.Name)
			if focused && i == cursor {
				line = st.Selection.Render(termtext.PadRight("◆ "+r.Name, width))
			}
			out = append(out, ansi.Truncate(line, width, "…"))
			continue
		}
		box := "[ ]"
		if r.Enabled {
			box = "[x]"
		}
		line := box + " " + r.Name
		if strings.Contains(r.Name, "__") {
			line = "  " + line // under its server
		}
		if r.Confirm {
			line += " ⚠"
		}
		if r.Always {
			line += " always"
		}
		if r.Tokens > 0 {
			line += " " + st.Muted.Render(format.Tokens(r.Tokens)+" tok")
		}
		if r.MCP != "" {
			line += " (" + r.MCP + ")"
		}
		if focused && i == cursor {
			line = st.Selection.Render(termtext.PadRight(line, width))
		} else if r.Enabled {
			line = st.Text.Render(line)
		} else {
			line = st.Muted.Render(line)
		}
		out = append(out, line)
	}
	style := st.Muted
	if t.question != nil {
		style = st.Warning
	}
	for _, l := range note {
		out = append(out, style.Render(ansi.Truncate(l, width, "…")))
	}
	out = append(out, st.Muted.Render(strings.Repeat("─", width)))
	desc := wrapDescription(described, width)
	scroll := min(max(t.descScroll, 0), max(len(desc)-room, 0))
	for _, l := range desc[scroll:min(scroll+room, len(desc))] {
		out = append(out, st.Text.Render(l))
	}
	return out
}

// wrapDescription wraps BuildToolDescriptions text, indenting the
// continuation of a parameter line under its text so the list stays legible
// in a narrow pane.
func wrapDescription(text string, width int) []string {
	var out []string
	for _, line := range strings.Split(safe.Text(text), "\n") {
		if !strings.HasPrefix(line, "  - ") || width < 20 {
			out = append(out, termtext.WrapLine(line, width)...)
			continue
		}
		for i, l := range termtext.WrapLine(strings.TrimPrefix(line, "  - "), width-4) {
			if i == 0 {
				out = append(out, "  - "+l)
			} else {
				out = append(out, "    "+l)
			}
		}
	}
	return out
}
