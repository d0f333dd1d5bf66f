package tui

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// thinkingServer serves a thinking model whose answers take two turns:
// a calculator call, then the answer, each with its thinking.
func thinkingServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools, engine.CapThinking)
	srv.On(et.UserSays("15% of 340")).Reply(et.Think("Fifteen percent is a multiplication."), et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Times(1).Reply(et.Think("The calculator said 51."), et.Text("15% of 340 is 51."))
	srv.On(et.ToolResult("calculator")).Reply(et.Think("It is 51 again."), et.Text("It is 51, checked twice."))
	srv.Default(et.Text("ok"))
	return srv
}

// latency matches a duration as format.Latency writes it.
var latency = regexp.MustCompile(`\d+(\.\d+)?(µs|ms|s)\b`)

// answerLines are the lines of the screen that say how a run went: the
// thinking's heads, the turns' footers and the run's total, in order.
// The total's time is the run's (live) or its last message's (stored),
// microseconds apart: it is compared as a time, not a figure.
func answerLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Σ "):
			if !latency.MatchString(l) {
				out = append(out, l+" (no time)")
				continue
			}
			out = append(out, latency.ReplaceAllString(l, "TIME"))
		case strings.HasPrefix(l, "↳ "), strings.Contains(l, "▸ thought"), strings.Contains(l, "▸ thinking"):
			out = append(out, l)
		}
	}
	return out
}

// An earlier attempt shown with [ and a session reopened draw a run as
// the live transcript did: "thought" (not "thinking…"), each turn's
// footer with how full its request left the window, and the run's total.
func TestEarlierAttemptsAndReopenedSessionsShowTheRunAsLive(t *testing.T) {
	srv := thinkingServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.update(tea.WindowSizeMsg{Width: 150, Height: 40})
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	live := answerLines(l.screen())
	want := []string{"▸ thought · 5 words", "↳ ", "▸ thought · 4 words", "↳ ", "Σ 2 turns · "}
	if len(live) != len(want) {
		t.Fatalf("the live run shows %q, want lines like %q:\n%s", live, want, l.screen())
	}
	for i, w := range want {
		if !strings.HasPrefix(live[i], w) {
			t.Fatalf("line %d of the live run is %q, want it to start with %q", i, live[i], w)
		}
		if strings.HasPrefix(w, "↳") && !strings.Contains(live[i], " · ctx ") {
			t.Fatalf("the live footer %q does not say how full the window was", live[i])
		}
	}
	if strings.Contains(live[4], "(no time)") {
		t.Fatalf("the live total has no time: %q", live[4])
	}

	// Asked again, then flipped back: the first attempt as it was.
	l.typeLine("/retry")
	if !strings.Contains(l.screen(), "It is 51, checked twice.") {
		t.Fatalf("the retry did not answer:\n%s", l.screen())
	}
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("[")})
	s := l.screen()
	if !strings.Contains(s, "15% of 340 is 51.") || !strings.Contains(s, "attempt 1 of 2") {
		t.Fatalf("[ did not show the first attempt:\n%s", s)
	}
	if got := answerLines(s); strings.Join(got, "\n") != strings.Join(live, "\n") {
		t.Errorf("the earlier attempt shows\n%s\nthe live run showed\n%s", strings.Join(got, "\n"), strings.Join(live, "\n"))
	}

	// Reopened, the line shown is the first attempt (the last flipped to),
	// once the first workbench's writes have landed.
	l.m.opts.Sessions.(storeAdapter).flush()
	l2 := newLive(t, srv, dbPath, true)
	l2.update(tea.WindowSizeMsg{Width: 150, Height: 40})
	l2.do(l2.m.Init())
	s = l2.screen()
	if !strings.Contains(s, "Opened session") || !strings.Contains(s, "15% of 340 is 51.") {
		t.Fatalf("the session did not reopen on its first attempt:\n%s", s)
	}
	if got := answerLines(s); strings.Join(got, "\n") != strings.Join(live, "\n") {
		t.Errorf("the reopened session shows\n%s\nthe live run showed\n%s", strings.Join(got, "\n"), strings.Join(live, "\n"))
	}
}
