package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// hostile is what a file_read or http_request result can hold: colour,
// a carriage return that would overwrite the panel's border, and an OSC 52
// sequence that would write the person's clipboard.
const hostile = "\x1b[31mred\x1b[0m\rXX\x1b]52;c;Zm9v\x07"

func TestEscapeSplitAcrossDeltasIsHeldBack(t *testing.T) {
	var s streamText
	for _, d := range []string{"a\x1b[3", "1mb\x1b]0;ti", "tle\x07c"} {
		s.Append(d)
	}
	if got := s.String(); got != "abc" {
		t.Fatalf("stream = %q, want %q", got, "abc")
	}
}

// sgr matches the colour and weight sequences jarvis itself draws with.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// assertSafe fails when the frame holds anything a terminal would act on
// rather than print, other than the styling jarvis draws itself.
func assertSafe(t *testing.T, frame string) {
	t.Helper()
	frame = sgr.ReplaceAllString(frame, "")
	if i := strings.IndexAny(frame, "\x1b\r\a\t\x00\x7f"); i >= 0 {
		t.Fatalf("frame holds control byte %q at %d:\n%q", frame[i], i, frame)
	}
}

func TestTabsInStreamAndMarkdownStayWithinWidth(t *testing.T) {
	m := newTestModel(t, 60, 24)
	run := fakeRun(m, "code please")
	deep := strings.Repeat("\t", 14) + "return x // a line indented by tabs far past the width"
	feed(m, tok(run, "func f() {\n\tif x {\n"+deep+"\n\t}\n}\n"))
	v := screen(t, m)
	assertSafe(t, v)
	if !strings.Contains(v, "    if x {") {
		t.Fatalf("a streamed tab is not four columns:\n%s", v)
	}

	md := "Here:\n\n```go\nfunc f() {\n\tif x {\n" + deep + "\n\t}\n}\n```\n"
	feed(m, turnEnd(run, 1, md, 0), events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 1}})
	m.Update(runDoneMsg{runID: run.ID})
	v = screen(t, m)
	assertSafe(t, v)
	if !strings.Contains(v, "if x {") {
		t.Fatalf("the code block is not shown:\n%s", v)
	}
}

func TestToolResultAndStreamAreStripped(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "read it")
	args := map[string]any{"path": "/tmp/x\x1b[2J"}
	feed(m, events.Event{Type: events.Thinking, Run: run, Text: "hmm\x1b]0;pwned\x07\r"},
		toolStart(run, "c1", "file_read", args, 1),
		toolEnd(run, "c1", "file_read", args, tools.StatusOK, hostile, 0.001),
		tok(run, "answer "+hostile))
	if p := m.run.current.panels["c1"]; p.result != "redXX" {
		t.Fatalf("stored result = %q, want the text only", p.result)
	}
	m.showThinking = true
	v := screen(t, m)
	assertSafe(t, v)
	for _, want := range []string{"→ redXX", "answer redXX", "hmm"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	m.expand = true
	assertSafe(t, screen(t, m))
}

// A reply set again after it was final (turn_end arriving after the run's
// end) must be drawn again: its cache follows the text's version.
func TestFinalTextChangedAfterFinishIsRedrawn(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "q")
	feed(m, tok(run, "a draft of the answer"))
	m.Update(runDoneMsg{runID: run.ID, result: &agent.Result{Model: "qwen3:8b", Turns: 1}})
	if !m.run.current.blocks[0].(*textBlock).final {
		t.Fatal("the run's end did not make the text final")
	}
	if v := screen(t, m); !strings.Contains(v, "a draft of the answer") {
		t.Fatalf("draft not shown:\n%s", v)
	}
	feed(m, turnEnd(run, 1, "the **final** answer", 0))
	v := ansi.Strip(screen(t, m))
	if !strings.Contains(v, "the final answer") || strings.Contains(v, "a draft") {
		t.Fatalf("the text set after the end is not what is shown:\n%s", v)
	}
}
