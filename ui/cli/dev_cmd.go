package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// devCommand holds commands for demonstrating and testing jarvis without a
// model. It is hidden from help: people chatting never need it.
func (a *app) devCommand() *cobra.Command {
	dev := &cobra.Command{Use: "dev", Short: "Tools for demos and tests", Hidden: true, Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	var script, addr string
	fake := &cobra.Command{
		Use:   "fake-ollama --script FILE [--addr HOST:PORT]",
		Short: "Serve a scripted stand-in for Ollama (engine/ollama/ollamatest's JSON scripts)",
		Example: `  jarvis dev fake-ollama --script engine/ollama/ollamatest/testdata/demo.json --addr 127.0.0.1:11500 &
  jarvis --host http://127.0.0.1:11500 ask --tools calculator "What is 15% of 340?"`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if script == "" {
				return usageErr("--script FILE is required")
			}
			sc, err := ollamatest.LoadScript(script)
			if err != nil {
				return usageErr("%v", err)
			}
			err = ollamatest.ListenAndServe(cmd.Context(), addr, sc, func(url string) { fmt.Fprintln(a.io.Out, url) })
			if err != nil && cmd.Context().Err() == nil {
				return failErr("%v", err)
			}
			return nil
		},
	}
	fake.Flags().StringVar(&script, "script", "", "script file (JSON)")
	fake.Flags().StringVar(&addr, "addr", "127.0.0.1:11434", "address to listen on (port 0 picks a free one)")
	dev.AddCommand(fake)
	return dev
}
