package tabs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// firstFKey is the F-key of the first tab (F2 toggles the mouse).
const firstFKey = 3

// Pane is the side pane: the tab bar, the selected tab's body, and where
// the keys go while it has focus.
type Pane struct {
	// Visible is whether the pane is on screen (ctrl+t).
	Visible bool

	tabs    []Tab
	cur     int
	focused bool
	size    Size
}

// NewPane makes the pane with its tabs, in order: the first is shown
// first and takes F3.
func NewPane(tabs ...Tab) *Pane { return &Pane{tabs: tabs} }

// Tabs lists the pane's tabs in order.
func (p *Pane) Tabs() []Tab { return p.tabs }

// Current is the selected tab.
func (p *Pane) Current() Tab { return p.tabs[p.cur] }

// Showing reports whether t is on screen: the pane visible with t
// selected.
func (p *Pane) Showing(t Tab) bool { return p.Visible && len(p.tabs) > 0 && p.tabs[p.cur] == t }

// Focused reports whether the pane has the keyboard's focus.
func (p *Pane) Focused() bool { return p.focused }

// Focus gives the pane the keyboard's focus, or takes it back.
func (p *Pane) Focus(on bool) tea.Cmd {
	if p.focused == on {
		return nil
	}
	p.focused = on
	return p.Update(Focus{Focused: on})
}

// Select shows tab i (wrapping around either end) and tells it so.
func (p *Pane) Select(i int, now time.Time) tea.Cmd {
	n := len(p.tabs)
	p.cur = ((i % n) + n) % n
	if !p.Visible {
		return nil
	}
	return p.Current().Update(Shown{At: now})
}

// Show puts the pane on screen, or takes it off (and the focus with it);
// a pane that comes on screen tells its tab it is shown.
func (p *Pane) Show(on bool, now time.Time) tea.Cmd {
	p.Visible = on
	if !on {
		return p.Focus(false)
	}
	return p.Current().Update(Shown{At: now})
}

// FKey is the tab an F-key selects ("f3" the first), ok false for a key
// no tab has.
func (p *Pane) FKey(key string) (int, bool) {
	// Every key pressed comes here: no formatting, no allocation.
	digits, ok := strings.CutPrefix(key, "f")
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	i := n - firstFKey
	return i, i >= 0 && i < len(p.tabs)
}

// KeyOf is t's F-key as the help writes it ("F6"), "" for a tab not in
// the pane.
func (p *Pane) KeyOf(t Tab) string {
	for i, u := range p.tabs {
		if u == t {
			return KeyName(i)
		}
	}
	return ""
}

// KeyName is tab i's F-key as the help writes it ("F3").
func KeyName(i int) string { return fmt.Sprintf("F%d", i+firstFKey) }

// Resize gives the tabs the room of a pane width cells wide and height
// lines high.
func (p *Pane) Resize(width, height int) tea.Cmd {
	s := Size{Width: max(width-1, 1), Height: max(height-1, 1)}
	if s == p.size {
		return nil
	}
	p.size = s
	return p.Update(s)
}

// Size is the room a tab's body has now.
func (p *Pane) Size() Size { return p.size }

// Update passes msg to every tab (a Refresh says to each whether it is
// on screen).
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, t := range p.tabs {
		m := msg
		if _, ok := msg.(Refresh); ok {
			m = Refresh{Visible: p.Visible, Showing: p.Showing(t)}
		}
		if cmd := t.Update(m); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

// Key handles a key while the pane has focus: tab gives the focus back,
// left and right move between tabs, the rest go to the selected tab.
func (p *Pane) Key(k tea.KeyMsg, now time.Time) tea.Cmd {
	switch k.String() {
	case "tab":
		return p.Focus(false)
	case "left":
		return p.Select(p.cur-1, now)
	case "right":
		return p.Select(p.cur+1, now)
	}
	return p.Current().Key(k)
}

// Changes reports whether k, pressed in the focused pane, changes what
// may run (see Guarded).
func (p *Pane) Changes(k tea.KeyMsg) bool {
	g, ok := p.Current().(Guarded)
	return ok && g.Changes(k)
}

// Modal is the tab with a window open over the screen, if any.
func (p *Pane) Modal() (Modal, bool) {
	for _, t := range p.tabs {
		if m, ok := t.(Modal); ok && m.ModalOpen() {
			return m, true
		}
	}
	return nil, false
}

// Init starts what the tabs start with the program.
func (p *Pane) Init() tea.Cmd {
	var cmds []tea.Cmd
	for _, t := range p.tabs {
		if s, ok := t.(Starter); ok {
			cmds = append(cmds, s.Init())
		}
	}
	return tea.Batch(cmds...)
}

// Close stops what the tabs run.
func (p *Pane) Close() {
	for _, t := range p.tabs {
		if c, ok := t.(Closer); ok {
			c.Close()
		}
	}
}

// View draws the pane width cells wide and height lines high: the tab
// bar, then the selected tab's body after a column of air.
func (p *Pane) View(st look.Styles, width, height int) []string {
	var bar []string
	for i, t := range p.tabs {
		if i == p.cur {
			bar = append(bar, st.TabActive.Render(" "+t.Title()+" "))
		} else {
			bar = append(bar, st.TabInactive.Render(" "+t.Title()+" "))
		}
	}
	out := []string{strings.Join(bar, "")}
	width-- // one column of air after the separator
	for _, l := range p.Current().View(st, width, height-1) {
		out = append(out, ansi.Truncate(l, width, "…"))
	}
	for len(out) < height {
		out = append(out, "")
	}
	for i, l := range out[:height] {
		out[i] = " " + termtext.PadRight(l, width)
	}
	return out[:height]
}
