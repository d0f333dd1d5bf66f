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

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/attach"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// agentFlags are the flags shared by ask and the TUI.
type agentFlags struct {
	agent, system, tools string
	numCtx               int
}

func (f *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.agent, "agent", "", "agent: simple, orchestrator or react (default from config: orchestrator)")
	cmd.Flags().StringVar(&f.tools, "tools", "", "comma-separated tools the model may call, or none (default from config)")
	cmd.Flags().StringVar(&f.system, "system", "", "system prompt (replaces the agent's default)")
	cmd.Flags().IntVar(&f.numCtx, "num-ctx", 0, "context window in tokens (default: options.num_ctx, else the server's window for the model, else min(its maximum, 4096))")
}

func (f *agentFlags) configFlags(cmd *cobra.Command) config.Flags {
	cf := config.Flags{Agent: f.agent, System: f.system, NumCtx: f.numCtx}
	if cmd.Flags().Changed("tools") {
		t := f.tools
		cf.Tools = &t
	}
	return cf
}

func (a *cmdline) askCommand() *cobra.Command {
	var af agentFlags
	var rf runFlags
	var asJSON, yes, noStream bool
	var so askSessionFlags
	var images []string
	cmd := &cobra.Command{
		Use:   "ask [flags] QUERY...",
		Short: "Ask one question from the shell; the answer streams to stdout",
		Long: `Ask the model one question. The answer streams to stdout; each tool call is
shown on stderr when it starts and when it ends (name, arguments, result
preview, latency, cost), and when stderr is a terminal a last line gives the
run's tokens, speed, time and cost. Text piped on stdin (up to 1 MiB) is
added after the QUERY (or is the question when there is none).

On a terminal, escape sequences and control characters in the answer and in
tool output are removed; into a pipe or a file the answer is written exactly
as the model sent it. With --json, a failed run prints an "error" field
beside what arrived before the failure.

Tools that can do harm ask for approval on the terminal ([y/N]); when stdin is
not a terminal they are refused unless --yes is given.

--image attaches an image (PNG, JPEG, WebP or GIF, found from the content;
repeat the flag for several) for a model that can read images; a model
that cannot is refused before anything is sent, with the names of the
server's models that can.

Without a session flag nothing is saved. --save keeps the exchange as a new
session (its id is printed, and in the JSON); --continue goes on the most
recent session and --session ID (or a unique prefix of it) a given one: the
question is asked after the session's conversation as the model last saw
it (compactions included), the session's model, agent and tools are used
unless --model, --agent or --tools say otherwise, and the new messages are
saved to it.

Exit status: 0 answered, 1 the run failed (server or model error) or
stopped without the model's whole answer (the turn limit, the loop guard,
a reply cut at its length or by a full window: "stopped" in the JSON says
which), 2 the command was used wrongly, 130 interrupted (ctrl+c), 143
terminated (SIGTERM).`,
		Example: `  jarvis ask --agent orchestrator --tools calculator "What is 15% of 340?"
  jarvis ask --json --tools calculator,think "Solve: 2x + 5 = 13"
  git diff | jarvis ask --agent simple "Write a commit message for this diff"
  jarvis ask --model gemma3 --image ~/shot.png "What does this screenshot say?"
  id=$(jarvis ask --save --json "Let's plan a trip to Lisbon" | jq -r .session)
  jarvis ask --session "$id" "What about the weather in May?"
  jarvis ask --continue "And a packing list"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := so.check(); err != nil {
				return err
			}
			query, err := a.askQuery(joinArgs(args))
			if err != nil {
				return err
			}
			cf := af.configFlags(cmd)
			if err := rf.apply(cmd, &cf); err != nil {
				return err
			}
			if _, err := a.loadConfig(cf); err != nil {
				return err
			}
			return a.ask(cmd.Context(), query, askOptions{json: asJSON, yes: yes, stream: !noStream && !asJSON, session: so, images: images, run: rf})
		},
	}
	af.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON: always content, tool_results, usage, model, turns, agent and context; thinking, notices, stopped, refused, error and session when they are set")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve every tool call that needs confirmation")
	cmd.Flags().BoolVar(&noStream, "no-stream", false, "print the answer once it is complete instead of streaming it")
	cmd.Flags().StringArrayVar(&images, "image", nil, "attach an image (PNG, JPEG, WebP, GIF; ~ expanded); repeat for several")
	rf.register(cmd)
	so.register(cmd)
	return cmd
}

// maxPiped bounds what ask reads from a pipe.
const maxPiped = 1 << 20

// askQuery builds the question: the arguments, followed by what is piped
// on stdin (`git diff | jarvis ask "Write a commit message"`), or stdin
// alone when there are no arguments. A terminal on stdin is never read.
func (a *cmdline) askQuery(args string) (string, error) {
	piped, err := a.pipedInput()
	if err != nil {
		return "", err
	}
	switch {
	case args != "" && piped != "":
		return args + "\n\n" + piped, nil
	case args != "":
		return args, nil
	case piped != "":
		return piped, nil
	}
	return "", usageErr("no question given. Usage: jarvis ask [flags] QUERY... (or pipe the question on stdin)")
}

// pipedInput reads stdin when it is a pipe or a file; a terminal or a
// device (/dev/null) gives nothing.
func (a *cmdline) pipedInput() (string, error) {
	if f, ok := a.io.In.(*os.File); ok {
		info, err := f.Stat()
		if err != nil || info.Mode()&(os.ModeNamedPipe) == 0 && !info.Mode().IsRegular() {
			return "", nil
		}
	}
	if a.io.In == nil {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(a.io.In, maxPiped+1))
	if err != nil {
		return "", failErr("reading stdin: %v", err)
	}
	if len(b) > maxPiped {
		return "", usageErr("the input on stdin is larger than %d MiB; pass a smaller part, or index it with 'jarvis memory index' and ask with the retrieval tool", maxPiped>>20)
	}
	return strings.TrimSpace(string(b)), nil
}

type askOptions struct {
	json, yes, stream bool
	session           askSessionFlags
	images            []string
	run               runFlags
}

func (a *cmdline) ask(ctx context.Context, query string, opts askOptions) error {
	printer := &askPrinter{out: a.io.Out, stream: opts.stream, tools: newEventPrinter(a.io.Err, isTerminal(a.io.Err)), ttyErr: isTerminal(a.io.Err)}
	var approve []string
	if opts.run.approve != "" {
		env, err := a.environment()
		if err != nil {
			return err
		}
		if approve, err = opts.run.approved(env); err != nil {
			return err
		}
	}
	policy, canAsk := a.commandPolicy(tools.SourceAsk, opts.yes, approve...)
	res, sess, err := a.runAsk(ctx, query, opts, printer, policy, approve)
	printer.end()
	var ee *exitError
	if errors.As(err, &ee) && ee.code == ExitUsage {
		return err // the command line was wrong: nothing ran
	}
	if sess != nil {
		sess.report(printer)
	}
	if opts.json {
		out := askJSON(ctx, res, err)
		if sess != nil {
			out.Session = sess.id
		}
		if werr := writeJSON(a.io.Out, out); werr != nil && err == nil {
			return failErr("writing the result: %v", werr)
		}
	} else if res.Content != "" && !printer.streamed(res.Content) {
		fmt.Fprintln(a.io.Out, res.Content)
	}
	if !canAsk && !opts.yes && deniedForNoTerminal(res) {
		printer.note("a tool needed approval but stdin is not a terminal, so jarvis could not ask; rerun with --yes to approve")
	}
	if !opts.json && res.Turns > 0 && isTerminal(a.io.Err) {
		printer.usage(res)
	}
	if err == nil && stoppedShort(res) {
		// The notice on stderr said why; there is no answer to give.
		return silentFail
	}
	return err
}

// stoppedShort reports whether a run ended without the model's whole
// answer (the turn limit, the loop guard, a reply cut at its length or
// by a full window): ask exits 1 for it, as for a failed run.
func stoppedShort(res *agent.Result) bool {
	return res.Stopped != "" && res.Stopped != agent.StopCancelled
}

// runAsk runs the question. It always returns a result: on failure, what
// arrived before it (the partial answer, the tool results, the usage), or
// only the model and agent when the run could not start.
func (a *cmdline) runAsk(ctx context.Context, query string, opts askOptions, printer *askPrinter, policy *tools.Policy, approve []string) (*agent.Result, *askSession, error) {
	res := &agent.Result{}
	// The session comes first: its model, agent and tools are the run's
	// unless flags say otherwise, and the tools are built from them.
	sess, err := a.openAskSession(opts.session, query)
	if err != nil {
		return res, nil, err
	}
	images, err := a.askImages(opts.images)
	if err != nil {
		return res, sess, err
	}
	res, err = a.runAskIn(ctx, query, images, sess, printer, policy, approve)
	return res, sess, err
}

// askImages reads the --image files.
func (a *cmdline) askImages(paths []string) ([]engine.Image, error) {
	var out []engine.Image
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		im, err := attach.File(p, cfg.Images.MaxBytes)
		if err != nil {
			return nil, usageErr("--image: %v", err)
		}
		out = append(out, im)
	}
	return out, nil
}

func (a *cmdline) runAskIn(ctx context.Context, query string, images []engine.Image, sess *askSession, printer *askPrinter, policy *tools.Policy, approve []string) (*agent.Result, error) {
	res := &agent.Result{}
	env, err := a.environment()
	if err != nil {
		return res, err
	}
	cfg := env.cfg
	res.Agent, res.Model = cfg.Agent, cfg.Model
	if needsMCP(cfg.MCP, cfg.Tools) && len(cfg.Tools) > 0 {
		if _, err := a.startMCPFor(ctx, env, app.MCPServersFor(cfg.Tools), true, a.io.Err); err != nil {
			return res, err
		}
	}
	if err := env.registry.Check(cfg.Tools); err != nil {
		return res, usageErr("%v", err)
	}
	model, note, err := env.resolveModel(ctx)
	if err != nil {
		return res, failErr("%v", env.serverErr(env.at, err))
	}
	res.Model = model
	notes := runNotes(cfg, approve)
	if note != "" {
		notes = append([]string{note}, notes...)
	}
	for _, n := range notes {
		printer.note(n)
	}
	exec, closeTools, err := env.w.Executor(cfg.Tools, policy, printer)
	if err != nil {
		var unknown *tools.UnknownToolError
		if errors.As(err, &unknown) {
			return res, usageErr("%v", err)
		}
		return res, failErr("%v", err)
	}
	defer closeTools()
	turn := env.w.Turn(cfg.Agent, model, exec, printer)
	conv := &agent.Conversation{}
	if sess != nil {
		conv, turn.OnMessage = sess.conv, sess.record
		// The write tools record their changes in the session, for undo.
		ctx = tools.WithSession(ctx, sess.currentID)
	}
	ag, err := turn.Build()
	if err != nil {
		return res, usageErr("%v", err)
	}
	run, err := ag.Answer(ctx, conv, agent.Input{Text: query, Images: images})
	if run != nil {
		res = run
		res.Notices = append(notes, res.Notices...)
	}
	if sess != nil {
		sess.finish(res.Model, cfg.Agent, cfg.Tools, cfg.PersonWindow())
	}
	if err != nil {
		return res, failErr("%v", env.serverErr(env.at, err))
	}
	return res, nil
}

func deniedForNoTerminal(res *agent.Result) bool {
	for _, r := range res.ToolResults {
		if r.Status == tools.StatusDenied && strings.Contains(r.Content, "no confirmation callback") {
			return true
		}
	}
	return false
}

// askResultJSON is what ask --json prints: the run's agent.Result (so a
// field added there reaches scripts too), the error that ended it and the
// session it was saved to. Tool results are whole, as tools run --json
// prints them: the llm tool's sub-query usage and every tool's metadata
// (the call's arguments among them) are there, while context.cut_results
// counts those shortened for the model. Error is set when the run failed;
// the rest is then what arrived before it.
type askResultJSON struct {
	Error string `json:"error,omitempty"`
	agent.Result
	// Session is the id of the session the run was saved to (--save,
	// --continue, --session).
	Session string `json:"session,omitempty"`
}

func askJSON(ctx context.Context, res *agent.Result, err error) askResultJSON {
	out := askResultJSON{Result: *res}
	if out.ToolResults == nil {
		out.ToolResults = []tools.Result{} // [] rather than null for scripts
	}
	if err != nil {
		out.Error = explain(err)
		if ctx.Err() != nil {
			out.Error, _ = stopCause(ctx)
		}
	}
	notices := make([]string, len(out.Notices))
	for i, n := range out.Notices {
		notices[i] = say(n)
	}
	out.Notices = notices
	return out
}

// askPrinter turns a run's events into terminal output: the answer's tokens
// on stdout as they arrive, tool calls and notices on stderr. A react run's
// text is its working (Thought/Action lines), so only its final answer
// reaches stdout.
//
// The tokens are written as they are: on a terminal, stdout is a
// safe.Writer (see guardStdout), which strips escape sequences even when
// they are split between tokens; into a pipe they go byte for byte.
type askPrinter struct {
	mu     sync.Mutex
	out    io.Writer
	tools  *eventPrinter // stderr: tool lines, notes, the usage line
	stream bool
	// ttyErr: stderr is a terminal, so each turn gets a line there.
	ttyErr bool

	turn        strings.Builder // what the current turn put on stdout
	lastTurn    string          // what the last finished turn put on stdout
	anyWrote    bool
	lastNewline bool
}

func (p *askPrinter) Publish(e events.Event) {
	switch e.Type {
	case events.Token:
		if !p.stream || e.Run.Agent == agent.ReAct {
			return
		}
		p.mu.Lock()
		io.WriteString(p.out, e.Text)
		p.turn.WriteString(e.Text)
		p.anyWrote = true
		p.lastNewline = strings.HasSuffix(e.Text, "\n")
		p.mu.Unlock()
	case events.TurnStart:
		p.mu.Lock()
		if p.turn.Len() > 0 && !p.lastNewline {
			io.WriteString(p.out, "\n")
			p.lastNewline = true
		}
		p.turn.Reset()
		p.mu.Unlock()
	case events.TurnEnd:
		p.mu.Lock()
		p.lastTurn = p.turn.String()
		if p.turn.Len() > 0 && !p.lastNewline && p.ttyErr {
			// The turn's line on stderr must not land inside the answer's
			// last line on the same terminal.
			io.WriteString(p.out, "\n")
			p.lastNewline = true
		}
		p.mu.Unlock()
		if p.ttyErr {
			p.turnLine(e.Turn)
		}
	case events.ContextCompacted:
		c := e.Turn.Context
		p.note(fmt.Sprintf("the conversation was compacted to fit the window: %s summarised, about %s tokens saved",
			format.Count(c.Replaced, "earlier message"), format.Tokens(max(c.Before-c.After, 0))))
	case events.Notice:
		p.note(say(e.Text))
	default:
		p.tools.Publish(e)
	}
}

// streamed reports whether answer is what the last turn already streamed,
// so it is not printed twice (an answer that was not streamed, such as a
// react answer or the max-turns text, is printed at the end).
func (p *askPrinter) streamed(answer string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.lastTurn) == strings.TrimSpace(answer)
}

// note prints a notice on stderr; notices can quote a model or a server.
func (p *askPrinter) note(msg string) {
	p.tools.println(p.tools.paint(ansiYellow, "note: "+safe.Text(msg)))
}

// usage prints the run's totals on one line: turns, tool calls, tokens,
// speed, wall time and cost (the models' and the tools').
func (p *askPrinter) usage(res *agent.Result) {
	line := "Σ " + format.Count(res.Turns, "turn")
	if n := len(res.ToolResults); n > 0 {
		line += " · " + format.Count(n, "tool call")
	}
	p.tools.println(p.tools.paint(ansiDim, line+" · "+format.Usage(res.Usage, res.Usage.ToolCostUSD)))
}

// turnLine says, for one turn, how full the window was and what the turn
// cost.
func (p *askPrinter) turnLine(t *events.TurnPayload) {
	line := fmt.Sprintf("turn %d", t.Turn)
	if c := t.Context; c != nil && c.Window > 0 {
		line += " · " + format.WindowUse(c.PromptTokens, c.Window, c.Estimated)
		if c.CutResults > 0 {
			line += " · " + format.Count(c.CutResults, "tool result") + " cut for the model"
		}
	}
	line += " · " + format.Usage(t.Usage, 0)
	p.tools.println(p.tools.paint(ansiDim, line))
}

// end closes the streamed answer with a newline.
func (p *askPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.anyWrote && !p.lastNewline {
		io.WriteString(p.out, "\n")
	}
}
