package cli

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// eventPrinter writes one line per tool event to stderr, which is how the
// headless commands show tool calls while stdout stays clean for the answer.
type eventPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
}

func newEventPrinter(w io.Writer, tty bool) *eventPrinter {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &eventPrinter{w: w, color: tty && !noColor}
}

const (
	ansiDim    = "\x1b[2m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

func (p *eventPrinter) paint(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + ansiReset
}

// Publish prints tool events and ignores the rest.
func (p *eventPrinter) Publish(e events.Event) {
	line := p.format(e)
	if line == "" {
		return
	}
	p.mu.Lock()
	fmt.Fprintln(p.w, line)
	p.mu.Unlock()
}

func (p *eventPrinter) format(e events.Event) string {
	t := e.Tool
	switch e.Type {
	case events.ToolCallStart:
		return p.paint(ansiDim, fmt.Sprintf("→ %s %s", t.Tool, format.Args(t.Arguments, 120)))
	case events.ToolCallEnd:
		mark, code := "✓", ansiGreen
		if !t.Success {
			mark, code = "✗", ansiRed
		}
		return fmt.Sprintf("%s %s %s %s → %s", p.paint(code, mark), t.Tool,
			p.paint(ansiDim, format.Latency(t.LatencySeconds)), p.paint(ansiDim, format.Cost(t.CostUSD, false)),
			format.OneLine(t.Result, 100))
	case events.ToolCallDenied:
		return fmt.Sprintf("%s %s not run: %s", p.paint(ansiYellow, "⊘"), t.Tool, format.OneLine(t.Result, 100))
	case events.ToolCallError:
		return fmt.Sprintf("%s %s %s", p.paint(ansiRed, "✗"), t.Tool, format.OneLine(t.Result, 120))
	case events.ToolTimeout:
		return fmt.Sprintf("%s %s timed out after %s", p.paint(ansiYellow, "⏱"), t.Tool, format.Latency(t.LatencySeconds))
	}
	return ""
}
