package eval

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/store/evals"
	"github.com/jarvis-workbench/jarvis/tools"
)

// CaseRun is one run of one case.
type CaseRun struct {
	Passed bool `json:"passed"`
	// NotRun is set when the run could not be made (the server failed,
	// the request did not fit the window, the sandbox could not be laid
	// out): it is neither a pass nor the model's failure, and Reason says
	// why.
	NotRun bool `json:"not_run,omitempty"`
	// Reason is every failure, in one line.
	Reason   string   `json:"reason,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Calls    []Call   `json:"calls"`
	Answer   string   `json:"answer"`
	// Agent is the agent that answered (react after a fallback).
	Agent        string  `json:"agent,omitempty"`
	Seconds      float64 `json:"seconds"`
	Turns        int     `json:"turns"`
	PromptTokens int     `json:"prompt_tokens"`
	OutputTokens int     `json:"output_tokens"`
	EvalSeconds  float64 `json:"eval_seconds"`
	TokensPerSec float64 `json:"tokens_per_second"`
	CostUSD      float64 `json:"cost_usd"`
	Stopped      string  `json:"stopped,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// CaseResult is a case over its repetitions.
type CaseResult struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Prompt   string `json:"prompt"`
	// Passed is true when every repetition made passed; Repeats counts
	// the repetitions made, NotRun those that could not be.
	Passed   bool    `json:"passed"`
	Passes   int     `json:"passes"`
	Repeats  int     `json:"repeats"`
	NotRun   int     `json:"not_run,omitempty"`
	PassRate float64 `json:"pass_rate"`
	// Reason, Calls and Answer are the first failed repetition's (else
	// the first that could not run, else the last's).
	Reason string `json:"reason,omitempty"`
	Calls  []Call `json:"calls"`
	Answer string `json:"answer"`
	// Seconds is the median wall time of a repetition; the tokens, turns
	// and cost add up the repetitions.
	Seconds      float64 `json:"seconds"`
	Turns        int     `json:"turns"`
	PromptTokens int     `json:"prompt_tokens"`
	OutputTokens int     `json:"output_tokens"`
	TokensPerSec float64 `json:"tokens_per_second"`
	CostUSD      float64 `json:"cost_usd"`
	// Runs are the repetitions, in order.
	Runs []CaseRun `json:"runs"`
}

// finish fills the summary fields from the runs.
func (c CaseResult) finish() CaseResult {
	secs := make([]float64, 0, len(c.Runs))
	var evalSecs float64
	shown, notRun := -1, -1
	for i, r := range c.Runs {
		switch {
		case r.NotRun:
			c.NotRun++
			if notRun < 0 {
				notRun = i
			}
			continue
		case r.Passed:
			c.Passes++
		case shown < 0:
			shown = i
		}
		c.Repeats++
		secs = append(secs, r.Seconds)
		c.Turns += r.Turns
		c.PromptTokens += r.PromptTokens
		c.OutputTokens += r.OutputTokens
		c.CostUSD += r.CostUSD
		evalSecs += r.EvalSeconds
	}
	if shown < 0 {
		shown = notRun
	}
	if shown < 0 {
		shown = len(c.Runs) - 1
	}
	if shown >= 0 {
		c.Reason, c.Calls, c.Answer = c.Runs[shown].Reason, c.Runs[shown].Calls, c.Runs[shown].Answer
	}
	c.Passed = c.Repeats > 0 && c.Passes == c.Repeats
	if c.Repeats > 0 {
		c.PassRate = float64(c.Passes) / float64(c.Repeats)
	}
	c.Seconds = median(secs)
	if evalSecs > 0 {
		c.TokensPerSec = float64(c.OutputTokens) / evalSecs
	}
	return c
}

// CategoryRate is how a category of cases fared.
type CategoryRate struct {
	Name   string  `json:"name"`
	Passed int     `json:"passed"`
	Total  int     `json:"total"`
	Rate   float64 `json:"rate"`
}

// Result is one target over the suite.
type Result struct {
	Target Target `json:"-"`
	// ID is the run's id in the database, once saved.
	ID      string    `json:"id,omitempty"`
	Engine  string    `json:"engine"`
	Host    string    `json:"host"`
	Model   string    `json:"model"`
	Agent   string    `json:"agent"`
	Started time.Time `json:"started"`
	// Passed and Total count the case runs made (cases times
	// repetitions); NotRun counts those that could not be made, which
	// are left out of the rate.
	Passed   int     `json:"passed"`
	Total    int     `json:"total"`
	NotRun   int     `json:"not_run,omitempty"`
	PassRate float64 `json:"pass_rate"`
	// NoCalls is set, saying so, when the model never called a tool
	// though cases needed it: its rate is then only that of the cases
	// that need no call, and says nothing of its skill with tools.
	NoCalls    string         `json:"no_calls,omitempty"`
	Categories []CategoryRate `json:"categories"`
	// MedianSeconds is the median wall time of a case run; TokensPerSec
	// is the output tokens over the time the model spent writing them.
	MedianSeconds float64 `json:"median_seconds"`
	TokensPerSec  float64 `json:"tokens_per_second"`
	PromptTokens  int     `json:"prompt_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	CostUSD       float64 `json:"cost_usd"`
	// TurnsPerCase is the mean number of model turns of a case run.
	TurnsPerCase float64 `json:"turns_per_case"`
	// Seconds is the wall time of the whole target.
	Seconds float64 `json:"seconds"`
	// Error says why the target stopped before its end.
	Error string       `json:"error,omitempty"`
	Cases []CaseResult `json:"cases"`
}

// finish computes the totals from the cases.
func (r *Result) finish() {
	cats := map[string]*CategoryRate{}
	var order []string
	var secs []float64
	var evalSecs float64
	turns := 0
	r.Passed, r.Total = 0, 0
	for _, c := range r.Cases {
		cat := cats[c.Category]
		if cat == nil {
			cat = &CategoryRate{Name: c.Category}
			cats[c.Category] = cat
			order = append(order, c.Category)
		}
		cat.Passed += c.Passes
		cat.Total += c.Repeats
		r.Passed += c.Passes
		r.Total += c.Repeats
		r.NotRun += c.NotRun
		for _, run := range c.Runs {
			secs = append(secs, run.Seconds)
			evalSecs += run.EvalSeconds
			turns += run.Turns
		}
		r.PromptTokens += c.PromptTokens
		r.OutputTokens += c.OutputTokens
		r.CostUSD += c.CostUSD
	}
	r.Categories = r.Categories[:0]
	for _, name := range order {
		c := *cats[name]
		if c.Total > 0 {
			c.Rate = float64(c.Passed) / float64(c.Total)
		}
		r.Categories = append(r.Categories, c)
	}
	if r.Total > 0 {
		r.PassRate = float64(r.Passed) / float64(r.Total)
		r.TurnsPerCase = float64(turns) / float64(r.Total)
	}
	r.MedianSeconds = median(secs)
	if evalSecs > 0 {
		r.TokensPerSec = float64(r.OutputTokens) / evalSecs
	}
	if r.Cases == nil {
		r.Cases = []CaseResult{}
	}
}

// Failed returns the cases the model failed at least once.
func (r Result) Failed() []CaseResult {
	var out []CaseResult
	for _, c := range r.Cases {
		if c.Passes < c.Repeats {
			out = append(out, c)
		}
	}
	return out
}

// NotRunCases returns the cases with a repetition that could not be made.
func (r Result) NotRunCases() []CaseResult {
	var out []CaseResult
	for _, c := range r.Cases {
		if c.NotRun > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Report is a suite run against every target.
type Report struct {
	Suite  string `json:"suite"`
	Source string `json:"source"`
	// Batch is the id shared by the saved runs of this report.
	Batch   string    `json:"batch,omitempty"`
	Repeat  int       `json:"repeat"`
	Started time.Time `json:"started"`
	// Reworded names the tools whose descriptions the suite or the
	// configuration changed; Wording holds their words.
	Reworded []string        `json:"reworded,omitempty"`
	Wording  []evals.Wording `json:"wording,omitempty"`
	Results  []Result        `json:"results"`
}

// reworded lists the tools whose descriptions a suite and the settings
// change, sorted.
func reworded(s *Suite, settings map[string]tools.Settings) []string {
	set := map[string]bool{}
	for name := range s.Overrides {
		set[name] = true
	}
	for _, c := range s.Cases {
		for name := range c.Overrides {
			set[name] = true
		}
	}
	for name, st := range settings {
		if st.Description != nil || len(st.Parameters) > 0 {
			set[name] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// wording is what the settings and the suite make the model read of each
// reworded tool: the words for the whole suite, then each case's own.
func wording(s *Suite, settings map[string]tools.Settings) []evals.Wording {
	layer := func(w evals.Wording, description *string, params map[string]string) evals.Wording {
		if description != nil {
			w.Description = *description
		}
		if len(params) > 0 {
			m := maps.Clone(w.Parameters)
			if m == nil {
				m = map[string]string{}
			}
			maps.Copy(m, params)
			w.Parameters = m
		}
		return w
	}
	suiteWide := map[string]evals.Wording{}
	for _, name := range reworded(&Suite{Overrides: s.Overrides}, settings) {
		w := evals.Wording{Tool: name}
		if st, ok := settings[name]; ok {
			w = layer(w, st.Description, st.Parameters)
		}
		if o, ok := s.Overrides[name]; ok {
			w = layer(w, nonEmpty(o.Description), o.Parameters)
		}
		suiteWide[name] = w
	}
	out := slices.SortedFunc(maps.Values(suiteWide), func(a, b evals.Wording) int { return strings.Compare(a.Tool, b.Tool) })
	for _, c := range s.Cases {
		for _, name := range slices.Sorted(maps.Keys(c.Overrides)) {
			w, ok := suiteWide[name]
			if !ok {
				w = evals.Wording{Tool: name}
			}
			o := c.Overrides[name]
			w = layer(w, nonEmpty(o.Description), o.Parameters)
			w.Case = c.ID
			out = append(out, w)
		}
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Records converts the report into database records, one per target, ids
// taken from the results (set them first with AssignIDs).
func (rep *Report) Records() []evals.Run {
	out := make([]evals.Run, 0, len(rep.Results))
	for _, r := range rep.Results {
		run := evals.Run{
			ID: r.ID, Batch: rep.Batch, Started: r.Started, Seconds: r.Seconds,
			Suite: rep.Suite, Source: rep.Source, Engine: r.Engine, Host: r.Host, Model: r.Model, Agent: r.Agent,
			Repeat: rep.Repeat, Passed: r.Passed, Total: r.Total, NotRun: r.NotRun, NoCalls: r.NoCalls,
			MedianSeconds: r.MedianSeconds, TokensPerSec: r.TokensPerSec,
			PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens, CostUSD: r.CostUSD,
			Reworded: rep.Reworded, Wording: rep.Wording, Error: r.Error,
		}
		for _, c := range r.Cases {
			calls := make([]string, len(c.Calls))
			for i, call := range c.Calls {
				calls[i] = call.String()
			}
			run.Cases = append(run.Cases, evals.Case{
				ID: c.ID, Category: c.Category, Passes: c.Passes, Runs: c.Repeats, NotRun: c.NotRun,
				Reason: c.Reason, Calls: strings.Join(calls, "; "), Seconds: c.Seconds,
			})
		}
		out = append(out, run)
	}
	return out
}

// AssignIDs gives the report a batch id and each result a run id.
func (rep *Report) AssignIDs() {
	if rep.Batch == "" {
		rep.Batch = evals.NewID(rep.Started)
	}
	for i := range rep.Results {
		if rep.Results[i].ID == "" {
			rep.Results[i].ID = evals.NewID(rep.Results[i].Started)
		}
	}
}
