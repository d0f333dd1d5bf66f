package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/agent"
)

// Call is a tool call the model made.
type Call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	// RawArgs holds the arguments as the model wrote them when they were
	// not a JSON object (Args is then nil).
	RawArgs string `json:"raw_args,omitempty"`
	// Turn is the model turn the call was made in, from 1.
	Turn int `json:"turn"`
	// Status is how the call ended: ok, error, denied, timeout, cancelled.
	Status string `json:"status"`
}

// String writes the call on one line: calculator(expression=15/100*340).
func (c Call) String() string {
	if c.Args == nil && c.RawArgs != "" {
		return c.Tool + "(" + show(c.RawArgs) + ")"
	}
	parts := make([]string, 0, len(c.Args))
	for _, k := range sortedKeys(map[string]any(c.Args)) {
		parts = append(parts, k+"="+show(c.Args[k]))
	}
	return c.Tool + "(" + strings.Join(parts, ", ") + ")"
}

// Outcome is what a run produced that a case is scored on.
type Outcome struct {
	Calls  []Call
	Answer string
	// Err is why the run failed ("" when it answered).
	Err string
	// Stopped is why it ended without the model's whole answer (one of
	// agent's Stop* values).
	Stopped string
}

// Score checks an outcome against what a case expects and returns every
// failure, the most telling first; none means the case passed.
func Score(e Expect, o Outcome) []string {
	var fails []string
	if o.Err != "" {
		fails = append(fails, "run failed: "+strings.Join(strings.Fields(o.Err), " "))
	} else if o.Stopped != "" {
		fails = append(fails, "stopped without an answer ("+stopWords(o.Stopped)+")")
	}
	if e.CheckCalls {
		fails = append(fails, scoreCalls(e, o.Calls)...)
	}
	if o.Err == "" {
		low := strings.ToLower(o.Answer)
		for _, want := range e.AnswerContains {
			if !strings.Contains(low, strings.ToLower(want)) {
				fails = append(fails, fmt.Sprintf("answer lacks %q: %s", want, show(orEmpty(o.Answer))))
			}
		}
	}
	return fails
}

// stopWords names why a run stopped (agent.Result.Stopped) in words.
func stopWords(stopped string) string {
	switch stopped {
	case agent.StopLoop:
		return "loop guard"
	case agent.StopLength:
		return "the reply reached its length limit"
	case agent.StopWindowFull:
		return "the reply filled the window"
	}
	return strings.ReplaceAll(stopped, "_", " ")
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}

// Reason is the line that says why a case failed: every failure, the
// most telling first, none hidden behind a count.
func Reason(fails []string) string { return strings.Join(fails, "; ") }

func scoreCalls(e Expect, calls []Call) []string {
	if len(e.Calls) == 0 {
		if len(calls) == 0 {
			return nil
		}
		return []string{"called " + names(calls) + ", expected no tool call"}
	}
	if len(calls) == 0 {
		return []string{"no tool called, expected " + expectedNames(e.Calls)}
	}
	pairs := matchCalls(e.Calls, calls)
	ordered := e.Order == OrderExact || e.Order == OrderSteps
	var inOrder []int
	if ordered {
		// An order-keeping pairing, when there is one, is the pairing:
		// the any-order one may pair identical calls crosswise.
		if inOrder = matchInOrder(e.Calls, calls); complete(inOrder) {
			pairs = inOrder
		}
	}
	var fails []string
	matched := make([]bool, len(calls))
	for _, j := range pairs {
		if j >= 0 {
			matched[j] = true
		}
	}
	// explained marks the calls a failure already speaks of, so one wrong
	// call is not also reported as an extra one.
	explained := slices.Clone(matched)
	for i, j := range pairs {
		if j < 0 {
			fails = append(fails, explainMissing(e.Calls, i, calls, explained))
		}
	}
	for j, c := range calls {
		if !explained[j] && !e.allowsExtra(c.Tool) {
			fails = append(fails, extraCall(e.Calls, calls, c))
		}
	}
	if len(fails) > 0 {
		return fails
	}
	// Every expected call was made: now the order and the turns.
	if ordered {
		if !complete(inOrder) {
			return []string{outOfOrder(e, calls, pairs)}
		}
		if e.Order == OrderSteps {
			for i := 1; i < len(pairs); i++ {
				if calls[pairs[i]].Turn <= calls[pairs[i-1]].Turn {
					return []string{fmt.Sprintf("call %d (%s) came in the same turn as call %d, expected it after that call's result", i+1, e.Calls[i].Tool, i)}
				}
			}
		}
	}
	if e.Parallel {
		turns := map[int]bool{}
		for _, j := range pairs {
			turns[calls[j].Turn] = true
		}
		if len(turns) > 1 {
			return []string{fmt.Sprintf("the calls came in %d turns, expected together in one (parallel)", len(turns))}
		}
	}
	return nil
}

func (e Expect) allowsExtra(tool string) bool {
	return e.AllowAnyExtra || slices.Contains(e.AllowExtra, tool)
}

// matchCalls pairs each expected call with a distinct actual call that
// satisfies it (pairs[i] is the index in calls, -1 when none is left), as
// many as can be paired: a maximum bipartite matching, so an expected
// call that several calls satisfy does not take the only call another
// expected call could have. Actual calls are tried in order, so the
// pairing prefers the earliest calls.
func matchCalls(want []CallExpect, calls []Call) []int {
	pairs := make([]int, len(want))
	owner := make([]int, len(calls))
	for i := range pairs {
		pairs[i] = -1
	}
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range calls {
			if seen[j] || !fits(want[i], calls[j]) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j], pairs[i] = i, j
				return true
			}
		}
		return false
	}
	for i := range want {
		try(i, make([]bool, len(calls)))
	}
	return pairs
}

// explainMissing says why expected call i was not made: the tool was not
// called (another was), or it was called with other arguments. It marks
// the calls it blames in explained.
func explainMissing(want []CallExpect, i int, calls []Call, explained []bool) string {
	w := want[i]
	label := ""
	if len(want) > 1 {
		label = fmt.Sprintf("call %d (%s): ", i+1, w.Tool)
	}
	// A call of the same tool that nothing else took: its arguments differ.
	for j, c := range calls {
		if c.Tool == w.Tool && !explained[j] {
			explained[j] = true
			if c.Args == nil {
				return fmt.Sprintf("%sthe arguments are not a JSON object: %s", label, show(c.RawArgs))
			}
			return label + matchArgs(w.Args, c.Args)
		}
	}
	made, expected := countTool(calls, w.Tool), 0
	for _, x := range want {
		if x.Tool == w.Tool {
			expected++
		}
	}
	if made > 0 {
		return fmt.Sprintf("%s called %s, expected %d", w.Tool, times(made), expected)
	}
	var others []string
	for j, c := range calls {
		if !explained[j] && !expectsTool(want, c.Tool) {
			explained[j] = true
			if !slices.Contains(others, c.Tool) {
				others = append(others, c.Tool)
			}
		}
	}
	if len(others) > 0 {
		return fmt.Sprintf("called %s, expected %s", strings.Join(others, ", "), w.Tool)
	}
	return fmt.Sprintf("%s was not called", w.Tool)
}

func expectsTool(want []CallExpect, tool string) bool {
	return slices.ContainsFunc(want, func(w CallExpect) bool { return w.Tool == tool })
}

func extraCall(want []CallExpect, calls []Call, c Call) string {
	expected := 0
	for _, w := range want {
		if w.Tool == c.Tool {
			expected++
		}
	}
	if expected > 0 {
		return fmt.Sprintf("%s called %s, expected %d (extra call %s)", c.Tool, times(countTool(calls, c.Tool)), expected, c)
	}
	return "extra call " + c.String()
}

func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

func countTool(calls []Call, tool string) int {
	n := 0
	for _, c := range calls {
		if c.Tool == tool {
			n++
		}
	}
	return n
}

// fits reports whether a call satisfies an expected call.
func fits(w CallExpect, c Call) bool {
	if w.Tool != c.Tool {
		return false
	}
	if len(w.Args) == 0 {
		return true
	}
	return c.Args != nil && matchArgs(w.Args, c.Args) == ""
}

// matchInOrder pairs the expected calls with calls in the same order, each
// with the earliest call after the previous one's that satisfies it (the
// earliest choice never spoils a later pairing).
func matchInOrder(want []CallExpect, calls []Call) []int {
	pairs := make([]int, len(want))
	next := 0
	for i, w := range want {
		pairs[i] = -1
		for j := next; j < len(calls); j++ {
			if fits(w, calls[j]) {
				pairs[i], next = j, j+1
				break
			}
		}
		if pairs[i] < 0 {
			next = len(calls)
		}
	}
	return pairs
}

func complete(pairs []int) bool {
	return !slices.Contains(pairs, -1)
}

// outOfOrder says the expected calls were all made, in another order.
func outOfOrder(e Expect, calls []Call, pairs []int) string {
	var made []Call
	for j := range calls {
		if slices.Contains(pairs, j) {
			made = append(made, calls[j])
		}
	}
	got, want := names(made), expectedNames(e.Calls)
	if len(strings.Split(got, ", ")) < len(made) {
		// One tool called several times: the arguments tell them apart.
		parts := make([]string, len(made))
		for i, c := range made {
			parts[i] = c.String()
		}
		got = strings.Join(parts, ", ")
		for i, w := range e.Calls {
			parts[i] = Call{Tool: w.Tool, Args: w.Args}.String()
		}
		want = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("calls out of order: got %s, expected %s", got, want)
}

func names(calls []Call) string {
	var out []string
	for _, c := range calls {
		if !slices.Contains(out, c.Tool) {
			out = append(out, c.Tool)
		}
	}
	return strings.Join(out, ", ")
}

func expectedNames(want []CallExpect) string {
	out := make([]string, len(want))
	for i, w := range want {
		out[i] = w.Tool
	}
	return strings.Join(out, ", ")
}
