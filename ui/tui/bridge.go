package tui

import (
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
)

// CoalesceWindow is how long token and thinking deltas are gathered before
// they reach the model: Bubble Tea renders after every message, and one
// render per token is what makes other terminal agents burn a core.
const CoalesceWindow = 30 * time.Millisecond

// eventBuffer is how many events the workbench's subscription holds. The
// bridge drains it while the screen draws, so it fills only while the
// bridge waits for a CPU: about a scheduler's time slice of events, which
// reached 1,100-1,500 with the stand-in streaming 20,000 tokens at some
// 100,000 a second (BenchmarkEndToEndStream20k, none dropped), and is a
// handful at the rate of a real model. Each slot costs an event's size
// (152 bytes) of resident memory once the ring has gone round: 4,096 of
// them were 600 KB.
const eventBuffer = 2048

// eventsMsg carries a batch of events, in order, with consecutive deltas of
// one run merged.
type eventsMsg []events.Event

// bridge forwards bus events to the program. Deltas are merged for up to
// CoalesceWindow; any other event flushes the pending deltas first and goes
// out at once, so order is kept and terminal events are never delayed.
//
// The program takes a message only between two of its updates, so send
// blocks while the screen is drawn. send runs on a goroutine of its own,
// and what is flushed meanwhile waits here, deltas merged: the bridge keeps
// draining the subscription whatever the screen is doing, so a slow frame
// drops no delta and the buffer is sized by how long the bridge may wait
// for a CPU, not by how slow a frame may be (eventBuffer).
func bridge(sub *events.Subscription, send func(any), window time.Duration) {
	out := make(chan eventsMsg)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for batch := range out {
			send(batch)
		}
	}()
	defer func() {
		close(out)
		<-sent
	}()
	// pending is the batch being gathered; ready what was flushed and
	// waits for the program to take it.
	var pending, ready []events.Event
	// delta gathers the text of the last pending event when it is a delta:
	// appending to a builder keeps a window of thousands of tokens linear.
	var delta strings.Builder
	deltaOpen := false
	var timer *time.Timer
	var timerC <-chan time.Time
	closeDelta := func() {
		if deltaOpen {
			pending[len(pending)-1].Text = delta.String()
			delta.Reset()
			deltaOpen = false
		}
	}
	flush := func() {
		closeDelta()
		ready = appendMerged(ready, pending)
		pending = nil
		if timer != nil {
			timer.Stop()
			timerC = nil
		}
	}
	for {
		var outC chan<- eventsMsg
		if len(ready) > 0 {
			outC = out
		}
		select {
		case outC <- eventsMsg(ready):
			ready = nil
		case e, ok := <-sub.C:
			if !ok {
				flush()
				if len(ready) > 0 {
					out <- eventsMsg(ready)
				}
				return
			}
			if !e.Type.Lossy() {
				closeDelta()
				pending = append(pending, e)
				flush()
				continue
			}
			if n := len(pending); deltaOpen && mergeable(pending[n-1], e) {
				delta.WriteString(e.Text)
			} else {
				closeDelta()
				pending = append(pending, e)
				delta.WriteString(e.Text)
				deltaOpen = true
			}
			if timerC == nil {
				if timer == nil {
					timer = time.NewTimer(window)
				} else {
					timer.Reset(window)
				}
				timerC = timer.C
			}
		case <-timerC:
			timerC = nil
			closeDelta()
			ready = appendMerged(ready, pending)
			pending = nil
		}
	}
}

// appendMerged appends batch to ready, joining a delta that continues
// the last one ready holds (the screen was slow to take it).
func appendMerged(ready, batch []events.Event) []events.Event {
	if n := len(ready); n > 0 && len(batch) > 0 && mergeable(ready[n-1], batch[0]) {
		ready[n-1].Text += batch[0].Text
		batch = batch[1:]
	}
	return append(ready, batch...)
}

// mergeable reports whether delta b continues delta a: the same kind, run
// and call.
func mergeable(a, b events.Event) bool {
	return a.Type.Lossy() && a.Type == b.Type && a.Run.ID == b.Run.ID && sameCall(a, b)
}

// sameCall reports whether two deltas belong to one tool call (or to
// none): the output of parallel calls must not run together.
func sameCall(a, b events.Event) bool {
	if a.Tool == nil || b.Tool == nil {
		return a.Tool == nil && b.Tool == nil
	}
	return a.Tool.CallID == b.Tool.CallID
}
