// Package tabs is the workbench's side pane and the interface its tabs
// implement. A tab is a component in a package of its own (toolstab,
// eventstab, schedulertab, contexttab): a plain type the one Bubble Tea
// model calls through the Pane, never a tea.Model or a program of its
// own. It does its IO in the commands it returns.
//
// A new tab is its package and one line: its constructor in the list the
// workbench gives NewPane (newPane in ui/tui/pane.go). The pane gives each tab,
// in order, its F-key (F3 for the first), its place in the tab bar, the
// keys while it has focus, and the messages it may care about.
package tabs

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/ui/tui/look"
)

// Tab is one tab of the side pane.
type Tab interface {
	// Title is the tab's name in the tab bar and the help.
	Title() string
	// Update takes every message the workbench passes the pane: the
	// bus's events (events.Event), Size, Focus, Shown, Refresh and the
	// tab's own messages (the results of its commands). A tab ignores
	// what it does not care about.
	Update(msg tea.Msg) tea.Cmd
	// Key is a key pressed while the pane has focus on the tab (the
	// pane keeps tab, left and right to move between tabs).
	Key(k tea.KeyMsg) tea.Cmd
	// View draws the tab's body at most width cells wide, at most
	// height lines (the pane pads and cuts). It only reads: positions
	// are kept in range by Update and Key.
	View(st look.Styles, width, height int) []string
	// Hint is the tab's keys, as it shows them while it has focus.
	Hint() string
}

// Modal is a tab that can open a window over the screen (the
// Scheduler's form): while one is open it takes every key, wherever the
// focus is.
type Modal interface {
	ModalOpen() bool
	// ModalView is the open window's box, drawn centred over the
	// screen of width × height.
	ModalView(st look.Styles, width, height int) (box string, ok bool)
}

// Guarded is a tab whose keys can change what may run (a tool turned
// on, a task resumed). The workbench holds such keys behind its typing
// guard before it passes them to Key, so that prose typed into the
// focused pane never changes anything.
type Guarded interface {
	Changes(k tea.KeyMsg) bool
}

// Starter is a tab with work to start with the program (a watch).
type Starter interface{ Init() tea.Cmd }

// Closer is a tab with something to stop when the program ends.
type Closer interface{ Close() }

// The messages the pane sends its tabs.
type (
	// Size is the room a tab's body has: the pane less its tab bar and
	// the column of air after the separator. It comes with every layout
	// (a key that shows the pane, a resize): a tab only keeps it, and
	// keeps its positions in range at the Refresh that follows a resize.
	Size struct{ Width, Height int }
	// Focus says whether the pane has the keyboard's focus; a tab draws
	// its selection and hint only while it does.
	Focus struct{ Focused bool }
	// Shown is sent to a tab when it comes on screen (selected, or the
	// pane shown), At the time it did.
	Shown struct{ At time.Time }
	// Refresh is sent when what the tabs show from the workbench may
	// have changed (the tools, the agent, the conversation, the screen's
	// size): a tab keeps its positions in range for it, and starts
	// nothing. Visible says whether the pane is on screen, Showing
	// whether the tab is: a tab not on screen may leave costly work to
	// when it is (its View clamps a copy for drawing).
	Refresh struct{ Visible, Showing bool }
)
