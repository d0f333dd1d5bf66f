package tui

import (
	"runtime/debug"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A turn makes garbage in proportion to the conversation (the request
// carrying all of it, the frames, glamour's rendering of the reply), and
// Go hands the heap's freed pages back to the system only gradually. So a
// workbench waiting for the person kept resident the peak of its last
// turn: about 7 MB more than it needed at the end of a 100,000-token
// session (BenchmarkSessionMemory). Once a run has ended and no other has
// started for releaseMemoryAfter, jarvis collects and returns the free
// memory at once. That costs a collection of a heap of a few megabytes,
// while nothing is being drawn, and the page faults of taking the memory
// back at the next turn: a few milliseconds in all (the CPU of a 20,000-
// token answer is unchanged, BenchmarkEndToEndStream20k).

// releaseMemoryAfter is how long the workbench must have been idle, after
// start-up or a run, before it returns freed memory.
const releaseMemoryAfter = time.Second

// startupSettles is how long after start the first release waits: the
// server check, the model list and the side pane's first state are done
// by then.
const startupSettles = 2 * time.Second

// freeOSMemory is debug.FreeOSMemory; tests count its calls.
var freeOSMemory = debug.FreeOSMemory

// releaseMemoryMsg asks for the release, if no run has started since the
// run numbered seq ended (0: since start-up).
type releaseMemoryMsg struct{ seq int }

// releaseMemoryLater asks for the release d from now, for the runs as
// they stand now; nil when releases are off (m.releaseAfter is 0).
func (m *model) releaseMemoryLater(d time.Duration) tea.Cmd {
	if m.releaseAfter <= 0 {
		return nil
	}
	seq := m.run.seq
	return tea.Tick(d, func(time.Time) tea.Msg { return releaseMemoryMsg{seq: seq} })
}

// releaseMemory returns freed memory to the system, in a command so the
// collection does not hold up the event loop, unless a run is under way
// or has started since the request.
func (m *model) releaseMemory(msg releaseMemoryMsg) tea.Cmd {
	if m.run.active || msg.seq != m.run.seq {
		return nil
	}
	return func() tea.Msg {
		freeOSMemory()
		return nil
	}
}
