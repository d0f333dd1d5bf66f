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

// eventsMsg carries a batch of events, in order, with consecutive deltas of
// one run merged.
type eventsMsg []events.Event

// bridge forwards bus events to the program. Deltas are merged for up to
// CoalesceWindow; any other event flushes the pending deltas first and goes
// out at once, so order is kept and terminal events are never delayed.
func bridge(sub *events.Subscription, send func(any), window time.Duration) {
	var pending []events.Event
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
		if len(pending) > 0 {
			send(eventsMsg(pending))
			pending = nil
		}
		if timer != nil {
			timer.Stop()
			timerC = nil
		}
	}
	for {
		select {
		case e, ok := <-sub.C:
			if !ok {
				flush()
				return
			}
			if !e.Type.Lossy() {
				closeDelta()
				pending = append(pending, e)
				flush()
				continue
			}
			if n := len(pending); deltaOpen && pending[n-1].Type == e.Type && pending[n-1].Run.ID == e.Run.ID && sameCall(pending[n-1], e) {
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
			if len(pending) > 0 {
				send(eventsMsg(pending))
				pending = nil
			}
		}
	}
}

// sameCall reports whether two deltas belong to one tool call (or to
// none): the output of parallel calls must not run together.
func sameCall(a, b events.Event) bool {
	if a.Tool == nil || b.Tool == nil {
		return a.Tool == nil && b.Tool == nil
	}
	return a.Tool.CallID == b.Tool.CallID
}
