package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/app/eval"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/audit"
	"github.com/jarvis-workbench/jarvis/store/evals"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/ui/evalview"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui"
)

type evalFlags struct {
	suite, agents, engines  string
	scratch                 string
	repeat                  int
	asJSON, verbose, noSave bool
	failUnder               string
}

const evalLong = `Measure how well models call tools. Every case of a suite (a prompt, the
tools offered, what should happen) runs through the real agent loop and tool
executor, so confirmation rules, timeouts and the loop guard apply as in a
chat, and is scored on the calls the model made (tool, number, arguments,
order, turns) and on its answer.

Without --suite, jarvis's built-in suite runs: single calls, argument
extraction, parallel calls, choosing among tools, multi-step calls and
questions that need no tool. --model, --agent and --engine take
comma-separated lists; every combination is measured.

Each case runs in a sandbox: a scratch directory with the case's files and a
scratch database for memory and scheduled tasks, never yours. Tools that
need confirmation are denied unless the suite approves them.

Results are saved in the database: 'jarvis eval history' lists them and
compares two runs case by case.

A case run that could not be made (the server failed, the request did not
fit the window) is not the model's failure: it is marked ! and counted
apart, and the rates count only the runs made. A model that never called a
tool is flagged: it passes only the cases that need none.

Exit status: 0 the evaluation ran (whatever the pass rate; see --fail-under),
1 it could not run (server, model), a case run could not be made, or a pass
rate is under --fail-under, 2 wrong use or a bad suite file (an unknown tool,
an expected argument the tool does not take), 130 interrupted.`

func (a *cmdline) evalCommand() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [flags]",
		Short: "Measure how well models call tools, on a suite of cases",
		Long:  evalLong,
		Example: `  jarvis eval --model qwen3:8b
  jarvis eval --model qwen3:8b,llama3.2:3b --agent orchestrator,react
  jarvis eval --suite my-suite.json --repeat 3 --json > results.json
  jarvis eval --engine openai=http://127.0.0.1:8080/v1 --model local
  jarvis eval --fail-under 90%`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runEval(cmd.Context(), &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "suite file (JSON, or TOML by its .toml name), or - for stdin (default: the built-in suite)")
	fl.StringVar(&f.agents, "agent", "", "agents to measure, comma-separated: simple, orchestrator, react (default from config)")
	fl.StringVar(&f.engines, "engine", "", "engines, comma-separated: ollama, ollama=URL, openai=URL (OPENAI_API_KEY is sent when set); default ollama at --host")
	fl.IntVar(&f.repeat, "repeat", 1, "run every case N times, for models whose answers vary; the pass rate is reported per case")
	fl.BoolVar(&f.asJSON, "json", false, "print the results as JSON")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every tool call on stderr as it runs")
	fl.BoolVar(&f.noSave, "no-save", false, "do not keep the results in the database")
	fl.StringVar(&f.scratch, "scratch", "", "keep the cases' sandboxes (files, scratch databases) in DIR to inspect them; default a temporary directory, removed at the end")
	fl.StringVar(&f.failUnder, "fail-under", "", "exit 1 when a model's pass rate is under RATE (0.8 or 80%), for CI")
	cmd.AddCommand(a.evalHistoryCommand())
	return cmd
}

// parseRate reads 0.8, 80 or 80% as a share.
func parseRate(s string) (float64, error) {
	txt := strings.TrimSpace(s)
	pct := strings.HasSuffix(txt, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(txt, "%"), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("--fail-under %q is not a rate; write 0.8 or 80%%", s)
	}
	if pct || f > 1 {
		f /= 100
	}
	if f > 1 {
		return 0, fmt.Errorf("--fail-under %q is over 100%%", s)
	}
	return f, nil
}

// uniqueList splits a comma-separated list, dropping blanks and repeats.
func uniqueList(s string) []string {
	var out []string
	for _, p := range splitList(s) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// evalEngine is one engine named by --engine.
type evalEngine struct {
	name string
	eng  engine.InferenceEngine
}

// evalEngines builds the engines --engine names (KIND or KIND=URL); a kind
// without a URL is the configured server when it is of that kind (host),
// else that kind's default address.
func evalEngines(spec, kind0, host string) ([]evalEngine, error) {
	specs := uniqueList(spec)
	if len(specs) == 0 {
		specs = []string{kind0}
	}
	var out []evalEngine
	for _, s := range specs {
		kind, url, _ := strings.Cut(s, "=")
		kind = strings.ToLower(strings.TrimSpace(kind))
		url = strings.TrimSpace(url)
		d, ok := engine.DriverFor(kind)
		if !ok {
			ks := engine.Kinds()
			return nil, fmt.Errorf("--engine %q: the engines are %s and %s (KIND=URL for a server of that kind)", s, strings.Join(ks[:len(ks)-1], ", "), ks[len(ks)-1])
		}
		switch {
		case url == "" && kind == kind0:
			url = host
		case url == "":
			// Not the configured server: jarvis will not guess where it is.
			return nil, fmt.Errorf("--engine %s needs the server's URL: %s=URL (e.g. %s=%s)", kind, kind, kind, d.DefaultHost)
		}
		key := ""
		if d.TakesKey {
			key = os.Getenv(openai.EnvAPIKey)
		}
		eng, err := app.NewEngine(kind, url, key, "")
		if err != nil {
			return nil, fmt.Errorf("--engine %s: %v", s, err)
		}
		out = append(out, evalEngine{name: kind, eng: eng})
	}
	return out, nil
}

// evalTools is the tool source of evaluations: the built-in tools with the
// person's settings (so a description changed in the config is measured),
// bound to each case's sandbox. MCP tools are left out: a suite runs on
// any machine.
func evalTools(cfg *config.Config, dbPath string) eval.ToolSource {
	return eval.BuiltinTools(app.BaseDeps(cfg, dbPath))
}

// evalSetup is what the workbench's /eval needs: the evaluation's tools
// and the database its results are saved in (through the write queue:
// saving never waits for the file).
func (a *cmdline) evalSetup(cfg *config.Config, db *store.DB) *tui.EvalSetup {
	return &tui.EvalSetup{
		Tools: evalTools(cfg, db.Path()), EngineName: cfg.EngineName(), Audit: auditLog{Log: audit.New(db)},
		Save: func(rep *eval.Report) error {
			rep.AssignIDs()
			return evals.New(db).SaveQueued(rep.Records()...)
		},
	}
}

// readSuite reads --suite, or the built-in suite.
func (a *cmdline) readSuite(path string) (*eval.Suite, error) {
	known := builtin.Registry(builtin.Deps{}).Names()
	var s *eval.Suite
	var err error
	switch path {
	case "":
		s, err = eval.Builtin(known)
	case "-":
		in := a.io.In
		if in == nil {
			in = strings.NewReader("")
		}
		s, err = eval.Read(in, "stdin", known)
	default:
		f, oerr := os.Open(expandHome(path))
		if oerr != nil {
			return nil, usageErr("suite %s: %v", path, oerr)
		}
		defer f.Close()
		s, err = eval.Read(f, path, known)
	}
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return s, nil
}

func (a *cmdline) runEval(ctx context.Context, f *evalFlags) error {
	if f.repeat < 1 {
		return usageErr("--repeat must be at least 1, not %d", f.repeat)
	}
	var failUnder float64
	if f.failUnder != "" {
		r, err := parseRate(f.failUnder)
		if err != nil {
			return usageErr("%v", err)
		}
		failUnder = r
	}
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return err
	}
	suite, err := a.readSuite(f.suite)
	if err != nil {
		return err
	}
	agents := uniqueList(f.agents)
	if len(agents) == 0 {
		agents = []string{cfg.Agent}
	}
	for _, ag := range agents {
		if !slices.Contains(agent.Names, ag) {
			return usageErr("--agent %q: choose among %s", ag, strings.Join(agent.Names, ", "))
		}
	}
	engines, err := evalEngines(f.engines, cfg.EngineName(), cfg.Host)
	if err != nil {
		return usageErr("%v", err)
	}
	var targets []eval.Target
	for _, e := range engines {
		models := uniqueList(cfg.Model)
		if len(models) == 0 {
			m, err := pickModel(ctx, e.eng, e.name)
			if err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintf(a.io.Err, "jarvis: no model set; using %s on %s (set one with --model)\n", safe.Text(m), safe.Text(e.eng.Host()))
			models = []string{m}
		}
		for _, m := range models {
			for _, ag := range agents {
				targets = append(targets, eval.Target{Engine: e.eng, EngineName: e.name, Model: m, Agent: ag})
			}
		}
	}
	db, err := a.database()
	if err != nil {
		return err
	}
	scratch := ""
	if f.scratch != "" {
		abs, err := filepath.Abs(expandHome(f.scratch))
		if err == nil {
			err = os.MkdirAll(abs, 0o700)
		}
		if err != nil {
			return usageErr("--scratch %s: %v", f.scratch, err)
		}
		scratch = abs
	}
	progress := newEvalProgress(a.io.Err, f.verbose)
	var bus events.Publisher
	if f.verbose {
		bus = newEventPrinter(a.io.Err, isTerminal(a.io.Err))
	}
	opts, _ := cfg.EngineOptions()
	runner, err := eval.New(eval.Config{
		Suite: suite, Targets: targets, Repeat: f.repeat, Tools: evalTools(cfg, db.Path()), Settings: cfg.Tool,
		System: cfg.System, Options: opts, MaxTurns: cfg.MaxTurns, Price: priceAt(cfg, ""), Bus: bus, Progress: progress.show,
		ScratchDir: scratch, Audit: auditLog{Log: audit.New(db)},
	})
	if err != nil {
		return usageErr("%v", err)
	}
	if err := runner.Check(ctx); err != nil {
		if _, bad := err.(*eval.SuiteError); bad {
			return usageErr("%v", err)
		}
		return failErr("%v", err)
	}
	rep, runErr := runner.Run(ctx)
	progress.end()
	if rep == nil {
		return failErr("%v", runErr)
	}
	if !f.noSave && len(rep.Results) > 0 {
		a.saveEval(db, rep)
	}
	if f.asJSON {
		if err := writeJSON(a.io.Out, rep); err != nil {
			return failErr("writing the results: %v", err)
		}
	} else {
		for _, l := range evalview.Report(rep, outputWidth(a.io.Out)) {
			fmt.Fprintln(a.io.Out, l)
		}
	}
	if runErr != nil {
		return failErr("%v", runErr)
	}
	notRun := 0
	for _, r := range rep.Results {
		notRun += r.NotRun
	}
	if notRun > 0 {
		// The measure is incomplete: what could not run is not the
		// model's failure, and not a pass either.
		return failErr("%s could not be made (marked %s above; the server failed or a request did not fit the window); the rates count only the runs made", format.Count(notRun, "case run"), "!")
	}
	if f.failUnder != "" {
		var under []string
		for _, r := range rep.Results {
			if r.PassRate < failUnder {
				under = append(under, fmt.Sprintf("%s passed %s", r.Target, evalview.Percent(r.PassRate)))
			}
		}
		if len(under) > 0 {
			return failErr("under --fail-under %s: %s", evalview.Percent(failUnder), safe.Text(strings.Join(under, "; ")))
		}
	}
	return nil
}

// saveEval keeps the report's runs in the database through its write
// queue, and says under which ids. A busy database keeps them in the
// queue's journal, saved by the next jarvis if this one must stop first.
func (a *cmdline) saveEval(db *store.DB, rep *eval.Report) {
	rep.AssignIDs()
	st := evals.New(db)
	if err := st.SaveQueued(rep.Records()...); err != nil {
		fmt.Fprintf(a.io.Err, "jarvis: the results could not be saved: %s\n", safe.Text(err.Error()))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Flush(ctx); err != nil {
		fmt.Fprintf(a.io.Err, "jarvis: the results wait to be saved: %s\n", safe.Text(err.Error()))
		return
	}
	ids := make([]string, len(rep.Results))
	for i, r := range rep.Results {
		ids[i] = r.ID
	}
	fmt.Fprintf(a.io.Err, "jarvis: saved as %s ('jarvis eval history' lists runs)\n", strings.Join(ids, ", "))
}

// outputWidth is the terminal's width, or 100 into a pipe or a file.
func outputWidth(w io.Writer) int {
	if _, guarded := w.(*safe.Writer); guarded {
		w = os.Stdout // guardStdout wraps stdout only when it is a terminal
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 100
}

// evalProgress shows a run's progress on stderr: on a terminal one line
// redrawn in place, into a pipe (or with tool lines, --verbose) a line per
// finished case.
type evalProgress struct {
	mu      sync.Mutex
	w       io.Writer
	redraw  bool
	drawn   bool
	started time.Time
}

func newEvalProgress(w io.Writer, verbose bool) *evalProgress {
	return &evalProgress{w: w, redraw: isTerminal(w) && !verbose, started: time.Now()}
}

func (p *evalProgress) show(e eval.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := evalview.Progress(e)
	if !p.redraw {
		if e.Done != nil {
			fmt.Fprintln(p.w, line)
		}
		return
	}
	width := 80
	if f, ok := p.w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 1 {
			width = cols - 1
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[2K%s", format.Cut(line+" · "+format.Latency(time.Since(p.started).Seconds()), width))
	p.drawn = true
	if e.Done != nil && !e.Done.Passed {
		// A failure stays on screen: the line is ended and the next
		// redraw starts below it.
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// end clears the progress line.
func (p *evalProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.drawn = false
	}
}

func (a *cmdline) evalHistoryCommand() *cobra.Command {
	var limit int
	var asJSON, compare bool
	cmd := &cobra.Command{
		Use:   "history [ID] | --compare ID ID",
		Short: "List past evaluation runs, show one, or compare two case by case",
		Long: `Without an argument, list the past evaluation runs, newest first. With an id
(or any unique part of one, such as its last four characters), show that
run's cases. With --compare and two ids, show per case whether it passed in
each run and which flipped: fixed (failed, now passes) or broken.`,
		Example: `  jarvis eval history
  jarvis eval history k3xq
  jarvis eval history --compare k3xq m9ta`,
		Args: argsUsage(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if compare && len(args) != 2 {
				return usageErr("--compare needs two run ids. Usage: jarvis eval history --compare ID ID")
			}
			if !compare && len(args) == 2 {
				return usageErr("two ids given without --compare. Usage: jarvis eval history --compare ID ID")
			}
			db, err := a.readDB("eval history")
			if err != nil {
				return err
			}
			st := evals.New(db)
			width := outputWidth(a.io.Out)
			switch len(args) {
			case 0:
				runs, err := st.List(limit)
				if err != nil {
					return failErr("%v", err)
				}
				if asJSON {
					if runs == nil {
						runs = []evals.Run{}
					}
					return writeJSON(a.io.Out, runs)
				}
				return printLines(a.io.Out, evalview.History(runs, width))
			case 1:
				run, err := st.Get(args[0])
				if err != nil {
					return failErr("%v", err)
				}
				if asJSON {
					return writeJSON(a.io.Out, run)
				}
				return printLines(a.io.Out, evalview.Show(run, width))
			}
			ra, err := st.Get(args[0])
			if err != nil {
				return failErr("%v", err)
			}
			rb, err := st.Get(args[1])
			if err != nil {
				return failErr("%v", err)
			}
			if asJSON {
				type flip struct {
					evals.Flip
					Change string `json:"change"`
				}
				var out struct {
					A     string `json:"a"`
					B     string `json:"b"`
					Cases []flip `json:"cases"`
				}
				out.A, out.B, out.Cases = ra.ID, rb.ID, []flip{}
				for _, f := range evals.Compare(ra, rb) {
					out.Cases = append(out.Cases, flip{f, f.Change()})
				}
				return writeJSON(a.io.Out, out)
			}
			return printLines(a.io.Out, evalview.Compare(ra, rb, width))
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs to list (0: all)")
	cmd.Flags().BoolVar(&compare, "compare", false, "compare two runs case by case")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func printLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return failErr("%v", err)
		}
	}
	return nil
}
