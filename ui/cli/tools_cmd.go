package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/tools"
)

func (a *app) toolsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List, describe and run tools",
		Long: `Inspect the tools a model can be given, see exactly how they are described
to it, and run one call by hand through the same executor the agents use.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.toolsListCommand(), a.toolsDescribeCommand(), a.toolsOpenAICommand(), a.toolsRunCommand())
	return cmd
}

// selectTools builds the named tools (all of them when names is empty).
// Names may be given as several arguments, comma-separated, or both.
func (a *app) selectTools(ctx context.Context, names []string) ([]tools.Tool, error) {
	env, err := a.environment()
	if err != nil {
		return nil, err
	}
	list := tools.ParseList(strings.Join(names, ","))
	if needsMCP(env.cfg.MCP, list) {
		if _, err := a.startMCP(ctx, env, true, a.io.Err); err != nil {
			return nil, err
		}
	}
	var built []tools.Tool
	if len(list) == 0 {
		built, err = env.registry.BuildAll(env.deps)
	} else {
		built, err = env.registry.BuildList(list, env.deps)
	}
	if err != nil {
		if _, unknown := err.(*tools.UnknownToolError); unknown {
			return nil, usageErr("%v", err)
		}
		return nil, failErr("%v", err)
	}
	return built, nil
}

func (a *app) toolsListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every tool with its category, confirmation rule, cost and latency",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.selectTools(cmd.Context(), nil)
			if err != nil {
				return err
			}
			specs := make([]tools.Spec, len(list))
			for i, t := range list {
				specs[i] = t.Spec()
			}
			if asJSON {
				return writeJSON(a.io.Out, specs)
			}
			w := tabwriter.NewWriter(a.io.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCATEGORY\tCONFIRM\tCOST\tLATENCY\tTIMEOUT\tDESCRIPTION")
			for _, s := range specs {
				confirm := "no"
				if s.RequiresConfirmation {
					confirm = "yes"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t$%.4f\t%.1fs\t%ss\t%s\n", s.Name, orDash(s.Category), confirm,
					s.CostEstimate, s.LatencyEstimate, trimFloat(s.Timeout()), firstSentence(s.Description, 60))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the specs as JSON")
	return cmd
}

func (a *app) toolsDescribeCommand() *cobra.Command {
	var withCost, noCategory bool
	cmd := &cobra.Command{
		Use:   "describe [NAMES]",
		Short: "Print exactly what a model is told about its tools",
		Long: `Print the output of BuildToolDescriptions for the named tools (comma-separated
or as separate arguments; all tools when none are named). This is the text a
text-protocol agent puts in its system prompt.`,
		Example: "  jarvis tools describe calculator,think\n  jarvis tools describe --cost",
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := a.selectTools(cmd.Context(), args)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.io.Out, tools.BuildToolDescriptions(list, !noCategory, withCost))
			return nil
		},
	}
	cmd.Flags().BoolVar(&withCost, "cost", false, "include cost and latency estimate lines")
	cmd.Flags().BoolVar(&noCategory, "no-category", false, "leave out the Category: lines")
	return cmd
}

func (a *app) toolsOpenAICommand() *cobra.Command {
	return &cobra.Command{
		Use:   "openai [NAMES]",
		Short: "Print the tool definitions in the OpenAI function-calling format",
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := a.selectTools(cmd.Context(), args)
			if err != nil {
				return err
			}
			specs := make([]tools.Spec, len(list))
			for i, t := range list {
				specs[i] = t.Spec()
			}
			return writeJSON(a.io.Out, tools.OpenAITools(specs))
		},
	}
}

func (a *app) toolsRunCommand() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "run NAME [JSON-ARGS]",
		Short: "Run one tool call through the executor",
		Long: `Run one call exactly as an agent would: arguments are checked against the
tool's schema, tools that need confirmation ask on the terminal ([y/N]), and
the call's events are printed on stderr. The result's content goes to stdout.

Exit status: 0 when the tool succeeded, 1 when it failed (or was denied),
2 when the command was used wrongly. A tool that needs confirmation is denied
when stdin is not a terminal, unless --yes is given.`,
		Example: `  jarvis tools run calculator '{"expression":"sqrt(144) + 3**2"}'
  jarvis tools run think '{"thought":"Let me break this problem into steps..."}'
  jarvis tools run file_read '{"path":"README.md","max_lines":5}' --json`,
		Args: argsUsage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			name := args[0]
			if needsMCP(env.cfg.MCP, []string{name}) {
				if _, err := a.startMCP(cmd.Context(), env, true, a.io.Err); err != nil {
					return err
				}
			}
			// An unknown name still goes through the executor, which
			// answers the way a model would be answered: with the list
			// of tools that do exist.
			var list []tools.Tool
			if env.registry.Has(name) {
				var t tools.Tool
				if t, err = env.registry.Build(name, env.deps); err == nil {
					list = append(list, t)
				}
			} else {
				list, err = env.registry.BuildAll(env.deps)
			}
			if err != nil {
				return failErr("%v", err)
			}
			confirmer := a.terminalConfirmer(yes)
			exec, err := tools.NewExecutor(list, tools.ExecutorOptions{
				Bus:       newEventPrinter(a.io.Err, isTerminal(a.io.Err)),
				Confirmer: confirmer,
			})
			if err != nil {
				return failErr("%v", err)
			}
			call := tools.Call{ID: "cli_1", Name: name}
			if len(args) == 2 {
				call.Arguments = args[1]
			}
			r := exec.Execute(cmd.Context(), call)
			if asJSON {
				if err := writeJSON(a.io.Out, r); err != nil {
					return err
				}
			} else if r.Success {
				fmt.Fprintln(a.io.Out, r.Content)
			} else {
				fmt.Fprintln(a.io.Err, r.Content)
			}
			if r.Status == tools.StatusDenied && confirmer == nil {
				fmt.Fprintln(a.io.Err, "hint: this tool needs approval but stdin is not a terminal, so jarvis could not ask; rerun with --yes to approve it")
			}
			if !r.Success {
				return silentFail
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve a call that needs confirmation without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole result as JSON")
	return cmd
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

// firstSentence shortens a description for a table cell.
func firstSentence(s string, max int) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
