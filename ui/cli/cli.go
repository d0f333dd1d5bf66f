// Package cli is the jarvis command line: it parses flags once, builds its
// environment with package app (the configuration, the engines, the tool
// registry, the database), and hands over to the TUI or to a headless
// command.
//
// Exit codes are part of the interface: 0 success, 1 the work failed (a
// failed tool result, an engine error), 2 the command was used wrongly.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitUsage   = 2
	exitSignal  = 130
	exitTerm    = 143
	helpSuffix  = "Run 'jarvis --help' for usage."
	defaultName = "jarvis"
)

// IO is where a command reads and writes; tests replace it.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr reports a wrong use of a command (exit 2).
func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, worded(a)...)}
}

// failErr reports work that failed (exit 1).
func failErr(format string, a ...any) error {
	return &exitError{code: ExitFailed, err: fmt.Errorf(format, worded(a)...)}
}

// worded gives the errors among a the command line's words for their
// advice (see explain), keeping them errors for %w.
func worded(a []any) []any {
	for i, x := range a {
		if err, ok := x.(error); ok {
			a[i] = cliWorded{err}
		}
	}
	return a
}

// cliWorded is an error whose message speaks of the command line's flags.
type cliWorded struct{ err error }

func (w cliWorded) Error() string { return explain(w.err) }
func (w cliWorded) Unwrap() error { return w.err }

// silentFail exits 1 without printing: the command already said why.
var silentFail = &exitError{code: ExitFailed, err: errors.New("")}

// globals are the flags every command accepts, before or after its name.
type globals struct {
	host, model, configPath, dbPath, engine string
}

// Main runs jarvis with args and returns the exit code.
func Main(args []string, stdio IO) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		// The first signal stops the command; later ones wait in the
		// channel while it winds down.
		if s, ok := <-sigs; ok {
			cancel(signalled(s))
		}
	}()
	defer startMemProfile(func(format string, a ...any) { fmt.Fprintf(stdio.Err, format, a...) })()
	return run(ctx, args, stdio)
}

// stopSignal is the cause of a command stopped by a signal: what it says,
// and the exit status, 128 plus the signal's number as shells report it
// (130 for ctrl+c, 143 for SIGTERM).
type stopSignal struct {
	word string
	code int
}

func (s *stopSignal) Error() string { return s.word }

func signalled(s os.Signal) *stopSignal {
	if s == syscall.SIGTERM {
		return &stopSignal{word: "terminated", code: exitTerm}
	}
	return &stopSignal{word: "interrupted", code: exitSignal}
}

// stopCause says how ctx was stopped: by a signal (its word and exit
// status), else as an interruption.
func stopCause(ctx context.Context) (string, int) {
	var s *stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return s.word, s.code
	}
	return "interrupted", exitSignal
}

func run(ctx context.Context, args []string, stdio IO) int {
	c := &cmdline{io: stdio}
	defer c.close()
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	c.flushStdout()
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil {
		// Interrupted: whatever failed afterwards failed because of it.
		word, code := stopCause(ctx)
		fmt.Fprintln(stdio.Err, "jarvis: "+word)
		return code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		// Messages quote servers, models and tools: never as sequences.
		if msg := ee.Error(); msg != "" {
			fmt.Fprintf(stdio.Err, "jarvis: %s\n", safe.Text(msg))
		}
		return ee.code
	}
	// Anything else cobra returns is a flag or argument problem.
	fmt.Fprintf(stdio.Err, "jarvis: %s\n%s\n", safe.Text(explain(err)), helpSuffix)
	return ExitUsage
}

// app holds what commands share: the IO, the global flags, and (once
// loaded) the configuration.
type cmdline struct {
	io  IO
	g   globals
	cfg *config.Config
	env *environment
	db  *store.DB
	// closers run when the command ends (MCP servers, the database).
	closers []func()
}

// close releases what the command started, last first.
func (a *cmdline) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

func (a *cmdline) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   defaultName,
		Short: "A terminal workbench for local models and their tools",
		Long: `jarvis chats with a local model (Ollama, or any OpenAI-compatible server) that can call tools. Every tool call
is shown with its arguments, latency and cost; tools that can do harm wait for
your approval.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          argsUsage(cobra.NoArgs),
		Annotations:   map[string]string{ownsTerminal: "yes"},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.guardStdout(cmd)
			return a.refuseBadConfig(cmd)
		},
	}
	var chat chatFlags
	chat.register(root)
	root.RunE = func(cmd *cobra.Command, _ []string) error { return a.chat(cmd, &chat) }
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErr("%s\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&a.g.engine, "engine", "", "kind of model server: ollama or openai (an OpenAI-compatible API; default from config: ollama)")
	pf.StringVar(&a.g.host, "host", "", "server URL: Ollama's (default $OLLAMA_HOST or http://127.0.0.1:11434), or the base URL of an OpenAI-compatible API (default http://127.0.0.1:8080/v1)")
	pf.StringVar(&a.g.model, "model", "", "model to use, ENDPOINT/MODEL for a configured endpoint (default from config)")
	pf.StringVar(&a.g.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/jarvis/config.toml)")
	pf.StringVar(&a.g.dbPath, "db", "", "database file (default $JARVIS_DB or $XDG_DATA_HOME/jarvis/jarvis.db)")

	root.AddCommand(a.toolsCommand(), a.versionCommand(), a.askCommand(), a.modelsCommand(), a.doctorCommand(), a.configCommand(), a.schedulerCommand(), a.memoryCommand(), a.mcpCommand(), a.chatCommand(), a.approvalsCommand(), a.auditCommand(), a.evalCommand(),
		a.changesCommand(), a.undoCommand(), a.sessionsCommand())
	return root
}

// argsUsage wraps a cobra positional-argument check so that a wrong count
// exits 2 with the command's usage line.
func argsUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageErr("%s\nUsage: %s", err, cmd.UseLine())
		}
		return nil
	}
}
