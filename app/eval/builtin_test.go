package eval

import (
	"strings"
	"testing"
)

func TestBuiltinSuiteCoversEveryKindOfCase(t *testing.T) {
	s := mustBuiltin(t)
	if len(s.Cases) < 15 {
		t.Fatalf("the built-in suite has %d cases, want at least 15", len(s.Cases))
	}
	count := map[string]int{}
	for _, c := range s.Cases {
		count[c.Category]++
	}
	for _, cat := range []string{"single", "arguments", "parallel", "choice", "multistep", "nocall"} {
		if count[cat] < 2 {
			t.Errorf("category %s has %d cases, want at least 2", cat, count[cat])
		}
	}
}

func TestBuiltinSuitePassesWithRightAnswers(t *testing.T) {
	root := t.TempDir()
	srv := scripted(t, "builtin-right.json", root)
	rep := runSuite(t, srv, mustBuiltin(t), root, runOpts{})
	res := rep.Results[0]
	for _, c := range res.Cases {
		if !c.Passed {
			t.Errorf("%s failed: %s (calls %v, answer %q)", c.ID, c.Reason, c.Calls, c.Answer)
		}
	}
	if res.Passed != res.Total || res.Total != len(mustBuiltin(t).Cases) {
		t.Errorf("passed %d of %d", res.Passed, res.Total)
	}
	// Approval: the suite approves schedule_task, which ran and created a
	// task in the scratch database; code_interpreter was denied.
	if c := caseByID(t, res, "schedule"); c.Calls[0].Status != "ok" {
		t.Errorf("an approved tool did not run: %+v", c.Calls)
	}
	if c := caseByID(t, res, "run-code"); c.Calls[0].Status != "denied" {
		t.Errorf("a tool needing confirmation ran without approval: %+v", c.Calls)
	}
	// The files were the case's own: the answer came from reading them.
	if c := caseByID(t, res, "read-file"); c.Calls[0].Status != "ok" || !strings.Contains(c.Calls[0].Args["path"].(string), root) {
		t.Errorf("file_read did not read in the scratch directory: %+v", c.Calls)
	}
	for _, cat := range res.Categories {
		if cat.Rate != 1 {
			t.Errorf("category %s: %v", cat.Name, cat.Rate)
		}
	}
}

func TestBuiltinSuiteFailsWrongAnswersForTheRightReasons(t *testing.T) {
	root := t.TempDir()
	srv := scripted(t, "builtin-wrong.json", root)
	rep := runSuite(t, srv, mustBuiltin(t), root, runOpts{})
	res := rep.Results[0]
	want := map[string]string{
		"percent":          "called think, expected calculator",
		"sqrt":             "no tool called, expected calculator",
		"read-file":        "argument path: got ship.txt, expected /",
		"multiply":         "argument expression: got 17 + 23, expected a match of /",
		"read-lines":       "argument max_lines: missing, expected 2",
		"remember":         `argument content: got The user has a locker code., expected it to contain "4512"`,
		"schedule":         "argument schedule_type: got interval, expected cron",
		"run-code":         "called python, expected code_interpreter",
		"two-percentages":  "the calls came in 2 turns, expected together in one (parallel)",
		"two-files":        "file_read called 1 time, expected 2; answer lacks \"828\"",
		"pick-calculator":  "extra call memory_search(query=powers of two)",
		"pick-memory":      `answer lacks "8443": It listens on port 443.`,
		"pick-tasks":       "called schedule_task, expected list_scheduled_tasks",
		"file-then-calc":   "call 2 (calculator) came in the same turn as call 1, expected it after that call's result",
		"calc-chain":       "calls out of order: got calculator(expression=7006652 / 2), calculator(expression=1234 * 5678), expected calculator(",
		"memory-then-calc": "stopped without an answer (loop guard)",
		"greeting":         "called calculator, expected no tool call",
		"capital":          `answer lacks "Paris": The capital of France is Lyon.`,
		"thanks":           "called memory_store, expected no tool call",
	}
	for id, reason := range want {
		c := caseByID(t, res, id)
		if c.Passed {
			t.Errorf("%s passed with a wrong answer (calls %v)", id, c.Calls)
			continue
		}
		if !strings.HasPrefix(c.Reason, reason) {
			t.Errorf("%s:\n got reason %q\nwant prefix %q", id, c.Reason, reason)
		}
	}
	// A long path is shortened in the middle: its end still tells it;
	// the second failure is said too, not counted.
	if c := caseByID(t, res, "read-file"); !strings.Contains(c.Reason, "read-file/ship.txt; answer lacks \"Endeavour\"") || strings.Contains(c.Reason, "more)") {
		t.Errorf("read-file: the reason lost the path's end or reports the wrong call twice: %q", c.Reason)
	}
	if len(want) != len(res.Cases) || res.Passed != 0 {
		t.Errorf("%d cases, %d passed; every case should fail", len(res.Cases), res.Passed)
	}
}
