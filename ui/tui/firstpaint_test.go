package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// Init paints the frame the renderer would paint a tick later, so a
// terminal shows exactly the model's view at once.
func TestInitPaintsTheFirstFrameAtOnce(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.width, m.height = 0, 0 // as before Bubble Tea's first size message
	var out bytes.Buffer
	m.firstPaint = func() (io.Writer, int, int, bool) { return &out, 100, 30, true }
	cmd := m.paintFirstFrame()
	if cmd == nil || out.Len() == 0 {
		t.Fatalf("nothing painted (cmd %v, %d bytes)", cmd, out.Len())
	}
	if m.width != 100 || m.height != 30 {
		t.Errorf("the model was laid out at %d×%d, want the terminal's 100×30", m.width, m.height)
	}
	emu := vt.NewEmulator(100, 30)
	// Something on the screen the frame must overwrite, as a terminal has.
	emu.Write([]byte(strings.Repeat(strings.Repeat("#", 100)+"\r\n", 29)))
	emu.Write(out.Bytes())
	screen := strings.Split(emu.String(), "\n")
	want := strings.Split(ansi.Strip(m.View()), "\n")
	if len(want) != 30 {
		t.Fatalf("the view has %d lines, want 30", len(want))
	}
	for i := range want {
		if got := strings.TrimRight(screen[i], " "); got != strings.TrimRight(want[i], " ") {
			t.Errorf("line %d on the screen is %q, want the view's %q", i, got, want[i])
		}
	}
	if !strings.Contains(emu.String(), "Ask anything") {
		t.Errorf("the prompt is not on the screen:\n%s", emu.String())
	}
	// The renderer is then told to repaint at the terminal's size.
	if msg, ok := cmd().(tea.WindowSizeMsg); !ok || msg.Width != 100 || msg.Height != 30 {
		t.Errorf("the follow-up message is %#v, want a 100×30 size message", msg)
	}
}

// Lines wider than the terminal are cut, as the renderer cuts them, and a
// view taller than the terminal keeps its bottom lines.
func TestWholeFrameFitsTheTerminal(t *testing.T) {
	frame := wholeFrame("top\n"+strings.Repeat("x", 30)+"\nbottom", 10, 2)
	emu := vt.NewEmulator(10, 3)
	emu.Write([]byte(frame))
	lines := strings.Split(emu.String(), "\n")
	if got := strings.TrimRight(lines[0], " "); got != strings.Repeat("x", 10) {
		t.Errorf("first line %q, want the long line cut at 10 cells", got)
	}
	if got := strings.TrimRight(lines[1], " "); got != "bottom" {
		t.Errorf("second line %q, want bottom", got)
	}
}

// Nothing is painted on an output that is not a terminal, or when the
// first tick is too near for the paint to be sure to come before it.
func TestNoFirstPaintWhenItCannotBeSafe(t *testing.T) {
	m := newTestModel(t, 100, 30)
	m.firstPaint = func() (io.Writer, int, int, bool) { return nil, 0, 0, false }
	if cmd := m.paintFirstFrame(); cmd != nil {
		t.Error("painted without a terminal")
	}
	var out bytes.Buffer
	m.firstPaint = func() (io.Writer, int, int, bool) {
		time.Sleep(firstPaintBudget + 5*time.Millisecond)
		return &out, 100, 30, true
	}
	if cmd := m.paintFirstFrame(); cmd != nil || out.Len() != 0 {
		t.Errorf("painted %d bytes past the budget", out.Len())
	}
	if terminalOutput(&out) != nil {
		t.Error("a buffer was taken for a terminal")
	}
}
