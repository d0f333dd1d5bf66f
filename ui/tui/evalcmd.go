package tui

// /eval runs a tool-calling evaluation (app/eval) on the session's model
// and agent, the tools worded as the configuration words them: the
// built-in suite, or a suite file given as the argument. It runs in a
// command, never in Update; its progress is one line in the transcript,
// esc stops it, and the results (a table per model and a chart) join the
// transcript when it ends.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/eval"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/evalview"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// EvalSetup is what /eval needs from the command line: the tools a case's
// sandbox gets, and where the results are kept.
type EvalSetup struct {
	Tools eval.ToolSource
	// EngineName names the session's engine in the results ("ollama").
	EngineName string
	// Save keeps a finished report (queued to the database); nil keeps
	// nothing.
	Save func(*eval.Report) error
	// Audit records the run's confirmation decisions (nil: none).
	Audit tools.AuditLog
}

// evalState is the evaluation in progress, if any.
type evalState struct {
	seq     int
	cancel  context.CancelFunc
	item    *evalProgressItem
	started time.Time
}

// evalProgressMsg is a case run starting or ending.
type evalProgressMsg struct {
	seq int
	p   eval.Progress
}

// evalDoneMsg ends an evaluation.
type evalDoneMsg struct {
	seq     int
	rep     *eval.Report
	err     error
	saveErr error
}

// evalCommand is /eval [FILE].
func (m *model) evalCommand(arg string) tea.Cmd {
	switch {
	case m.opts.Eval == nil || m.opts.Eval.Tools == nil:
		m.addNote("Evaluations are not available in this workbench; run 'jarvis eval' in a shell.", true)
		return nil
	case m.evals.cancel != nil:
		m.addNote("An evaluation is running: wait for it, or esc to stop it.", true)
		return nil
	case m.run.active:
		m.addNote("A turn is running: start the evaluation when it is done (esc cancels the turn).", true)
		return nil
	case m.modelName == "":
		m.addNote("No model is set: pick one with /model NAME, then /eval.", true)
		return nil
	}
	setup := *m.opts.Eval
	cfg := eval.Config{
		Targets:  []eval.Target{{Engine: m.opts.Engine, EngineName: setup.EngineName, Model: m.modelName, Agent: m.agentName}},
		Tools:    setup.Tools,
		Settings: m.opts.Config.Tool,
		System:   m.system, Options: m.engOpts, MaxTurns: m.opts.Config.MaxTurns,
		Price: func(model string, in, out int) float64 { return m.opts.Config.PriceFor(model).Cost(in, out) },
		Audit: setup.Audit,
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.evals.seq++
	seq, send := m.evals.seq, m.send
	item := &evalProgressItem{text: fmt.Sprintf("Evaluating %s · %s: reading the suite…", m.modelName, m.agentName)}
	m.evals.cancel, m.evals.item, m.evals.started = cancel, item, m.now()
	m.transcript.add(item)
	m.transcript.bottom()
	path := strings.TrimSpace(arg)
	return func() tea.Msg {
		defer cancel()
		suite, err := readEvalSuite(path, setup.Tools(nil, cfg.Targets[0]).Names())
		if err != nil {
			return evalDoneMsg{seq: seq, err: err}
		}
		cfg.Suite = suite
		cfg.Progress = func(p eval.Progress) { send(evalProgressMsg{seq: seq, p: p}) }
		r, err := eval.New(cfg)
		if err == nil {
			err = r.Check(ctx)
		}
		if err != nil {
			return evalDoneMsg{seq: seq, err: err}
		}
		rep, err := r.Run(ctx)
		done := evalDoneMsg{seq: seq, rep: rep, err: err}
		if rep != nil && len(rep.Results) > 0 && setup.Save != nil {
			done.saveErr = setup.Save(rep)
		}
		return done
	}
}

// readEvalSuite reads a suite file (~ expanded), or the built-in suite.
func readEvalSuite(path string, known []string) (*eval.Suite, error) {
	if path == "" {
		return eval.Builtin(known)
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = home + path[1:]
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return eval.Read(f, path, known)
}

// evalUpdate handles the evaluation's messages; ok is false for others.
func (m *model) evalUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case evalProgressMsg:
		if msg.seq == m.evals.seq && m.evals.item != nil {
			m.evals.item.set(evalview.Progress(msg.p) + " · esc stops")
		}
		return nil, true
	case evalDoneMsg:
		if msg.seq != m.evals.seq {
			return nil, true
		}
		m.finishEval(msg)
		return nil, true
	}
	return nil, false
}

// finishEval puts the results in the transcript.
func (m *model) finishEval(msg evalDoneMsg) {
	item, took := m.evals.item, m.now().Sub(m.evals.started).Seconds()
	m.evals.cancel, m.evals.item = nil, nil
	stopped := msg.err != nil && m.ctx.Err() == nil && msg.rep != nil
	switch {
	case msg.rep == nil:
		item.set("Evaluation failed after " + format.Latency(took))
		m.addNote("The evaluation could not run: "+explain(msg.err), true)
		return
	case stopped:
		item.set("Evaluation stopped after " + format.Latency(took) + "; the cases that finished:")
	default:
		item.set("Evaluation finished in " + format.Latency(took))
	}
	m.transcript.add(&evalReportItem{rep: msg.rep})
	m.transcript.bottom()
	switch {
	case msg.saveErr != nil:
		m.addNote("The results could not be saved: "+msg.saveErr.Error(), true)
	case len(msg.rep.Results) > 0 && msg.rep.Results[0].ID != "":
		m.addNote(fmt.Sprintf("Saved as run %s; 'jarvis eval history --compare ID %s' compares it with another.", msg.rep.Results[0].ID, msg.rep.Results[0].ID), false)
	}
}

// cancelEval stops a running evaluation; it reports whether one ran.
func (m *model) cancelEval() bool {
	if m.evals.cancel == nil {
		return false
	}
	m.evals.cancel()
	if m.evals.item != nil {
		m.evals.item.set("Stopping the evaluation…")
	}
	return true
}

// evalProgressItem is the evaluation's line in the transcript: always one
// line, so the transcript's measured heights stay right while it changes.
type evalProgressItem struct {
	text    string
	version int
	cache   cached
}

func (e *evalProgressItem) set(text string) {
	e.text = text
	e.version++
}

func (e *evalProgressItem) render(rc renderCtx) []string {
	return e.cache.get(rc.textKey(), e.version, func() []string {
		line := format.Cut(safe.Text(format.OneLine(e.text, 0)), max(rc.width-2, 1))
		return []string{rc.st.accent.Render("◆ ") + rc.st.muted.Render(line)}
	})
}

func (e *evalProgressItem) height(rc renderCtx) int { return 1 }
func (e *evalProgressItem) lines(rc renderCtx, from, to int) []string {
	return sliceLines(e.render(rc), from, to)
}

// evalReportItem is a finished evaluation: its tables and chart, drawn
// for the transcript's width.
type evalReportItem struct {
	rep   *eval.Report
	cache cached
}

func (e *evalReportItem) render(rc renderCtx) []string {
	return e.cache.get(rc.textKey(), 0, func() []string {
		var out []string
		for _, l := range evalview.Report(e.rep, max(rc.width-2, 40)) {
			st := rc.st.text
			switch {
			case strings.HasPrefix(strings.TrimSpace(l), "✗"):
				st = rc.st.errorText
			case strings.HasPrefix(strings.TrimSpace(l), "✓"):
				st = rc.st.success
			case strings.HasPrefix(l, "Suite ") || strings.HasPrefix(l, "Pass rate"):
				st = rc.st.accent
			}
			out = append(out, "  "+st.Render(l))
		}
		return out
	})
}

func (e *evalReportItem) height(rc renderCtx) int { return len(e.render(rc)) }
func (e *evalReportItem) lines(rc renderCtx, from, to int) []string {
	return sliceLines(e.render(rc), from, to)
}
