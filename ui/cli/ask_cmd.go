package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/config"
)

// agentFlags are the flags shared by ask and the TUI.
type agentFlags struct {
	agent, system, tools string
}

func (f *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.agent, "agent", "", "agent: simple, orchestrator or react (default from config: orchestrator)")
	cmd.Flags().StringVar(&f.tools, "tools", "", "comma-separated tools the model may call, or none (default from config)")
	cmd.Flags().StringVar(&f.system, "system", "", "system prompt (replaces the agent's default)")
}

func (f *agentFlags) configFlags(cmd *cobra.Command) config.Flags {
	cf := config.Flags{Agent: f.agent, System: f.system}
	if cmd.Flags().Changed("tools") {
		t := f.tools
		cf.Tools = &t
	}
	return cf
}

func (a *app) askCommand() *cobra.Command {
	var af agentFlags
	var asJSON, yes, noStream bool
	cmd := &cobra.Command{
		Use:   "ask [flags] QUERY...",
		Short: "Ask one question from the shell; the answer streams to stdout",
		Long: `Ask the model one question. The answer streams to stdout; each tool call is
shown on stderr when it starts and when it ends (name, arguments, result
preview, latency, cost). With no QUERY, the question is read from stdin.

Tools that can do harm ask for approval on the terminal ([y/N]); when stdin is
not a terminal they are refused unless --yes is given.

Exit status: 0 answered, 1 the run failed (server or model error),
2 the command was used wrongly, 130 interrupted.`,
		Example: `  jarvis ask --agent orchestrator --tools calculator "What is 15% of 340?"
  jarvis ask --json --tools calculator,think "Solve: 2x + 5 = 13"
  git diff | jarvis ask --agent simple "Write a commit message for this diff"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			query := joinArgs(args)
			if query == "" {
				q, err := a.readQueryFromStdin()
				if err != nil {
					return err
				}
				query = q
			}
			if _, err := a.loadConfig(af.configFlags(cmd)); err != nil {
				return err
			}
			return a.ask(cmd.Context(), query, askOptions{json: asJSON, yes: yes, stream: !noStream && !asJSON})
		},
	}
	af.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (content, tool_results, usage, model, turns)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve every tool call that needs confirmation")
	cmd.Flags().BoolVar(&noStream, "no-stream", false, "print the answer once it is complete instead of streaming it")
	return cmd
}

// readQueryFromStdin takes the question from a pipe; a terminal on stdin
// with no QUERY is a usage error rather than a silent wait.
func (a *app) readQueryFromStdin() (string, error) {
	if f, ok := a.io.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "", usageErr("no question given. Usage: jarvis ask [flags] QUERY...")
	}
	b, err := io.ReadAll(io.LimitReader(a.io.In, 1<<20))
	if err != nil {
		return "", failErr("reading the question from stdin: %v", err)
	}
	q := strings.TrimSpace(string(b))
	if q == "" {
		return "", usageErr("no question given (stdin was empty). Usage: jarvis ask [flags] QUERY...")
	}
	return q, nil
}

type askOptions struct {
	json, yes, stream bool
}

func (a *app) ask(ctx context.Context, query string, opts askOptions) error {
	env, err := a.environment()
	if err != nil {
		return err
	}
	cfg := env.cfg
	if needsMCP(cfg.MCP, cfg.Tools) && len(cfg.Tools) > 0 {
		if _, err := a.startMCP(ctx, env, true, a.io.Err); err != nil {
			return err
		}
	}
	list, err := env.buildTools(cfg.Tools)
	if err != nil {
		return err
	}
	printer := &askPrinter{out: a.io.Out, errw: a.io.Err, stream: opts.stream, tools: newEventPrinter(a.io.Err, isTerminal(a.io.Err))}
	model, note, err := env.resolveModel(ctx)
	if err != nil {
		return failErr("%v", err)
	}
	if note != "" {
		printer.note(note)
	}
	confirmer := a.terminalConfirmer(opts.yes)
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Bus: printer, Confirmer: confirmer})
	if err != nil {
		return failErr("%v", err)
	}
	engOpts, _ := cfg.EngineOptions()
	ag, err := agent.New(cfg.Agent, agent.Config{
		Engine: env.engine, Model: model, Executor: exec, Bus: printer, System: cfg.System,
		Options: engOpts, MaxTurns: cfg.MaxTurns, Price: price(cfg),
	})
	if err != nil {
		return usageErr("%v", err)
	}
	res, runErr := ag.Run(ctx, &agent.Conversation{}, query)
	printer.end()
	if opts.json {
		if err := writeJSON(a.io.Out, askJSON(res)); err != nil {
			return err
		}
	} else if !printer.streamedAnswer && res != nil && res.Content != "" {
		fmt.Fprintln(a.io.Out, res.Content)
	}
	if confirmer == nil && deniedForNoTerminal(res) {
		printer.note("a tool needed approval but stdin is not a terminal, so jarvis could not ask; rerun with --yes to approve")
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return &exitError{code: exitSignal, err: errors.New("interrupted")}
		}
		return failErr("%v", runErr)
	}
	return nil
}

func deniedForNoTerminal(res *agent.Result) bool {
	if res == nil {
		return false
	}
	for _, r := range res.ToolResults {
		if r.Status == tools.StatusDenied && strings.Contains(r.Content, "no confirmation callback") {
			return true
		}
	}
	return false
}

type askToolJSON struct {
	ToolName       string  `json:"tool_name"`
	Content        string  `json:"content"`
	Success        bool    `json:"success"`
	Status         string  `json:"status"`
	LatencySeconds float64 `json:"latency_seconds"`
	CostUSD        float64 `json:"cost_usd"`
}

type askResultJSON struct {
	Content     string        `json:"content"`
	ToolResults []askToolJSON `json:"tool_results"`
	Usage       events.Usage  `json:"usage"`
	Model       string        `json:"model"`
	Turns       int           `json:"turns"`
	Agent       string        `json:"agent"`
	Notices     []string      `json:"notices,omitempty"`
	Stopped     string        `json:"stopped,omitempty"`
}

func askJSON(res *agent.Result) askResultJSON {
	out := askResultJSON{ToolResults: []askToolJSON{}}
	if res == nil {
		return out
	}
	out.Content, out.Usage, out.Model, out.Turns, out.Agent, out.Notices, out.Stopped =
		res.Content, res.Usage, res.Model, res.Turns, res.Agent, res.Notices, res.Stopped
	for _, r := range res.ToolResults {
		out.ToolResults = append(out.ToolResults, askToolJSON{r.ToolName, r.Content, r.Success, string(r.Status), r.LatencySeconds, r.CostUSD})
	}
	return out
}

// askPrinter turns a run's events into terminal output: the answer's tokens
// on stdout as they arrive, tool calls and notices on stderr. A react run's
// text is its working (Thought/Action lines), so it goes to stderr and only
// the final answer reaches stdout.
type askPrinter struct {
	mu     sync.Mutex
	out    io.Writer
	errw   io.Writer
	tools  *eventPrinter
	stream bool

	turnWrote      bool // the current turn put text on stdout
	anyWrote       bool
	lastNewline    bool
	streamedAnswer bool
}

func (p *askPrinter) Publish(e events.Event) {
	switch e.Type {
	case events.Token:
		if !p.stream || e.Run.Agent == agent.ReAct {
			return
		}
		p.mu.Lock()
		io.WriteString(p.out, e.Text)
		p.turnWrote, p.anyWrote, p.streamedAnswer = true, true, true
		p.lastNewline = strings.HasSuffix(e.Text, "\n")
		p.mu.Unlock()
	case events.TurnStart:
		p.mu.Lock()
		if p.turnWrote && !p.lastNewline {
			io.WriteString(p.out, "\n")
			p.lastNewline = true
		}
		p.turnWrote = false
		p.mu.Unlock()
	case events.TurnEnd:
		// A turn that asked for tools was working, not answering: its text
		// stays on screen but the final answer is what follows.
		if e.Turn != nil && e.Turn.ToolCalls > 0 {
			p.mu.Lock()
			p.streamedAnswer = false
			p.mu.Unlock()
		}
	case events.Notice:
		p.note(e.Text)
	default:
		p.tools.Publish(e)
	}
}

func (p *askPrinter) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.errw, "%s\n", p.tools.paint(ansiYellow, "note: "+msg))
}

// end closes the streamed answer with a newline.
func (p *askPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.anyWrote && !p.lastNewline {
		io.WriteString(p.out, "\n")
	}
}
