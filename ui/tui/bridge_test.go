package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
)

func TestBridgeCoalescesDeltasAndKeepsOrder(t *testing.T) {
	bus := events.New()
	sub := bus.Subscribe(1024)
	var mu sync.Mutex
	var batches []eventsMsg
	done := make(chan struct{})
	go func() {
		bridge(sub, func(m any) {
			mu.Lock()
			batches = append(batches, m.(eventsMsg))
			mu.Unlock()
		}, time.Hour) // only flushes by other events or close
		close(done)
	}()
	run := events.RunInfo{ID: "r"}
	for _, s := range []string{"a", "b", "c"} {
		bus.Publish(events.Event{Type: events.Token, Run: run, Text: s})
	}
	bus.Publish(events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{Tool: "calculator"}})
	bus.Publish(events.Event{Type: events.Token, Run: run, Text: "d"})
	bus.Publish(events.Event{Type: events.Thinking, Run: run, Text: "t"})
	bus.Publish(events.Event{Type: events.Token, Run: run, Text: "e"})
	bus.Close()
	<-done
	var flat []events.Event
	for _, b := range batches {
		flat = append(flat, b...)
	}
	want := []struct {
		typ  events.Type
		text string
	}{{events.Token, "abc"}, {events.ToolCallStart, ""}, {events.Token, "d"}, {events.Thinking, "t"}, {events.Token, "e"}}
	if len(flat) != len(want) {
		t.Fatalf("got %d events: %+v", len(flat), flat)
	}
	for i, w := range want {
		if flat[i].Type != w.typ || flat[i].Text != w.text {
			t.Fatalf("event %d = %s %q, want %s %q", i, flat[i].Type, flat[i].Text, w.typ, w.text)
		}
	}
}

// An event that is not a delta goes out at once, with the deltas before
// it, not at the end of the window.
func TestBridgeSendsOtherEventsAtOnce(t *testing.T) {
	bus := events.New()
	defer bus.Close()
	sub := bus.Subscribe(16)
	got := make(chan eventsMsg, 4)
	go bridge(sub, func(m any) { got <- m.(eventsMsg) }, time.Hour)
	run := events.RunInfo{ID: "r"}
	bus.Publish(events.Event{Type: events.Token, Run: run, Text: "a"})
	bus.Publish(events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{Tool: "calculator"}})
	var flat []events.Event
	for len(flat) < 2 {
		select {
		case b := <-got:
			flat = append(flat, b...)
		case <-time.After(5 * time.Second):
			t.Fatalf("after an hour's window was opened, only %+v arrived: the tool event must flush at once", flat)
		}
	}
	if flat[0].Text != "a" || flat[1].Type != events.ToolCallStart {
		t.Fatalf("got %+v, want the delta then the tool event", flat)
	}
}

// While the program is busy (send blocks), the bridge keeps draining the
// subscription, so a one-event buffer drops nothing; what arrived
// meanwhile goes out merged once the program takes messages again.
func TestBridgeDrainsWhileTheProgramIsBusy(t *testing.T) {
	bus := events.New()
	defer bus.Close()
	sub := bus.Subscribe(1)
	busy, release := make(chan struct{}), make(chan struct{})
	got := make(chan eventsMsg, 16)
	first := true
	go bridge(sub, func(m any) {
		if first {
			first = false
			close(busy)
			<-release
		}
		got <- m.(eventsMsg)
	}, time.Millisecond)
	run := events.RunInfo{ID: "r"}
	bus.Publish(events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{Tool: "calculator"}})
	<-busy
	var want strings.Builder
	for i := range 200 {
		text := fmt.Sprintf("t%d ", i)
		want.WriteString(text)
		bus.Publish(events.Event{Type: events.Token, Run: run, Text: text})
		for deadline := time.Now().Add(5 * time.Second); len(sub.C) > 0; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				t.Fatalf("delta %d was never taken from the subscription while the program was busy", i)
			}
		}
	}
	close(release)
	var text strings.Builder
	deadline := time.After(5 * time.Second)
	for text.Len() < want.Len() {
		select {
		case b := <-got:
			for _, e := range b {
				text.WriteString(e.Text)
			}
		case <-deadline:
			t.Fatalf("got %q of %q", text.String(), want.String())
		}
	}
	if text.String() != want.String() || sub.Dropped() != 0 {
		t.Errorf("got %q (%d dropped), want %q", text.String(), sub.Dropped(), want.String())
	}
}

func TestBridgeFlushesDeltasAfterWindow(t *testing.T) {
	bus := events.New()
	sub := bus.Subscribe(16)
	got := make(chan eventsMsg, 4)
	go bridge(sub, func(m any) { got <- m.(eventsMsg) }, 10*time.Millisecond)
	defer bus.Close()
	bus.Publish(events.Event{Type: events.Token, Text: "x"})
	bus.Publish(events.Event{Type: events.Token, Text: "y"})
	select {
	case b := <-got:
		if len(b) != 1 || b[0].Text != "xy" {
			t.Fatalf("batch = %+v", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("deltas never flushed")
	}
}
