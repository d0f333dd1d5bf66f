package format

import "testing"

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
