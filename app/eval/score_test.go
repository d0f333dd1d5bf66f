package eval

import (
	"strings"
	"testing"
)

func call(tool string, turn int, args map[string]any) Call {
	return Call{Tool: tool, Turn: turn, Args: args, Status: "ok"}
}

func calc(expr string) CallExpect {
	return CallExpect{Tool: "calculator", Args: map[string]any{"expression": expr}}
}

func TestScoreRules(t *testing.T) {
	c1 := call("calculator", 1, map[string]any{"expression": "15/100*340"})
	think := call("think", 1, map[string]any{"thought": "hm"})
	for _, tc := range []struct {
		name   string
		expect Expect
		out    Outcome
		want   string // "" passes; else the reason's prefix
	}{
		{"right call", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}}, Outcome{Calls: []Call{c1}}, ""},
		{"wrong argument", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "0.15*340"})}},
			"argument expression: got 0.15*340, expected 15/100*340"},
		{"wrong tool", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}}, Outcome{Calls: []Call{think}},
			"called think, expected calculator"},
		{"extra call fails", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}}, Outcome{Calls: []Call{think, c1}},
			"extra call think(thought=hm)"},
		{"extra call allowed by name", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}, AllowExtra: []string{"think"}},
			Outcome{Calls: []Call{think, c1}}, ""},
		{"any extra allowed", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}, AllowAnyExtra: true},
			Outcome{Calls: []Call{think, c1, c1}}, ""},
		{"the same call twice", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}}, Outcome{Calls: []Call{c1, c1}},
			"calculator called 2 times, expected 1 (extra call calculator(expression=15/100*340))"},
		{"missing call", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340"), {Tool: "think"}}}, Outcome{Calls: []Call{c1}},
			"think was not called"},
		{"no call made", Expect{CheckCalls: true, Calls: []CallExpect{calc("1")}}, Outcome{}, "no tool called, expected calculator"},
		{"no call expected, none made", Expect{CheckCalls: true}, Outcome{Answer: "hi"}, ""},
		{"no call expected, one made", Expect{CheckCalls: true}, Outcome{Calls: []Call{c1, think}}, "called calculator, think, expected no tool call"},
		{"calls unchecked", Expect{AnswerContains: []string{"51"}}, Outcome{Calls: []Call{think}, Answer: "It is 51."}, ""},
		{"answer contains, any case", Expect{AnswerContains: []string{"PARIS", "france"}}, Outcome{Answer: "Paris is the capital of France."}, ""},
		{"answer lacks", Expect{AnswerContains: []string{"51"}}, Outcome{Answer: "about fifty"}, `answer lacks "51": about fifty`},
		{"run error", Expect{AnswerContains: []string{"51"}}, Outcome{Err: "cannot reach Ollama\nat x"}, "run failed: cannot reach Ollama at x"},
		{"stopped", Expect{CheckCalls: true, Calls: []CallExpect{calc("15/100*340")}}, Outcome{Calls: []Call{c1}, Stopped: "max_turns"}, "stopped without an answer (max turns)"},
		{"parallel in one turn", Expect{CheckCalls: true, Parallel: true, Calls: []CallExpect{calc("1"), calc("2")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "2"}), call("calculator", 1, map[string]any{"expression": "1"})}}, ""},
		{"parallel in two turns", Expect{CheckCalls: true, Parallel: true, Calls: []CallExpect{calc("1"), calc("2")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "1"}), call("calculator", 2, map[string]any{"expression": "2"})}},
			"the calls came in 2 turns, expected together in one (parallel)"},
		{"any order", Expect{CheckCalls: true, Calls: []CallExpect{{Tool: "think"}, calc("15/100*340")}}, Outcome{Calls: []Call{c1, think}}, ""},
		{"exact order kept", Expect{CheckCalls: true, Order: OrderExact, Calls: []CallExpect{{Tool: "think"}, calc("15/100*340")}}, Outcome{Calls: []Call{think, c1}}, ""},
		{"exact order broken", Expect{CheckCalls: true, Order: OrderExact, Calls: []CallExpect{{Tool: "think"}, calc("15/100*340")}}, Outcome{Calls: []Call{c1, think}},
			"calls out of order: got calculator, think, expected think, calculator"},
		{"exact order with allowed extras between", Expect{CheckCalls: true, Order: OrderExact, AllowExtra: []string{"think"}, Calls: []CallExpect{calc("1"), calc("2")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "1"}), think, call("calculator", 2, map[string]any{"expression": "2"})}}, ""},
		{"steps in later turns", Expect{CheckCalls: true, Order: OrderSteps, Calls: []CallExpect{calc("1"), calc("2")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "1"}), call("calculator", 2, map[string]any{"expression": "2"})}}, ""},
		{"steps in one turn", Expect{CheckCalls: true, Order: OrderSteps, Calls: []CallExpect{calc("1"), calc("2")}},
			Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "1"}), call("calculator", 1, map[string]any{"expression": "2"})}},
			"call 2 (calculator) came in the same turn as call 1"},
		{"arguments not an object", Expect{CheckCalls: true, Calls: []CallExpect{calc("1")}},
			Outcome{Calls: []Call{{Tool: "calculator", RawArgs: "1+1", Turn: 1}}}, "the arguments are not a JSON object: 1+1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reason(Score(tc.expect, tc.out))
			if tc.want == "" && got != "" {
				t.Fatalf("want a pass, got %q", got)
			}
			if tc.want != "" && !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A call several expected calls could take goes to the one only it can
// satisfy.
func TestScorePairsCallsWithoutStealing(t *testing.T) {
	e := Expect{CheckCalls: true, Calls: []CallExpect{{Tool: "calculator"}, calc("2*3")}}
	out := Outcome{Calls: []Call{call("calculator", 1, map[string]any{"expression": "2*3"}), call("calculator", 1, map[string]any{"expression": "9"})}}
	if fails := Score(e, out); len(fails) != 0 {
		t.Fatalf("a greedy pairing stole the only fitting call: %v", fails)
	}
}

func TestMatchValues(t *testing.T) {
	for _, tc := range []struct {
		want, got any
		why       string
	}{
		{51.0, 51.0, ""},
		{51.0, "51", `argument x: got 51 (a string), expected 51 (a number)`},
		{"a", "A", "argument x: got A, expected a"},
		{true, false, "argument x: got false, expected true"},
		{nil, nil, ""},
		{map[string]any{"a": map[string]any{"b": 1.0}}, map[string]any{"a": map[string]any{"b": 1.0, "c": 2.0}, "z": 1.0}, ""},
		{map[string]any{"a": map[string]any{"b": 1.0}}, map[string]any{"a": map[string]any{"b": 2.0}}, "argument x.a.b: got 2, expected 1"},
		{map[string]any{"a": 1.0}, map[string]any{}, "argument x.a: missing, expected 1"},
		{[]any{"a", "b"}, []any{"a", "b"}, ""},
		{[]any{"a", "b"}, []any{"b", "a"}, "argument x[0]: got b, expected a"},
		{[]any{"a"}, []any{"a", "b"}, `argument x: got 2 items (["a","b"]), expected 1 (["a"])`},
		{map[string]any{"$one_of": []any{"0 9 * * 1-5", "0 9 * * MON-FRI"}}, "0 9 * * MON-FRI", ""},
		{map[string]any{"$one_of": []any{"a", 1.0}}, "b", "argument x: got b, expected one of a, 1"},
		{map[string]any{"$regex": `^17\s*\*\s*23$`}, "17 * 23", ""},
		{map[string]any{"$regex": `^17$`}, 17.0, "argument x: got 17 (a number), expected a string matching /^17$/"},
		{map[string]any{"$contains": "backup"}, "Check the BACKUPS", ""},
		{map[string]any{"$contains": "4512"}, "code", `argument x: got code, expected it to contain "4512"`},
		{map[string]any{"$any": true}, []any{1.0}, ""},
	} {
		if why := matchValue("x", tc.want, tc.got); why != tc.why {
			t.Errorf("match(%v, %v):\n got %q\nwant %q", tc.want, tc.got, why, tc.why)
		}
	}
}

func TestShowKeepsReasonsOnOneLine(t *testing.T) {
	long := strings.Repeat("a", 100) + "/end.txt"
	s := show(long)
	if !strings.HasSuffix(s, "/end.txt") || !strings.HasPrefix(s, "aaa") || len([]rune(s)) != showLimit-1 {
		t.Errorf("a long value is cut in the middle to the limit: %q", s)
	}
	if s := show("two\nlines"); s != "two lines" {
		t.Errorf("newlines: %q", s)
	}
	if s := show(""); s != `""` {
		t.Errorf("empty: %q", s)
	}
	if s := (Call{Tool: "calculator", Args: map[string]any{"expression": "1+1", "b": 2.0}}).String(); s != "calculator(b=2, expression=1+1)" {
		t.Errorf("call: %q", s)
	}
}
