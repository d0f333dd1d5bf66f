package cli

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// devCommand holds commands for demonstrating and testing jarvis without a
// model. It is hidden from help: people chatting never need it.
func (a *app) devCommand() *cobra.Command {
	dev := &cobra.Command{Use: "dev", Short: "Tools for demos and tests", Hidden: true, Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	var script, addr string
	var window int
	var quiet bool
	fake := &cobra.Command{
		Use:   "fake-ollama --script FILE [--addr HOST:PORT] [--context-length N] [--quiet]",
		Short: "Serve a scripted stand-in for Ollama (engine/ollama/ollamatest's JSON scripts)",
		Long: `Serve a scripted stand-in for Ollama on loopback. The script (JSON, see
docs/engine.md) gives the models, their context windows and templates, the
models /api/pull can fetch, and the replies. The server enforces the windows
as Ollama does: a conversation too big for the window is cut silently unless
the request says "truncate": false, and a reply that fills it stops.

The URL is printed on stdout; every request is logged on stderr, with the
window it ran in, its prompt's tokens and any silent cut.`,
		Example: `  jarvis dev fake-ollama --script engine/ollama/ollamatest/testdata/demo.json --addr 127.0.0.1:11500 &
  jarvis --host http://127.0.0.1:11500 ask --tools calculator "What is 15% of 340?"

  jarvis dev fake-ollama --script engine/ollama/ollamatest/testdata/small-window.json --addr 127.0.0.1:11500`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if script == "" {
				return usageErr("--script FILE is required")
			}
			if window < 0 {
				return usageErr("--context-length must be a positive number of tokens, not %d", window)
			}
			sc, err := ollamatest.LoadScript(script)
			if err != nil {
				return usageErr("%v", err)
			}
			srv, err := ollamatest.Listen(addr, sc)
			if err != nil {
				if errors.Is(err, syscall.EADDRINUSE) {
					return failErr("%v (is a real Ollama running there? choose another address with --addr 127.0.0.1:0)", err)
				}
				return failErr("%v", err)
			}
			defer srv.Close()
			if window > 0 {
				srv.SetDefaultContextLength(window)
			}
			if !quiet {
				srv.LogTo(a.io.Err)
			}
			fmt.Fprintln(a.io.Out, srv.URL)
			<-cmd.Context().Done()
			return nil
		},
	}
	fake.Flags().StringVar(&script, "script", "", "script file (JSON)")
	fake.Flags().StringVar(&addr, "addr", "127.0.0.1:11434", "address to listen on (port 0 picks a free one)")
	fake.Flags().IntVar(&window, "context-length", 0, "window for requests without num_ctx, as OLLAMA_CONTEXT_LENGTH (default: the script's, else 4096)")
	fake.Flags().BoolVar(&quiet, "quiet", false, "do not log requests on stderr")
	dev.AddCommand(fake)
	return dev
}
