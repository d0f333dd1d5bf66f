package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
)

// On a terminal, what a running call prints shows under its line as whole
// lines, stripped of escape sequences, bounded per call; into a log only
// the calls' lines go.
func TestRunningCallsOutputShowsOnATerminal(t *testing.T) {
	call := func(typ events.Type, text string) events.Event {
		return events.Event{Type: typ, Text: text, Tool: &events.ToolPayload{Tool: "shell_exec", CallID: "c1",
			Arguments: map[string]any{"command": "make"}, Success: true, Status: "ok", Result: "done"}}
	}
	feed := func(tty bool, evs ...events.Event) string {
		var b strings.Builder
		p := newEventPrinter(&b, tty)
		p.color = false
		for _, e := range evs {
			p.Publish(e)
		}
		return b.String()
	}
	run := []events.Event{call(events.ToolCallStart, ""), call(events.ToolOutput, "go build\nok \x1b[31mpkg"),
		call(events.ToolOutput, " 0.1s\n"), call(events.ToolOutput, "PASS"), call(events.ToolCallEnd, "")}
	got := feed(true, run...)
	want := "→ shell_exec {\"command\":\"make\"}\n  │ go build\n  │ ok pkg 0.1s\n  │ PASS\n✓ shell_exec "
	if !strings.HasPrefix(got, want) {
		t.Errorf("on a terminal:\n%s\nwant it to start\n%s", got, want)
	}
	if got := feed(false, run...); strings.Contains(got, "│") {
		t.Errorf("into a log the output is shown:\n%s", got)
	}
	many := []events.Event{call(events.ToolCallStart, "")}
	for i := range liveLines + 50 {
		many = append(many, call(events.ToolOutput, fmt.Sprintf("line %d\n", i)))
	}
	got = feed(true, append(many, call(events.ToolCallEnd, ""))...)
	if n := strings.Count(got, "│ line "); n != liveLines || !strings.Contains(got, "│ … (more output, not shown: the call's result is what the model reads)\n✓") {
		t.Errorf("%d output lines shown of %d, want %d and a line saying there is more:\n%s", n, liveLines+50, liveLines, got[len(got)-300:])
	}
	// A line that never ends is shown in pieces, not held whole.
	long := []events.Event{call(events.ToolCallStart, "")}
	for range 3 {
		long = append(long, call(events.ToolOutput, strings.Repeat("x", maxLiveLine)))
	}
	if got := feed(true, long...); strings.Count(got, "│ "+strings.Repeat("x", maxLiveLine)) != 1 {
		t.Errorf("an endless line is held: %d bytes printed", len(got))
	}
}
