package tui

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
)

// A reply cut by its length limit (or a full window) is said by a notice
// the agent publishes before the turn's end: the reply is drawn once,
// above the notice, not again below it.
func TestCutReplyIsDrawnOnce(t *testing.T) {
	for _, notice := range []string{
		"The reply stopped at its length limit (num_predict = 16 tokens); raise num_predict to let it finish.",
		"The reply stopped: the 2,048-token window is full (the prompt took 2,000 tokens and the reply 48).",
	} {
		m := newTestModel(t, 100, 30)
		run := fakeRun(m, "Tell me about the sea")
		reply := "The sea covers most of the planet and"
		feed(m, tok(run, "The sea covers "), tok(run, "most of the planet and"),
			events.Event{Type: events.Notice, Run: run, Text: notice},
			turnEnd(run, 1, reply, 0))
		v := screen(t, m)
		if n := strings.Count(v, "most of the planet"); n != 1 {
			t.Fatalf("the cut reply is drawn %d times:\n%s", n, v)
		}
		lines := strings.Split(v, "\n")
		at := func(s string) int {
			for i, l := range lines {
				if strings.Contains(l, s) {
					return i
				}
			}
			return -1
		}
		if r, n := at("most of the planet"), at("The reply stopped"); r < 0 || n < r {
			t.Fatalf("the notice (line %d) is not below the reply (line %d):\n%s", n, r, v)
		}
	}
}
