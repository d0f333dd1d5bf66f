package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

func (a *app) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Check the configured MCP servers and the tools they offer",
		Long: `MCP servers ([[mcp.servers]] in the config file) bring their own tools. Each
tool becomes a jarvis tool named SERVER__TOOL. These commands start the
servers, report what they offer, and stop them again.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.mcpListCommand(), a.mcpToolsCommand())
	return cmd
}

// mcpInspect starts the servers (only the named ones, when given), waits
// for them and returns their status.
func (a *app) mcpInspect(cmd *cobra.Command, only []string, wait time.Duration) ([]mcp.ServerStatus, error) {
	cfg, err := a.mcpConfig()
	if err != nil {
		return nil, err
	}
	if len(only) > 0 {
		if _, err := cfg.Server(only[0]); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	list, err := mcp.Inspect(cmd.Context(), cfg, mcp.InspectOptions{
		Only:    only,
		Wait:    wait,
		Options: mcp.Options{ClientVersion: versionString()},
	})
	if err != nil {
		return nil, failErr("%v", err)
	}
	return list, nil
}

func (a *app) mcpListCommand() *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start every enabled server and show its status and tool count",
		Long: `Start (or connect to) every enabled MCP server, wait until each is ready or
has failed, and print one line per server: transport, status, number of
tools, whether its tools ask for confirmation, and the last error.

The exit status is 0 even when a server failed: the table says which.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.mcpInspect(cmd, nil, wait)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.io.Out, list)
			}
			return mcp.RenderStatus(a.io.Out, list, time.Now())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status (with every tool's spec) as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long servers may take to start")
	return cmd
}

func (a *app) mcpToolsCommand() *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "tools SERVER",
		Short: "Show one server's tools exactly as a model is told about them",
		Long: `Start one MCP server (even one disabled in the config) and print its tools as
jarvis names them (SERVER__TOOL) and describes them to a model.

Exit status: 1 when the server could not be started or listed.`,
		Example: "  jarvis mcp tools github\n  jarvis mcp tools files --json",
		Args:    argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := a.mcpInspect(cmd, args, wait)
			if err != nil {
				return err
			}
			st := list[0]
			if asJSON {
				if err := writeJSON(a.io.Out, st); err != nil {
					return err
				}
			} else if err := mcp.RenderTools(a.io.Out, st, time.Now()); err != nil {
				return err
			}
			if !st.Available() {
				return silentFail
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's status and tool specs as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long the server may take to start")
	return cmd
}
