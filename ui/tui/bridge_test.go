package tui

import (
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
	if len(batches) != 2 {
		t.Fatalf("want 2 batches (flushed by the tool event, then by close), got %d", len(batches))
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
