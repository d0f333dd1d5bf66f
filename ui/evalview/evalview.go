// Package evalview draws the results of tool-calling evaluations (app/eval)
// as text, the same for `jarvis eval` and the workbench's /eval: a table per
// model (pass rate, rates by category, median latency, speed, the failed
// cases and why), a bar chart of the pass rates, the progress line, the
// list of past runs and the comparison of two.
//
// The chart is drawn by ntcharts' bar chart, without colour, so it reads
// the same in a terminal, a pipe and a transcript. Names, reasons and
// arguments come from suites and models: every one is stripped of escape
// sequences before it is laid out.
package evalview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/NimbleMarkets/ntcharts/barchart"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/app/eval"
	"github.com/jarvis-workbench/jarvis/store/evals"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// Marks of a case's outcome.
const (
	markPass   = "✓"
	markFail   = "✗"
	markFlaky  = "~" // passed some repetitions, not all
	markNotRun = "!" // could not be run: neither a pass nor a failure
)

// Percent writes a rate as a whole percentage: 89%.
func Percent(rate float64) string { return fmt.Sprintf("%.0f%%", rate*100) }

// Title names a result: model · agent, and the engine with its host.
func Title(r eval.Result) string {
	return fmt.Sprintf("%s · %s · %s %s", safe.Text(r.Model), r.Agent, orDash(r.Engine), safe.Text(r.Host))
}

// Report writes the tables of every result, then the chart, width cells
// wide (at least 40).
func Report(rep *eval.Report, width int) []string {
	width = max(width, 40)
	var out []string
	head := fmt.Sprintf("Suite %s (%s) · %s", safe.Text(rep.Suite), safe.Text(rep.Source), format.Count(caseCount(rep), "case"))
	if rep.Repeat > 1 {
		head += fmt.Sprintf(" × %d repetitions", rep.Repeat)
	}
	out = append(out, head)
	if len(rep.Reworded) > 0 {
		out = append(out, "Reworded tools: "+safe.Text(strings.Join(rep.Reworded, ", ")))
		out = append(out, wordingLines(rep.Wording, "  ")...)
	}
	for _, r := range rep.Results {
		out = append(out, "")
		out = append(out, Table(r, rep.Repeat, width)...)
	}
	if chart := Chart(rep, width); len(chart) > 0 {
		out = append(out, "")
		out = append(out, chart...)
	}
	return out
}

func caseCount(rep *eval.Report) int {
	n := 0
	for _, r := range rep.Results {
		n = max(n, len(r.Cases))
	}
	return n
}

// Table writes one result: its totals, its rate in each category and the
// cases that failed, each with its reason.
func Table(r eval.Result, repeat, width int) []string {
	out := []string{Title(r)}
	if r.ID != "" {
		out[0] += " · run " + r.ID
	}
	passed := fmt.Sprintf("passed %d/%d (%s)", r.Passed, r.Total, Percent(r.PassRate))
	if r.NotRun > 0 {
		passed += fmt.Sprintf(", %d could not run", r.NotRun)
	}
	totals := []string{
		passed,
		"median " + format.Latency(r.MedianSeconds), format.Rate(r.TokensPerSec),
		format.Tokens(r.PromptTokens+r.OutputTokens) + " tokens", format.Cost(r.CostUSD, false),
		fmt.Sprintf("%.1f turns a case", r.TurnsPerCase),
	}
	for _, l := range wrap(totals, " · ", width-2) {
		out = append(out, "  "+l)
	}
	if r.Error != "" {
		out = append(out, "  "+markFail+" "+safe.Text(r.Error))
	}
	if r.NoCalls != "" {
		out = append(out, "  "+markNotRun+" "+safe.Text(r.NoCalls))
	}
	if len(r.Categories) > 0 {
		nameW := len("category")
		for _, c := range r.Categories {
			nameW = max(nameW, ansi.StringWidth(safe.Text(c.Name)))
		}
		out = append(out, "  "+pad("category", nameW)+"  passed   rate")
		for _, c := range r.Categories {
			out = append(out, fmt.Sprintf("  %s  %-7s %5s", pad(safe.Text(c.Name), nameW), fmt.Sprintf("%d/%d", c.Passed, c.Total), Percent(c.Rate)))
		}
	}
	failed, notRun := r.Failed(), r.NotRunCases()
	if len(failed) == 0 && len(notRun) == 0 && r.Total > 0 {
		out = append(out, "  "+markPass+" every case passed")
		return out
	}
	idW := 0
	for _, c := range append(slices.Clip(failed), notRun...) {
		idW = max(idW, ansi.StringWidth(safe.Text(c.ID)))
	}
	type line struct {
		c      eval.CaseResult
		mark   string
		reason string
	}
	var lines []line
	for _, c := range failed {
		mark := markFail
		if c.Passes > 0 {
			mark = markFlaky
		}
		lines = append(lines, line{c, mark, c.Reason})
	}
	for _, c := range notRun {
		reason := c.Reason
		for _, run := range c.Runs {
			if run.NotRun {
				reason = run.Reason
				break
			}
		}
		lines = append(lines, line{c, markNotRun, reason})
	}
	for _, l := range lines {
		c, mark, rate := l.c, l.mark, ""
		if repeat > 1 {
			rate = fmt.Sprintf("%d/%d ", c.Passes, c.Repeats)
			if mark == markNotRun {
				rate = fmt.Sprintf("%d/%d ", c.NotRun, c.NotRun+c.Repeats)
			}
		}
		// The reason is wrapped under itself, not cut: its end (a path, an
		// expected value) is often what tells.
		prefix := fmt.Sprintf("  %s %s  %s", mark, pad(safe.Text(c.ID), idW), rate)
		indent := strings.Repeat(" ", ansi.StringWidth(prefix))
		room := max(width-ansi.StringWidth(prefix), 20)
		for i, l := range strings.Split(ansi.Wrap(safe.Text(l.reason), room, " /,"), "\n") {
			if i == 0 {
				out = append(out, prefix+l)
			} else {
				out = append(out, indent+l)
			}
		}
	}
	return out
}

// Chart draws the pass rates as horizontal bars: one per result when
// several models (or agents) ran, else one per category.
func Chart(rep *eval.Report, width int) []string {
	type bar struct {
		label string
		rate  float64
	}
	var bars []bar
	title := "Pass rate"
	if len(rep.Results) > 1 {
		for _, r := range rep.Results {
			label := Label(r, rep.Results)
			if r.NoCalls != "" {
				label += " (no calls)"
			}
			bars = append(bars, bar{label, r.PassRate})
		}
	} else if len(rep.Results) == 1 {
		title = "Pass rate by category"
		for _, c := range rep.Results[0].Categories {
			bars = append(bars, bar{safe.Text(c.Name), c.Rate})
		}
	}
	if len(bars) == 0 {
		return nil
	}
	// The chart measures labels in bytes: they are kept to characters a
	// byte count measures right, and padded to one width.
	nameW := 0
	for i := range bars {
		bars[i].label = asciiLabel(bars[i].label)
		nameW = max(nameW, len(bars[i].label))
	}
	nameW = min(nameW, width/2)
	for i := range bars {
		name := bars[i].label
		if len(name) > nameW {
			name = name[:nameW-6] + "~" + name[len(name)-5:]
		}
		bars[i].label = fmt.Sprintf("%-*s %4s ", nameW, name, Percent(bars[i].rate))
	}
	plain := lipgloss.NewStyle()
	data := make([]barchart.BarData, len(bars))
	for i, b := range bars {
		data[i] = barchart.BarData{Label: b.label,
			Values: []barchart.BarValue{{Name: "pass", Value: b.rate * 100, Style: plain}}}
	}
	bc := barchart.New(width, len(bars), barchart.WithHorizontalBars(), barchart.WithMaxValue(100),
		barchart.WithNoAutoMaxValue(), barchart.WithNoAutoBarWidth(), barchart.WithBarWidth(1), barchart.WithBarGap(0),
		barchart.WithStyles(plain, plain))
	bc.PushAll(data)
	bc.Resize(width, len(bars)) // lays the axis out for the labels just pushed
	bc.Draw()
	out := []string{title}
	for _, l := range strings.Split(bc.View(), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// Label names a result among others: its model and agent, and its engine
// and host when they are not the same for all, so two servers with the
// same model are told apart.
func Label(r eval.Result, all []eval.Result) string {
	engines, hosts := map[string]bool{}, map[string]bool{}
	for _, o := range all {
		engines[o.Engine], hosts[o.Host] = true, true
	}
	parts := []string{safe.Text(r.Model), r.Agent}
	if len(engines) > 1 {
		parts = append(parts, orDash(r.Engine))
	}
	if len(hosts) > 1 {
		parts = append(parts, shortHost(r.Host))
	}
	return strings.Join(parts, " ")
}

// shortHost is a server's address without its scheme: gpu-box:11434.
func shortHost(h string) string {
	h = safe.Text(h)
	if _, rest, ok := strings.Cut(h, "://"); ok {
		h = rest
	}
	return strings.TrimSuffix(h, "/")
}

// asciiLabel keeps the characters a byte count measures as one cell.
func asciiLabel(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// Progress is the one-line state of a run: where it is, how it goes.
func Progress(p eval.Progress) string {
	target := p.Target.String()
	if p.Targets > 1 {
		target = fmt.Sprintf("[%d/%d] %s", p.TargetIndex, p.Targets, target)
	}
	rep := ""
	if p.Rep > 1 {
		rep = fmt.Sprintf(" #%d", p.Rep)
	}
	line := fmt.Sprintf("%s · %d/%d %s%s", safe.Text(target), p.Index, p.Runs, safe.Text(p.Case.ID), rep)
	counts := fmt.Sprintf("%d %s %d %s", p.Passed, markPass, p.Failed, markFail)
	if p.NotRun > 0 {
		counts += fmt.Sprintf(" %d %s", p.NotRun, markNotRun)
	}
	switch {
	case p.Done == nil:
		return line + " … · " + counts
	case p.Done.Passed:
		return fmt.Sprintf("%s %s %s · %s", line, markPass, format.Latency(p.Done.Seconds), counts)
	case p.Done.NotRun:
		return fmt.Sprintf("%s %s %s · %s", line, markNotRun, format.Latency(p.Done.Seconds), safe.Text(p.Done.Reason))
	}
	return fmt.Sprintf("%s %s %s · %s", line, markFail, format.Latency(p.Done.Seconds), safe.Text(p.Done.Reason))
}

// History lists past runs, newest first.
func History(runs []evals.Run, width int) []string {
	if len(runs) == 0 {
		return []string{"No evaluation runs yet. Run one with 'jarvis eval'."}
	}
	// The server comes last: a narrow terminal cuts the last column.
	rows := [][]string{{"ID", "WHEN", "SUITE", "MODEL", "AGENT", "PASSED", "RATE", "MEDIAN", "SERVER"}}
	for _, r := range runs {
		rows = append(rows, []string{
			r.ID, r.Started.Local().Format("2006-01-02 15:04"), safe.Text(r.Suite), safe.Text(r.Model), r.Agent,
			passedCell(r), rateCell(r), format.Latency(r.MedianSeconds), orDash(r.Engine) + " " + orDash(shortHost(r.Host)),
		})
	}
	return columns(rows, width)
}

// passedCell is a run's passes over its runs made, and those not made.
func passedCell(r evals.Run) string {
	s := fmt.Sprintf("%d/%d", r.Passed, r.Total)
	if r.NotRun > 0 {
		s += fmt.Sprintf(" (+%d not run)", r.NotRun)
	}
	return s
}

// rateCell is a run's pass rate, marked when the model never called a
// tool (the rate is then that of the no-call cases alone).
func rateCell(r evals.Run) string {
	if r.NoCalls != "" {
		return Percent(r.Rate()) + " " + markNotRun + "no calls"
	}
	return Percent(r.Rate())
}

// Show writes one saved run: its totals and every case with its outcome,
// the calls made and, for a failure, why.
func Show(r evals.Run, width int) []string {
	out := []string{
		fmt.Sprintf("Run %s · %s · suite %s (%s)", r.ID, r.Started.Local().Format("2006-01-02 15:04:05"), safe.Text(r.Suite), safe.Text(r.Source)),
		fmt.Sprintf("%s · %s · %s %s", safe.Text(r.Model), r.Agent, orDash(r.Engine), safe.Text(r.Host)),
		fmt.Sprintf("passed %s (%s) · median %s · %s · %s tokens · %s", passedCell(r), Percent(r.Rate()),
			format.Latency(r.MedianSeconds), format.Rate(r.TokensPerSec), format.Tokens(r.PromptTokens+r.OutputTokens), format.Cost(r.CostUSD, false)),
	}
	if len(r.Reworded) > 0 {
		out = append(out, "Reworded tools: "+safe.Text(strings.Join(r.Reworded, ", ")))
		out = append(out, wordingLines(r.Wording, "  ")...)
	}
	if r.Error != "" {
		out = append(out, markFail+" "+safe.Text(r.Error))
	}
	if r.NoCalls != "" {
		out = append(out, markNotRun+" "+safe.Text(r.NoCalls))
	}
	rows := [][]string{{"CASE", "CATEGORY", "OUTCOME", "SECONDS", "CALLS / WHY"}}
	for _, c := range r.Cases {
		detail := c.Calls
		if !c.Passed() {
			detail = c.Reason
		}
		rows = append(rows, []string{safe.Text(c.ID), safe.Text(c.Category), outcome(&c), format.Latency(c.Seconds), safe.Text(orDash(detail))})
	}
	out = append(out, "")
	return append(out, columns(rows, width)...)
}

// Compare writes, per case, how it fared in run a and in run b, the cases
// that flipped first, then a summary line.
func Compare(a, b evals.Run, width int) []string {
	head := func(side string, r evals.Run) string {
		return fmt.Sprintf("%s  %s  %s · %s · %s %s · %s  %s (%s)", side, r.ID, safe.Text(r.Model), r.Agent, orDash(r.Engine), orDash(shortHost(r.Host)),
			safe.Text(r.Suite), passedCell(r), rateCell(r))
	}
	out := []string{head("A", a), head("B", b)}
	if len(a.Reworded) > 0 || len(b.Reworded) > 0 {
		out = append(out, fmt.Sprintf("Reworded tools: A %s · B %s", orDash(safe.Text(strings.Join(a.Reworded, ", "))), orDash(safe.Text(strings.Join(b.Reworded, ", ")))))
		out = append(out, wordingDiff(a, b)...)
	}
	flips := evals.Compare(a, b)
	count := map[string]int{}
	var flipped, same []evals.Flip
	for _, f := range flips {
		count[f.Change()]++
		if f.Change() == "same" {
			same = append(same, f)
		} else {
			flipped = append(flipped, f)
		}
	}
	rows := [][]string{{"CASE", "CATEGORY", "A", "B", "CHANGE", "WHY (THE FAILING SIDE)"}}
	for _, f := range append(flipped, same...) {
		why := ""
		switch {
		case f.After != nil && !f.After.Passed():
			why = f.After.Reason
		case f.Before != nil && !f.Before.Passed():
			why = f.Before.Reason
		}
		rows = append(rows, []string{safe.Text(f.ID), safe.Text(f.Category), outcome(f.Before), outcome(f.After), f.Change(), safe.Text(why)})
	}
	out = append(out, "")
	out = append(out, columns(rows, width)...)
	out = append(out, "", fmt.Sprintf("%s flipped: %d fixed, %d broken; %d unchanged; %d only in A, %d only in B",
		format.Count(count["fixed"]+count["broken"], "case"), count["fixed"], count["broken"], count["same"], count["removed"], count["added"]))
	return out
}

// wordingLines writes what the model read of each reworded tool.
func wordingLines(ws []evals.Wording, indent string) []string {
	var out []string
	for _, w := range ws {
		out = append(out, indent+wordingOf(w)+": "+words(w))
	}
	return out
}

// wordingOf names a wording: the tool, and the case it is for.
func wordingOf(w evals.Wording) string {
	s := safe.Text(w.Tool)
	if w.Case != "" {
		s += " in case " + safe.Text(w.Case)
	}
	return s
}

// words is a wording on one line: the description, then the parameters'.
func words(w evals.Wording) string {
	var parts []string
	if w.Description != "" {
		parts = append(parts, strconvQuote(w.Description))
	}
	for _, k := range sortedKeys(w.Parameters) {
		parts = append(parts, safe.Text(k)+": "+strconvQuote(w.Parameters[k]))
	}
	if len(parts) == 0 {
		return "(the tool's own words)"
	}
	return strings.Join(parts, " · ")
}

// wordingDiff says, for each tool worded differently in a and b, both
// wordings and which run passed more: which wording won.
func wordingDiff(a, b evals.Run) []string {
	key := func(w evals.Wording) string { return w.Tool + "\x00" + w.Case }
	inA, inB := map[string]evals.Wording{}, map[string]evals.Wording{}
	var keys []string
	for _, w := range a.Wording {
		inA[key(w)] = w
		keys = append(keys, key(w))
	}
	for _, w := range b.Wording {
		if _, ok := inA[key(w)]; !ok {
			keys = append(keys, key(w))
		}
		inB[key(w)] = w
	}
	var out []string
	for _, k := range keys {
		wa, okA := inA[k]
		wb, okB := inB[k]
		if okA && okB && wa.Same(wb) {
			continue
		}
		name := wordingOf(wa)
		if !okA {
			name = wordingOf(wb)
			wa = evals.Wording{}
		}
		if !okB {
			wb = evals.Wording{}
		}
		out = append(out, "  "+name+":", "    A "+words(wa), "    B "+words(wb))
		switch ra, rb := a.Rate(), b.Rate(); {
		case rb > ra:
			out = append(out, fmt.Sprintf("    B's wording won: %s against %s", Percent(rb), Percent(ra)))
		case ra > rb:
			out = append(out, fmt.Sprintf("    A's wording won: %s against %s", Percent(ra), Percent(rb)))
		default:
			out = append(out, fmt.Sprintf("    neither won: both %s", Percent(ra)))
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func strconvQuote(s string) string { return "\u201c" + safe.Text(format.OneLine(s, 0)) + "\u201d" }

func outcome(c *evals.Case) string {
	switch {
	case c == nil:
		return "-"
	case c.Runs == 0 && c.NotRun > 0:
		return markNotRun
	case c.Runs > 1:
		return fmt.Sprintf("%d/%d", c.Passes, c.Runs)
	case c.Passed():
		return markPass
	}
	return markFail
}

// columns lays rows out in columns two spaces apart; the last column is
// cut to the width.
func columns(rows [][]string, width int) []string {
	if len(rows) == 0 {
		return nil
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i < len(r)-1 {
				b.WriteString(pad(c, widths[i]) + "  ")
			} else {
				b.WriteString(c)
			}
		}
		out = append(out, ansi.Truncate(strings.TrimRight(b.String(), " "), max(width, 40), "…"))
	}
	return out
}

func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// wrap joins parts with sep into lines of at most width cells, breaking
// only between parts.
func wrap(parts []string, sep string, width int) []string {
	var out []string
	line := ""
	for _, p := range parts {
		if line != "" && ansi.StringWidth(line+sep+p) > width {
			out = append(out, line)
			line = p
			continue
		}
		if line == "" {
			line = p
		} else {
			line += sep + p
		}
	}
	return append(out, line)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
