package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// eventPrinter writes one line per tool event to stderr, which is how the
// headless commands show tool calls while stdout stays clean for the answer.
// Tool names, arguments and results come from models and tools, so each is
// stripped of escape sequences before jarvis adds its own colours.
type eventPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	// quietFailures leaves out the lines of calls that failed: a caller
	// that prints the whole result itself (tools run) says it once.
	quietFailures bool
	// live, on a terminal, shows what running calls print (a command's
	// output, an MCP server's progress) as it comes, under the call's
	// line; a log gets only the calls' lines. partial holds each call's
	// unfinished line, shown counts its lines against liveLines.
	live    bool
	partial map[string]string
	shown   map[string]int
}

// liveLines bounds the output lines shown per call: the model reads the
// result; a command that prints thousands of lines would bury the rest.
const liveLines = 200

// maxLiveLine is how much of an unfinished line is held before it is
// shown as it is.
const maxLiveLine = 4096

func newEventPrinter(w io.Writer, tty bool) *eventPrinter {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &eventPrinter{w: w, color: tty && !noColor, live: tty}
}

const (
	ansiDim    = "\x1b[2m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// paint colours s, which must already be safe to print.
func (p *eventPrinter) paint(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + ansiReset
}

// Publish prints tool events and ignores the rest.
func (p *eventPrinter) Publish(e events.Event) {
	if p.live && e.Tool != nil {
		switch e.Type {
		case events.ToolOutput:
			p.output(e.Tool.CallID, e.Text)
			return
		case events.ToolCallEnd, events.ToolTimeout, events.ToolCallError, events.ToolCallDenied:
			p.mu.Lock()
			rest := p.partial[e.Tool.CallID]
			p.mu.Unlock()
			if rest != "" {
				p.output(e.Tool.CallID, "\n") // the unfinished line, before the call's end
			}
			p.mu.Lock()
			delete(p.partial, e.Tool.CallID)
			delete(p.shown, e.Tool.CallID)
			p.mu.Unlock()
		}
	}
	line := p.format(e)
	if line == "" {
		return
	}
	p.println(line)
}

// output prints the whole lines of a running call's output, indented
// under its line and stripped of escape sequences.
func (p *eventPrinter) output(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partial == nil {
		p.partial, p.shown = map[string]string{}, map[string]int{}
	}
	lines := strings.Split(p.partial[id]+text, "\n")
	p.partial[id] = lines[len(lines)-1]
	if len(p.partial[id]) > maxLiveLine { // a line with no end (a progress bar, minified text) is shown in pieces
		p.partial[id] = ""
		lines = append(lines, "")
	}
	for _, l := range lines[:len(lines)-1] {
		switch n := p.shown[id]; {
		case n < liveLines:
			fmt.Fprintln(p.w, p.paint(ansiDim, "  │ "+strings.TrimRight(safe.Text(l), "\r")))
		case n == liveLines:
			fmt.Fprintln(p.w, p.paint(ansiDim, "  │ … (more output, not shown: the call's result is what the model reads)"))
		}
		p.shown[id]++
	}
}

func (p *eventPrinter) println(line string) {
	p.mu.Lock()
	fmt.Fprintln(p.w, line)
	p.mu.Unlock()
}

func (p *eventPrinter) format(e events.Event) string {
	t := e.Tool
	if t == nil {
		return ""
	}
	// A model may call a tool by any name, so the name is not trusted either.
	name := safe.Text(t.Tool)
	switch e.Type {
	case events.ToolCallStart:
		return p.paint(ansiDim, fmt.Sprintf("→ %s %s", name, argsPreview(t.Arguments, 120)))
	case events.ToolCallEnd:
		if !t.Success && p.quietFailures {
			return ""
		}
		return p.ranLine(name, t.Success, t.LatencySeconds, t.CostUSD, preview(t.Result, 100))
	case events.ToolCallDenied:
		if p.quietFailures {
			return ""
		}
		return p.deniedLine(name, preview(t.Result, 100))
	case events.ToolCallError:
		if p.quietFailures {
			return ""
		}
		return p.rejectedLine(name, preview(t.Result, 120))
	case events.ToolTimeout:
		if p.quietFailures {
			return ""
		}
		return fmt.Sprintf("%s %s timed out after %s", p.paint(ansiYellow, "⏱"), name, format.Latency(t.LatencySeconds))
	}
	return ""
}

// ranLine is the end of a call that ran: mark, name, latency, cost, result.
func (p *eventPrinter) ranLine(name string, ok bool, latency, cost float64, text string) string {
	mark, code := "✓", ansiGreen
	if !ok {
		mark, code = "✗", ansiRed
	}
	return fmt.Sprintf("%s %s %s %s → %s", p.paint(code, mark), name,
		p.paint(ansiDim, format.Latency(latency)), p.paint(ansiDim, format.Cost(cost, false)), text)
}

// deniedLine is a call that needed approval and did not get it.
func (p *eventPrinter) deniedLine(name, text string) string {
	return fmt.Sprintf("%s %s not run: %s", p.paint(ansiYellow, "⊘"), name, text)
}

// rejectedLine is a call that could not start (unknown tool, bad arguments).
func (p *eventPrinter) rejectedLine(name, text string) string {
	return fmt.Sprintf("%s %s %s", p.paint(ansiRed, "✗"), name, text)
}

// failure is the one line (continued on indented lines when the text has
// several) that says how a call failed, with its whole text: what tools run
// prints instead of the event's preview.
func (p *eventPrinter) failure(r tools.Result) string {
	name := safe.Text(r.ToolName)
	text := strings.ReplaceAll(strings.TrimRight(safe.Text(r.Content), "\n"), "\n", "\n  ")
	switch {
	case r.Status == tools.StatusDenied || r.Status == tools.StatusCancelled && r.LatencySeconds == 0:
		return p.deniedLine(name, text)
	case r.LatencySeconds == 0: // it never ran
		return p.rejectedLine(name, text)
	}
	return p.ranLine(name, false, r.LatencySeconds, r.CostUSD, text)
}

// preview is a result's start on one line, safe to print.
func preview(s string, max int) string { return format.OneLine(safe.Text(s), max) }

// argsPreview is a call's arguments as compact JSON on one line. JSON
// escapes C0 controls but not C1 ones or DEL, so it is stripped too.
func argsPreview(args map[string]any, max int) string {
	return format.Cut(safe.Text(format.Args(args, 0)), max)
}
