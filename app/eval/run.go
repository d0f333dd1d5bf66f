package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Target is one thing being measured: a model with an agent on an engine.
type Target struct {
	Engine engine.InferenceEngine
	// EngineName names the kind of server ("ollama", "openai").
	EngineName string
	Model      string
	Agent      string
}

// String names the target: "qwen3:8b · orchestrator", with the engine
// when it is not the default kind of server.
func (t Target) String() string {
	s := t.Model + " · " + t.Agent
	if t.EngineName != "" && t.EngineName != config.DefaultEngine {
		s += " · " + t.EngineName
	}
	return s
}

// Config is what a Runner runs.
type Config struct {
	Suite   *Suite
	Targets []Target
	// Repeat runs every case this many times (1 when 0), for models whose
	// answers vary.
	Repeat int
	// Tools builds the registry of a case's tools.
	Tools ToolSource
	// Settings are the person's per-tool settings (confirmation, timeout,
	// descriptions); the suite's overrides are laid over them.
	Settings map[string]tools.Settings
	// System is the configured system prompt (the suite's wins).
	System string
	// Options are the configured generation options (the suite's are laid
	// over them).
	Options  engine.Options
	MaxTurns int
	Price    agent.Price
	// Bus receives the events of every case run (tool calls, turns);
	// nil discards them.
	Bus events.Publisher
	// Progress, when set, is told when each case run starts and ends, on
	// the goroutine that called Run.
	Progress func(Progress)
	// ScratchDir is where the sandboxes go; "" makes a temporary directory,
	// removed when the run ends.
	ScratchDir string
	// Audit records every confirmation decision of the run (nil: none),
	// as for every other entry point.
	Audit tools.AuditLog
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Progress is a case run starting (Done nil) or ending.
type Progress struct {
	Target Target
	// TargetIndex counts targets from 1 to Targets.
	TargetIndex, Targets int
	Case                 Case
	// Index counts the target's case runs from 1 to Runs (cases times
	// repetitions); Rep is the repetition, from 1.
	Index, Runs, Rep int
	Done             *CaseRun
	// Passed and Failed count the target's finished case runs; NotRun
	// those that could not be made (see CaseRun.NotRun).
	Passed, Failed, NotRun int
}

// Runner runs a suite against targets.
type Runner struct {
	cfg Config
}

// New checks cfg and returns a runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Suite == nil || len(cfg.Suite.Cases) == 0 {
		return nil, errors.New("no suite to run")
	}
	if len(cfg.Targets) == 0 {
		return nil, errors.New("no model to evaluate")
	}
	if cfg.Tools == nil {
		return nil, errors.New("no tools to build the cases' tools from")
	}
	for _, t := range cfg.Targets {
		if t.Engine == nil || t.Model == "" {
			return nil, fmt.Errorf("target %s: an engine and a model are required", t)
		}
		if !slices.Contains(agent.Names, t.Agent) {
			return nil, fmt.Errorf("unknown agent %q; choose one of: %s", t.Agent, strings.Join(agent.Names, ", "))
		}
	}
	if cfg.Repeat <= 0 {
		cfg.Repeat = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Runner{cfg: cfg}, nil
}

// Check finds, before anything runs, what would make every case fail:
// a description override naming a parameter the tool does not take, an
// engine that does not answer, a model the server does not have.
func (r *Runner) Check(ctx context.Context) error {
	s := r.cfg.Suite
	reg := r.cfg.Tools(nil, r.cfg.Targets[0])
	build := func(c Case, name string) error {
		t, err := reg.Build(name, tools.Deps{Settings: r.settings(c, os.TempDir())})
		if err == nil {
			defer tools.Close(t)
			return checkArgs(s, c, t.Spec())
		}
		if _, inCase := c.Overrides[name]; inCase {
			return &SuiteError{Source: s.Source, Case: fmt.Sprintf("case %q", c.ID), Field: "overrides." + name, Msg: err.Error()}
		}
		if _, inSuite := s.Overrides[name]; inSuite {
			return &SuiteError{Source: s.Source, Field: "overrides." + name, Msg: err.Error()}
		}
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(s.Overrides)) {
		if err := build(Case{}, name); err != nil {
			return err
		}
	}
	for _, c := range s.Cases {
		for _, name := range c.Tools {
			if err := build(c, name); err != nil {
				return err
			}
		}
	}
	checked := map[string]bool{}
	for _, t := range r.cfg.Targets {
		key := t.Engine.Host() + "\x00" + t.Model
		if checked[key] {
			continue
		}
		checked[key] = true
		if _, err := t.Engine.Capabilities(ctx, t.Model); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

// checkArgs refuses an expected argument the tool does not take: no model
// could ever pass the case, and the suite would score the model for it.
func checkArgs(s *Suite, c Case, spec tools.Spec) error {
	params := spec.Parameters
	if params == nil || len(params.Properties) == 0 && params.AdditionalProperties == nil {
		return nil // a schema that names no parameters takes any
	}
	for i, call := range c.Expect.Calls {
		if call.Tool != spec.Name {
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(call.Args)) {
			if _, ok := params.Properties[key]; ok {
				continue
			}
			taken := slices.Sorted(maps.Keys(params.Properties))
			msg := fmt.Sprintf("%s takes no argument %q", spec.Name, key)
			if sug := tools.Suggest(key, taken); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			return &SuiteError{Source: s.Source, Case: fmt.Sprintf("case %q", c.ID), Field: fmt.Sprintf("expect.calls[%d].args.%s", i, key),
				Msg: msg + "; it takes " + strings.Join(taken, ", ")}
		}
	}
	return nil
}

// Run runs every case against every target, in order. It returns the
// report of what ran; when ctx ends first, the report holds the case runs
// that finished and the error says the run was stopped.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	root := r.cfg.ScratchDir
	if root == "" {
		dir, err := os.MkdirTemp("", "jarvis-eval-")
		if err != nil {
			return nil, fmt.Errorf("making a scratch directory: %w", err)
		}
		defer os.RemoveAll(dir)
		root = dir
	}
	s := r.cfg.Suite
	rep := &Report{Suite: s.Name, Source: s.Source, Repeat: r.cfg.Repeat, Started: r.cfg.Now(), Reworded: reworded(s, r.cfg.Settings), Wording: wording(s, r.cfg.Settings)}
	for i, t := range r.cfg.Targets {
		res := r.runTarget(ctx, root, t, i+1)
		rep.Results = append(rep.Results, res)
		if ctx.Err() != nil {
			return rep, errors.New("the evaluation was stopped before its end")
		}
	}
	return rep, nil
}

func (r *Runner) runTarget(ctx context.Context, root string, t Target, index int) Result {
	s := r.cfg.Suite
	started := r.cfg.Now()
	res := Result{Target: t, Engine: t.EngineName, Host: t.Engine.Host(), Model: t.Model, Agent: t.Agent, Started: started}
	p := Progress{Target: t, TargetIndex: index, Targets: len(r.cfg.Targets), Runs: len(s.Cases) * r.cfg.Repeat}
	needCalls, calls := 0, 0
	for _, c := range s.Cases {
		cr := CaseResult{ID: c.ID, Category: c.Category, Prompt: c.Prompt}
		for rep := 1; rep <= r.cfg.Repeat; rep++ {
			if ctx.Err() != nil {
				break
			}
			p.Index++
			p.Case, p.Rep, p.Done = c, rep, nil
			r.progress(p)
			run := r.runCase(ctx, root, t, c)
			if ctx.Err() != nil && run.Error != "" {
				// Stopped by the person, not failed by the model: it does
				// not count.
				break
			}
			cr.Runs = append(cr.Runs, run)
			calls += len(run.Calls)
			switch {
			case run.NotRun:
				p.NotRun++
			case run.Passed:
				p.Passed++
			default:
				p.Failed++
			}
			p.Done = &run
			r.progress(p)
		}
		if len(cr.Runs) > 0 {
			res.Cases = append(res.Cases, cr.finish())
			if c.Expect.CheckCalls && len(c.Expect.Calls) > 0 {
				needCalls++
			}
		}
		if ctx.Err() != nil {
			res.Error = "stopped before its end"
			break
		}
	}
	res.Seconds = r.cfg.Now().Sub(started).Seconds()
	res.finish()
	if calls == 0 && needCalls > 0 && res.Total > 0 {
		// Its score is the share of cases that need no call: what a
		// model that only chats (or answers at random) gets.
		res.NoCalls = fmt.Sprintf("never called a tool: it passes only the cases that need none (%d of the %d cases need a call)", needCalls, len(res.Cases))
	}
	return res
}

func (r *Runner) progress(p Progress) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(p)
	}
}

// runCase runs one case once, in a fresh sandbox, and scores it.
func (r *Runner) runCase(ctx context.Context, root string, t Target, c Case) CaseRun {
	s := r.cfg.Suite
	begin := time.Now()
	sb, err := newSandbox(ctx, root, c)
	if err != nil {
		return notRun(fmt.Sprintf("the case's sandbox could not be prepared: %v", err), begin)
	}
	defer sb.Close()
	reg := r.cfg.Tools(sb, t)
	// The scratch directory is the tools' working directory: a relative
	// path in a call resolves there, and commands run there.
	list, err := reg.BuildList(c.Tools, tools.Deps{Settings: r.settings(c, sb.Dir), WorkDir: sb.Dir})
	if err != nil {
		return notRun(err.Error(), begin)
	}
	defer closeAll(list)
	exec, err := app.NewExecutor(list, tools.EvalPolicy(append(slices.Clone(s.Approve), c.Approve...), sb.Dir, false, tools.ConfigOverrides(r.cfg.Settings), r.cfg.Audit), r.cfg.Bus)
	if err != nil {
		return notRun(err.Error(), begin)
	}
	system := r.cfg.System
	if s.System != "" {
		system = s.System
	}
	maxTurns := r.cfg.MaxTurns
	if s.MaxTurns > 0 {
		maxTurns = s.MaxTurns
	}
	var rec recorder
	ag, err := app.Turn{
		Engine: t.Engine, Model: t.Model, Agent: t.Agent, Executor: exec, Bus: r.cfg.Bus, System: system,
		Options: s.Options.over(r.cfg.Options), MaxTurns: maxTurns, Price: r.cfg.Price, OnMessage: rec.add,
	}.Build()
	if err != nil {
		return notRun(err.Error(), begin)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := ag.Run(cctx, &agent.Conversation{}, expandDir(c.Prompt, sb.Dir))
	out := Outcome{Calls: rec.calls}
	run := CaseRun{Calls: rec.calls}
	if res != nil {
		out.Answer, out.Stopped = res.Content, res.Stopped
		run.Answer, run.Stopped, run.Turns = res.Content, res.Stopped, res.Turns
		run.PromptTokens, run.OutputTokens = res.Usage.PromptTokens, res.Usage.OutputTokens
		run.EvalSeconds, run.TokensPerSec = res.Usage.EvalSeconds, res.Usage.TokensPerSec
		run.CostUSD = res.Usage.CostUSD + res.Usage.ToolCostUSD
		run.Agent = res.Agent
	}
	if err != nil {
		if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = fmt.Errorf("the case took longer than its %s time limit", timeout)
		}
		out.Err, run.Error = err.Error(), err.Error()
		if out.Stopped == "cancelled" {
			out.Stopped = ""
		}
	}
	if run.Calls == nil {
		run.Calls = []Call{}
	}
	if err != nil && couldNotRun(err) {
		// The case was not measured: the server failed, or the request
		// did not fit the window. The model is not scored on it.
		nr := notRun(run.Error, begin)
		nr.Calls, nr.Turns, nr.Answer = run.Calls, run.Turns, run.Answer
		return nr
	}
	run.Failures = Score(expandExpect(c.Expect, sb.Dir), out)
	run.Passed, run.Reason = len(run.Failures) == 0, Reason(run.Failures)
	run.Seconds = time.Since(begin).Seconds()
	return run
}

// notRun is a case run that could not be made, and why: it is counted
// apart from the model's passes and failures.
func notRun(reason string, begin time.Time) CaseRun {
	reason = "could not run: " + reason
	return CaseRun{NotRun: true, Calls: []Call{}, Error: reason, Reason: reason, Seconds: time.Since(begin).Seconds()}
}

// couldNotRun reports whether a run's error is the run's, not the model's:
// the server failed or went away, refused the model, or the request did
// not fit the window. A model that is slow, loops or answers wrongly
// fails the case instead.
func couldNotRun(err error) bool {
	var (
		overflow *engine.ContextOverflowError
		server   *engine.ServerError
		lost     *engine.StreamError
		missing  *engine.ModelNotFoundError
		notChat  *engine.NotAChatModelError
		vision   *engine.VisionUnsupportedError
		thinking *engine.ThinkingUnsupportedError
	)
	return errors.Is(err, engine.ErrUnreachable) || errors.As(err, &overflow) || errors.As(err, &server) || errors.As(err, &lost) ||
		errors.As(err, &missing) || errors.As(err, &notChat) || errors.As(err, &vision) || errors.As(err, &thinking)
}

// settings returns the tool settings of a case: the person's, with the
// suite's and then the case's description overrides laid over them, and
// the file tools reaching the case's scratch directory (not the
// directories the person allowed).
func (r *Runner) settings(c Case, dir string) map[string]tools.Settings {
	out := maps.Clone(r.cfg.Settings)
	if out == nil {
		out = map[string]tools.Settings{}
	}
	for _, layer := range []map[string]Override{r.cfg.Suite.Overrides, c.Overrides} {
		for name, o := range layer {
			st := out[name]
			if o.Description != "" {
				d := o.Description
				st.Description = &d
			}
			if len(o.Parameters) > 0 {
				params := maps.Clone(st.Parameters)
				if params == nil {
					params = map[string]string{}
				}
				maps.Copy(params, o.Parameters)
				st.Parameters = params
			}
			out[name] = st
		}
	}
	fr := out["file_read"]
	fr.AllowedDirs = []string{dir}
	out["file_read"] = fr
	mi := out["memory_index"]
	mi.AllowedDirs = nil
	out["memory_index"] = mi
	return out
}

// closeAll ends the tools that hold processes (a REPL).
func closeAll(list []tools.Tool) {
	for _, t := range list {
		tools.Close(t)
	}
}

// recorder keeps the calls a run made, from the messages the agent
// appends: an assistant message's calls (native tool calls), each result
// in the calls' order, and for react, whose calls are not in its
// messages, the call a result answers.
type recorder struct {
	calls   []Call
	turn    int
	pending []int // calls awaiting their result
}

func (r *recorder) add(a agent.Appended) {
	if a.Compaction != nil {
		return
	}
	m := a.Message
	if m.Role == engine.RoleAssistant {
		r.turn++
		for _, tc := range m.ToolCalls {
			c := Call{Tool: tc.Name, Turn: r.turn}
			if args, msg := tools.ParseArguments(tc.Arguments); msg == "" {
				c.Args = args
			} else {
				c.RawArgs = tc.Arguments
			}
			r.pending = append(r.pending, len(r.calls))
			r.calls = append(r.calls, c)
		}
		return
	}
	res := a.Result
	if res == nil {
		return
	}
	if len(r.pending) > 0 {
		r.calls[r.pending[0]].Status = string(res.Status)
		r.pending = r.pending[1:]
		return
	}
	c := Call{Tool: res.ToolName, Turn: r.turn, Status: string(res.Status)}
	if args, ok := res.Metadata["arguments"].(map[string]any); ok {
		c.Args = args
	}
	r.calls = append(r.calls, c)
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
