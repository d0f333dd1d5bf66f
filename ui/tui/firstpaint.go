package tui

import (
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// Bubble Tea v1 writes a frame only when its frame ticker fires, and Run
// starts that ticker just before it calls Init: left to the renderer, the
// first frame reaches the screen one frame period (33 ms at jarvis's 30
// frames a second) after the program could have drawn it, more than the
// whole start-up before it. So Init paints the first frame itself, straight to the terminal
// and in the form the renderer paints a whole frame on the alternate
// screen: from the top-left corner, every line truncated to the width and
// cleared to its end. The renderer's first flush, at the first tick,
// rewrites the same lines, so nothing on the screen moves.
//
// The renderer and Init write from different goroutines, so the paint
// happens only well before the first tick can fire (firstPaintBudget
// after Init began; the tick is a frame period after the ticker started).
// For the one case that guard cannot rule out, a stall between the check
// and the write, the renderer is told to repaint everything once its
// first ticks have passed: an ordinary resize message for the size the
// terminal has then, which costs one redraw of identical lines.

// firstPaintBudget is how long Init may take to render the first frame
// and still write it; past it the renderer's first tick is near, and the
// frame is left to the renderer.
const firstPaintBudget = 15 * time.Millisecond

// terminalOut is where the first frame may be painted: a writer and its
// size now. ok is false when the output is not a terminal whose size can
// be read (a test's buffer, a pipe), and then nothing is painted.
type terminalOut func() (w io.Writer, width, height int, ok bool)

// terminalOutput is the terminalOut for the program's output: opts.Out,
// or the standard output Bubble Tea uses when that is nil.
func terminalOutput(out io.Writer) terminalOut {
	if out == nil {
		out = os.Stdout
	}
	f, isFile := out.(*os.File)
	if !isFile {
		return nil
	}
	return func() (io.Writer, int, int, bool) {
		if !term.IsTerminal(int(f.Fd())) {
			return nil, 0, 0, false
		}
		w, h, err := term.GetSize(int(f.Fd()))
		if err != nil || w <= 0 || h <= 0 {
			return nil, 0, 0, false
		}
		return f, w, h, true
	}
}

// paintFirstFrame lays the model out for the terminal's size and writes
// its first frame, and returns the command that has the renderer repaint
// once its first ticks have passed; nil when it painted nothing.
func (m *model) paintFirstFrame() tea.Cmd {
	if m.firstPaint == nil {
		return nil
	}
	began := time.Now()
	out, width, height, ok := m.firstPaint()
	if !ok {
		return nil
	}
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	frame := wholeFrame(m.View(), width, height)
	if time.Since(began) > firstPaintBudget {
		return nil
	}
	if _, err := io.WriteString(out, frame); err != nil {
		return nil
	}
	size := m.firstPaint
	return tea.Tick(3*time.Second/framesPerSecond, func(time.Time) tea.Msg {
		_, width, height, ok := size()
		if !ok {
			return nil
		}
		return tea.WindowSizeMsg{Width: width, Height: height}
	})
}

// wholeFrame is view as Bubble Tea's renderer writes a whole frame on the
// alternate screen: cursor home, at most height lines, each truncated to
// width and cleared to the end of the line, and the cursor left below the
// last line.
func wholeFrame(view string, width, height int) string {
	lines := strings.Split(view, "\n")
	if len(lines) > height {
		lines = lines[len(lines)-height:]
	}
	var b strings.Builder
	b.Grow(len(view) + len(lines)*8 + 16)
	b.WriteString(ansi.CursorHomePosition)
	for i, line := range lines {
		if i == 0 {
			b.WriteByte('\r')
		}
		line = ansi.Truncate(line, width, "")
		b.WriteString(line)
		if ansi.StringWidth(line) < width {
			b.WriteString(ansi.EraseLineRight)
		}
		if i < len(lines)-1 {
			b.WriteString("\r\n")
		}
	}
	b.WriteString(ansi.CursorPosition(0, len(lines)))
	return b.String()
}
