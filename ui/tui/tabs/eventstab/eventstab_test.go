package eventstab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/ui/tui/look"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
)

// The log takes the bus's events as the pane passes them: deltas are not
// logged one by one, text from outside loses its escape sequences, and
// the ring keeps the newest eventLogSize.
func TestTheLogKeepsTheNewestEventsSafe(t *testing.T) {
	tab := New()
	tab.Update(tabs.Size{Width: 60, Height: 10})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tab.Update(events.Event{Type: events.Token, Time: at, Text: "a token"})
	tab.Update(events.Event{Type: events.Notice, Time: at, Text: "hello \x1b]52;c;aGk=\x07world"})
	if len(tab.log) != 1 || strings.Contains(tab.log[0].text, "\x1b") {
		t.Fatalf("log %+v: want the notice alone, without its escape sequence", tab.log)
	}
	for i := range eventLogSize + 5 {
		tab.Update(events.Event{Type: events.Notice, Time: at, Text: fmt.Sprintf("event %d", i)})
	}
	if len(tab.log) != eventLogSize || tab.logAt(0).text != "notice event 5" {
		t.Fatalf("the ring holds %d events from %q", len(tab.log), tab.logAt(0).text)
	}
	th, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	view := ansi.Strip(strings.Join(tab.View(look.Of(th), 60, 10), "\n"))
	if !strings.Contains(view, fmt.Sprintf("event %d", eventLogSize+4)) || strings.Contains(view, Hint) {
		t.Fatalf("the view does not end with the newest event, or shows the hint unfocused:\n%s", view)
	}
}
