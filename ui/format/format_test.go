package format

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
)

func TestLatency(t *testing.T) {
	cases := map[float64]string{0.000085: "85µs", 0.0123: "12.3ms", 1.2449: "1.24s", 125: "2m05s", 0: "0µs"}
	for in, want := range cases {
		if got := Latency(in); got != want {
			t.Errorf("Latency(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestCostArgsAndCuts(t *testing.T) {
	if got := Cost(0.00123, false); got != "$0.0012" {
		t.Errorf("Cost = %q", got)
	}
	if got := Cost(0.001, true); got != "~$0.0010" {
		t.Errorf("estimated Cost = %q", got)
	}
	if got := Args(map[string]any{"b": 1, "a": "x<y"}, 0); got != `{"a":"x<y","b":1}` {
		t.Errorf("Args = %q", got)
	}
	if got := Args(nil, 10); got != "{}" {
		t.Errorf("Args(nil) = %q", got)
	}
	if got := PrettyArgs(map[string]any{"code": "print(1)"}); got != "{\n  \"code\": \"print(1)\"\n}" {
		t.Errorf("PrettyArgs = %q", got)
	}
	var lines []string
	for _, l := range ArgLines(map[string]any{"code": "def f():\n    return 1\n", "language": "python", "n": 2, "note": "a\x1b[2Jb\nc"}) {
		lines = append(lines, l.Indent+l.Text)
	}
	if got := strings.Join(lines, "|"); got != `code:|  def f():|      return 1|language: "python"|n: 2|note: "a\u001b[2Jb\nc"` {
		t.Errorf("ArgLines = %q", got)
	}
	if got := Args(map[string]any{"code": "if x:\n    y()"}, 0); got != `{"code":"if x:\n    y()"}` {
		t.Errorf("Args lost the code's indentation: %q", got)
	}
	if got := OneLine("a\n\n  b\tc", 0); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := Cut("héllo wörld", 6); got != "héllo…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Tokens(950); got != "950" {
		t.Errorf("Tokens = %q", got)
	}
	if got := Tokens(12345); got != "12.3k" {
		t.Errorf("Tokens = %q", got)
	}
}

func TestRateCountAndUsage(t *testing.T) {
	for in, want := range map[float64]string{37.84: "37.8 tok/s", 999.94: "999.9 tok/s", 12345: "12.3k tok/s", 3756169.7: "3.8M tok/s"} {
		if got := Rate(in); got != want {
			t.Errorf("Rate(%v) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int]string{0: "0 turns", 1: "1 turn", 2: "2 turns"} {
		if got := Count(n, "turn"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	u := events.Usage{PromptTokens: 145, OutputTokens: 48, TokensPerSec: 27.83, WallSeconds: 1.77, CostUSD: 0.001}
	if got, want := Usage(u, 0.0005), "145 in · 48 out · 27.8 tok/s · 1.77s · $0.0015"; got != want {
		t.Errorf("Usage = %q, want %q", got, want)
	}
	if got, want := Usage(events.Usage{PromptTokens: 12000}, 0), "12.0k in · 0 out · $0.0000"; got != want {
		t.Errorf("Usage without timings = %q, want %q", got, want)
	}
}
