package evalview

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/app/eval"
	"github.com/jarvis-workbench/jarvis/store/evals"
)

func sampleReport(models ...string) *eval.Report {
	rep := &eval.Report{Suite: "builtin", Source: "built-in", Repeat: 1}
	for i, m := range models {
		r := eval.Result{Model: m, Agent: "orchestrator", Engine: "ollama", Host: "http://127.0.0.1:11434",
			Passed: 3 - i, Total: 4, PassRate: float64(3-i) / 4, MedianSeconds: 1.25, TokensPerSec: 34.5, PromptTokens: 900, OutputTokens: 300, TurnsPerCase: 1.5,
			Categories: []eval.CategoryRate{{Name: "single", Passed: 2, Total: 2, Rate: 1}, {Name: "nocall", Passed: 1 - i, Total: 2, Rate: float64(1-i) / 2}},
			Cases: []eval.CaseResult{
				{ID: "percent", Category: "single", Passed: true, Passes: 1, Repeats: 1},
				{ID: "sqrt", Category: "single", Passed: true, Passes: 1, Repeats: 1},
				{ID: "greeting", Category: "nocall", Passes: 0, Repeats: 1, Reason: "called calculator, expected no tool call"},
				{ID: "capital", Category: "nocall", Passed: i == 0, Passes: 1 - i, Repeats: 1, Reason: "answer lacks \"Paris\": \x1b[31mLyon\x1b[0m"},
			}}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

func TestReportTableAndChart(t *testing.T) {
	lines := Report(sampleReport("qwen3:8b", "llama3.2:3b"), 80)
	text := strings.Join(lines, "\n")
	t.Log("\n" + text)
	for _, want := range []string{
		"Suite builtin (built-in) · 4 cases",
		"qwen3:8b · orchestrator · ollama http://127.0.0.1:11434",
		"  passed 3/4 (75%) · median 1.25s · 34.5 tok/s · 1.2k tokens · $0.0000\n  1.5 turns a case",
		"  category  passed   rate",
		"  single    2/2      100%",
		"  nocall    1/2       50%",
		"  ✗ greeting  called calculator, expected no tool call",
		"  ✗ capital   answer lacks \"Paris\": Lyon",
		"Pass rate",
		"qwen3:8b orchestrator     75% │",
		"llama3.2:3b orchestrator  50% │",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Error("an escape sequence from a reason reached the report")
	}
	for _, l := range lines {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line wider than 80: %q", l)
		}
	}
	// The bars are drawn to scale: 75% is longer than 50%.
	var bar75, bar50 int
	for _, l := range lines {
		n := strings.Count(l, "█")
		if strings.HasPrefix(l, "qwen3") {
			bar75 = n
		}
		if strings.HasPrefix(l, "llama3.2") {
			bar50 = n
		}
	}
	if bar75 <= bar50 || bar50 == 0 {
		t.Errorf("bars not to scale: 75%% has %d blocks, 50%% has %d", bar75, bar50)
	}
}

func TestOneModelChartsItsCategories(t *testing.T) {
	text := strings.Join(Report(sampleReport("qwen3:8b"), 60), "\n")
	if !strings.Contains(text, "Pass rate by category") || !strings.Contains(text, "single 100% │") {
		t.Errorf("one model: the chart shows its categories:\n%s", text)
	}
}

func TestProgressLine(t *testing.T) {
	p := eval.Progress{Target: eval.Target{Model: "qwen3", Agent: "react"}, TargetIndex: 1, Targets: 2, Case: eval.Case{ID: "pct"}, Index: 3, Runs: 19, Passed: 2}
	if got := Progress(p); got != "[1/2] qwen3 · react · 3/19 pct … · 2 ✓ 0 ✗" {
		t.Errorf("start: %q", got)
	}
	p.Done = &eval.CaseRun{Reason: "called think, expected calculator", Seconds: 1.5}
	p.Failed = 1
	if got := Progress(p); got != "[1/2] qwen3 · react · 3/19 pct ✗ 1.50s · called think, expected calculator" {
		t.Errorf("end: %q", got)
	}
}

func TestHistoryAndCompare(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := evals.Run{ID: "20260301-120000-aaaa", Started: t0, Suite: "builtin", Model: "qwen3", Agent: "orchestrator", Engine: "ollama", Passed: 1, Total: 2,
		Cases: []evals.Case{{ID: "pct", Category: "single", Passes: 1, Runs: 1}, {ID: "hello", Category: "nocall", Runs: 1, Reason: "called calculator, expected no tool call"}}}
	b := a
	b.ID, b.Reworded = "20260301-130000-bbbb", []string{"calculator"}
	b.Cases = []evals.Case{{ID: "pct", Category: "single", Runs: 1, Reason: "called think, expected calculator"}, {ID: "hello", Category: "nocall", Passes: 1, Runs: 1}}
	hist := strings.Join(History([]evals.Run{b, a}, 120), "\n")
	if !strings.Contains(hist, "20260301-130000-bbbb") || !strings.Contains(hist, "1/2     50%") {
		t.Errorf("history:\n%s", hist)
	}
	cmp := strings.Join(Compare(a, b, 120), "\n")
	t.Log("\n" + cmp)
	for _, want := range []string{
		"pct    single    ✓  ✗  broken  called think, expected calculator",
		"hello  nocall    ✗  ✓  fixed   called calculator, expected no tool call",
		"Reworded tools: A - · B calculator",
		"2 cases flipped: 1 fixed, 1 broken; 0 unchanged",
	} {
		if !strings.Contains(cmp, want) {
			t.Errorf("compare lacks %q", want)
		}
	}
	if got := History(nil, 80); !strings.Contains(got[0], "No evaluation runs yet") {
		t.Errorf("empty history: %v", got)
	}
}

func TestLongReasonsWrapUnderThemselves(t *testing.T) {
	rep := sampleReport("qwen3:8b")
	rep.Results[0].Cases[2].Reason = "argument path: got /nonexistent/read-file/ship.txt, expected /tmp/jarvis-eval-3228333271/read-file/ship.txt"
	lines := Table(rep.Results[0], 1, 60)
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "ship.txt") || strings.Contains(text, "…") {
		t.Errorf("a long reason was cut instead of wrapped:\n%s", text)
	}
	for _, l := range lines {
		if w := len([]rune(l)); w > 60 {
			t.Errorf("line wider than 60: %q", l)
		}
	}
	if !strings.Contains(text, "\n              ") {
		t.Errorf("the continuation is not indented under the reason:\n%s", text)
	}
}

// Rows and chart labels tell the same model on two servers apart; a case
// that could not run and a model that never called a tool are said.
func TestLabelsTellServersApartAndNotRunIsSaid(t *testing.T) {
	rep := sampleReport("qwen3:8b", "qwen3:8b")
	rep.Results[1].Host = "http://gpu-box:11434"
	rep.Results[1].NotRun = 1
	rep.Results[1].Cases = append(rep.Results[1].Cases, eval.CaseResult{ID: "lost", Category: "single", NotRun: 1,
		Reason: "could not run: model server error (HTTP 500): runner crashed", Runs: []eval.CaseRun{{NotRun: true, Reason: "could not run: model server error (HTTP 500): runner crashed"}}})
	rep.Results[0].NoCalls = "never called a tool: it passes only the cases that need none (2 of the 4 cases need a call)"
	text := strings.Join(Report(rep, 100), "\n")
	for _, want := range []string{
		"qwen3:8b orchestrator 127.0.0.1:11434 (no calls)",
		"qwen3:8b orchestrator gpu-box:11434",
		"passed 2/4 (50%), 1 could not run",
		"  ! lost",
		"could not run: model server error (HTTP 500): runner crashed",
		"  ! never called a tool: it passes only the cases that need none",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	hist := strings.Join(History([]evals.Run{{ID: "a", Model: "qwen3:8b", Agent: "orchestrator", Engine: "ollama", Host: "http://gpu-box:11434", Passed: 2, Total: 3, NotRun: 1, NoCalls: "never"}}, 140), "\n")
	if !strings.Contains(hist, "gpu-box:11434") || !strings.Contains(hist, "2/3 (+1 not run)") || !strings.Contains(hist, "!no calls") {
		t.Errorf("history:\n%s", hist)
	}
}

// A comparison of two wordings of a tool shows both and which won.
func TestCompareSaysWhichWordingWon(t *testing.T) {
	a := evals.Run{ID: "a", Model: "m", Passed: 7, Total: 10, Reworded: []string{"calculator"},
		Wording: []evals.Wording{{Tool: "calculator", Description: "Evaluate math."}}}
	b := evals.Run{ID: "b", Model: "m", Passed: 9, Total: 10, Reworded: []string{"calculator"},
		Wording: []evals.Wording{{Tool: "calculator", Description: "Use for all arithmetic; exact."}}}
	text := strings.Join(Compare(a, b, 120), "\n")
	for _, want := range []string{"  calculator:", "    A “Evaluate math.”", "    B “Use for all arithmetic; exact.”", "    B's wording won: 90% against 70%"} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, text)
		}
	}
}
