package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) mcpCommand() *cobra.Command {
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
// for them and returns their status. On a terminal it says on stderr what
// it is waiting for while it waits.
func (a *cmdline) mcpInspect(cmd *cobra.Command, only []string, wait time.Duration) ([]mcp.ServerStatus, error) {
	cfg, err := a.mcpConfig()
	if err != nil {
		return nil, err
	}
	if len(only) > 0 {
		if _, err := cfg.Server(only[0]); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	if wait < 0 {
		return nil, usageErr("--wait must be a positive duration such as 10s or 2m, got %s", wait)
	}
	var progress func([]mcp.ServerStatus, bool)
	if isTerminal(a.io.Err) {
		progress = newMCPProgress(a.io.Err).update
	}
	list, err := mcp.Inspect(cmd.Context(), cfg, mcp.InspectOptions{
		Only:         only,
		StartTimeout: wait,
		Progress:     progress,
		Options:      mcp.Options{ClientVersion: versionString()},
	})
	if err != nil {
		return nil, failErr("%v", err)
	}
	return list, nil
}

const waitFlagHelp = "how long each server may take to start, answer the MCP handshake and list its tools (default: its start_timeout, else 30s)"

func (a *cmdline) mcpListCommand() *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start every enabled server and show its status and tool count",
		Long: `Start (or connect to) every enabled MCP server, wait until each is ready or
has failed, and print one line per server: transport, status, number of
tools, whether its tools ask for confirmation, and the last error.

Each server has its start_timeout (30s unless the config says otherwise;
--wait overrides it for all) to start, answer the MCP handshake and list its
tools. On a terminal, a status line says what is being waited for.

Exit status: 1 when any enabled server failed (stderr names them; the table
says why), 0 when all came up.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.mcpInspect(cmd, nil, wait)
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(a.io.Out, list)
			} else {
				err = mcp.RenderStatus(a.io.Out, list, time.Now())
			}
			if err != nil {
				return err
			}
			var failed []string
			for _, s := range list {
				if s.Failed() {
					failed = append(failed, s.Name)
				}
			}
			if len(failed) == 0 {
				return nil
			}
			where := "the LAST ERROR column says why"
			if asJSON {
				where = "their \"reason\" says why"
			}
			noun := "server"
			if len(failed) > 1 {
				noun = "servers"
			}
			fmt.Fprintf(a.io.Err, "jarvis: %d of %d MCP %s failed: %s (%s; jarvis mcp tools NAME shows one in full).\n",
				len(failed), len(list), noun, safe.Text(strings.Join(failed, ", ")), where)
			return silentFail
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status (with every tool's spec) as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 0, waitFlagHelp)
	return cmd
}

func (a *cmdline) mcpToolsCommand() *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "tools SERVER",
		Short: "Show one server's tools exactly as a model is told about them",
		Long: `Start one MCP server (even one disabled in the config) and print its tools as
jarvis names them (SERVER__TOOL) and describes them to a model.

Exit status: 1 when the server could not be started or listed.`,
		Example: "  jarvis mcp tools github\n  jarvis mcp tools files --json --wait 2m",
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
	cmd.Flags().DurationVar(&wait, "wait", 0, waitFlagHelp)
	return cmd
}

// mcpProgress is the status line `jarvis mcp list` and `jarvis mcp tools`
// keep on a terminal while servers start: which ones it waits for, what
// each is doing and for how long, then that it stops them.
type mcpProgress struct {
	w     io.Writer
	width func() int
	drawn bool
}

func newMCPProgress(w io.Writer) *mcpProgress {
	p := &mcpProgress{w: w, width: func() int { return 0 }}
	if f, ok := w.(*os.File); ok {
		p.width = func() int {
			width, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return 0
			}
			return width
		}
	}
	return p
}

// update draws the line for servers still starting, or says that they are
// being stopped, or clears the line when both are empty.
func (p *mcpProgress) update(starting []mcp.ServerStatus, stopping bool) {
	var line string
	switch {
	case stopping:
		line = "Stopping the MCP servers…"
	case len(starting) == 1:
		s := starting[0]
		line = fmt.Sprintf("Waiting for MCP server %s (%s): %s", s.Name, s.Target, s.Waiting(time.Now()))
	case len(starting) > 1:
		parts := make([]string, len(starting))
		for i, s := range starting {
			parts[i] = fmt.Sprintf("%s (%s)", s.Name, s.Waiting(time.Now()))
		}
		line = fmt.Sprintf("Waiting for %d MCP servers: %s", len(starting), strings.Join(parts, "; "))
	}
	if line == "" {
		if p.drawn {
			fmt.Fprint(p.w, "\r\x1b[K")
			p.drawn = false
		}
		return
	}
	line = safe.Text(strings.Join(strings.Fields(line), " "))
	if width := p.width(); width > 1 {
		line = ansi.Truncate(line, width-1, "…") // a line that wraps cannot be redrawn
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.drawn = true
}
