package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/tools"
)

func (a *cmdline) toolsCommand() *cobra.Command {
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
func (a *cmdline) selectTools(ctx context.Context, names []string) ([]tools.Tool, error) {
	env, err := a.environment()
	if err != nil {
		return nil, err
	}
	list := tools.ParseList(strings.Join(names, ","))
	if needsMCP(env.cfg.MCP, list) {
		if _, err := a.startMCPFor(ctx, env, app.MCPServersFor(list), true, a.io.Err); err != nil {
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

func (a *cmdline) toolsListCommand() *cobra.Command {
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
			w := table.New(a.io.Out)
			fmt.Fprintln(w, "NAME\tCATEGORY\tCONFIRM\tCOST\tLATENCY\tTIMEOUT\tDESCRIPTION")
			for i, s := range specs {
				confirm := "no"
				switch {
				case s.RequiresConfirmation:
					confirm = "yes"
				case tools.DecidesPerCall(list[i]):
					confirm = "per call"
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

func (a *cmdline) toolsDescribeCommand() *cobra.Command {
	var withCost, noCategory, withTokens, asJSON bool
	cmd := &cobra.Command{
		Use:   "describe [NAMES]",
		Short: "Print exactly what a model is told about its tools",
		Long: `Print the output of BuildToolDescriptions for the named tools (comma-separated
or as separate arguments; all tools when none are named). This is the text a
text-protocol agent puts in its system prompt.`,
		Example: "  jarvis tools describe calculator,think\n  jarvis tools describe --cost\n  jarvis tools describe --tokens --model qwen3:8b",
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := a.selectTools(cmd.Context(), args)
			if err != nil {
				return err
			}
			if withTokens {
				costs, err := a.countToolTokens(cmd.Context(), list)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(a.io.Out, costs)
				}
				printToolCosts(a.io.Out, costs)
				return nil
			}
			fmt.Fprintln(a.io.Out, tools.BuildToolDescriptions(list, !noCategory, withCost))
			return nil
		},
	}
	cmd.Flags().BoolVar(&withCost, "cost", false, "include cost and latency estimate lines")
	cmd.Flags().BoolVar(&noCategory, "no-category", false, "leave out the Category: lines")
	cmd.Flags().BoolVar(&withTokens, "tokens", false, "print what each tool costs in the prompt of the model (--model), as a schema and as text")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --tokens: print the costs as JSON")
	return cmd
}

func (a *cmdline) toolsOpenAICommand() *cobra.Command {
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

func (a *cmdline) toolsRunCommand() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "run NAME [JSON-ARGS | - | @FILE]",
		Short: "Run one tool call through the executor",
		Long: `Run one call exactly as an agent would: arguments are checked against the
tool's schema, tools that need confirmation ask on the terminal ([y/N]), and
the call's events are printed on stderr. The result's content goes to stdout;
a failed call's message goes to stderr.

The arguments are a JSON object: given as is, read from stdin with -, or read
from a file with @FILE (~ is expanded), for arguments too large for the
command line (up to 4 MiB).

Exit status: 0 when the tool succeeded, 1 when it failed (or was denied),
2 when the command was used wrongly (an unknown tool among them). A tool that needs confirmation is denied
when stdin is not a terminal, unless --yes is given.`,
		Example: `  jarvis tools run calculator '{"expression":"sqrt(144) + 3**2"}'
  jarvis tools run think '{"thought":"Let me break this problem into steps..."}'
  jarvis tools run file_read '{"path":"README.md","max_lines":5}' --json
  jq -n --rawfile c notes.md '{content: $c, source: "notes"}' | jarvis tools run memory_store -
  jarvis tools run memory_store @~/call.json`,
		Args: argsUsage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			call := tools.Call{ID: "cli_1", Name: args[0]}
			if len(args) == 2 {
				var err error
				if call.Arguments, err = a.toolArguments(args[1]); err != nil {
					return err
				}
			}
			env, err := a.environment()
			if err != nil {
				return err
			}
			if needsMCP(env.cfg.MCP, []string{call.Name}) {
				if _, err := a.startMCPFor(cmd.Context(), env, app.MCPServersFor([]string{call.Name}), true, a.io.Err); err != nil {
					return err
				}
			}
			// An unknown name is a wrong use of the command, as for
			// tools describe: nothing runs.
			if !env.registry.Has(call.Name) {
				return usageErr("%v", &tools.UnknownToolError{Name: call.Name, Known: env.registry.Names()})
			}
			t, err := env.registry.Build(call.Name, env.deps)
			if err != nil {
				return failErr("%v", err)
			}
			list := []tools.Tool{t}
			defer func() {
				for _, t := range list {
					closeIfCloser(t)
				}
			}()
			policy, canAsk := a.commandPolicy(tools.SourceToolsRun, yes)
			printer := newEventPrinter(a.io.Err, isTerminal(a.io.Err))
			// The failure is printed once, whole, below.
			printer.quietFailures = true
			exec, err := app.NewExecutor(list, policy, printer)
			if err != nil {
				return failErr("%v", err)
			}
			r := exec.Execute(cmd.Context(), call)
			switch {
			case asJSON:
				if err := writeJSON(a.io.Out, r); err != nil {
					return failErr("writing the result: %v", err)
				}
			case r.Success:
				fmt.Fprintln(a.io.Out, r.Content)
			}
			if !r.Success {
				printer.println(printer.failure(r))
			}
			if r.Status == tools.StatusDenied && !canAsk && strings.Contains(r.Content, "no confirmation callback") {
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

// maxToolArgs bounds the arguments read from stdin or a file: far more
// than any model writes in one call, small enough to refuse a wrong file.
const maxToolArgs = 4 << 20

// toolArguments returns a call's JSON arguments: arg itself, or what stdin
// (-) or a file (@FILE) holds.
func (a *cmdline) toolArguments(arg string) (string, error) {
	var r io.Reader
	var from string
	switch {
	case arg == "-":
		if a.io.In == nil || isTerminalReader(a.io.In) {
			return "", usageErr("'-' reads the arguments from stdin, but stdin is a terminal; pipe the JSON in, or give it as an argument or with @FILE")
		}
		r, from = a.io.In, "stdin"
	case strings.HasPrefix(arg, "@"):
		path := expandHome(arg[1:])
		if path == "" {
			return "", usageErr("@ needs a file name: @FILE reads the arguments from FILE")
		}
		f, err := os.Open(path)
		if err != nil {
			return "", usageErr("reading the arguments: %v", err)
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.IsDir() {
			return "", usageErr("reading the arguments: %s is a directory; @FILE takes a file holding a JSON object", path)
		}
		r, from = f, path
	default:
		return arg, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxToolArgs+1))
	if err != nil {
		return "", failErr("reading the arguments from %s: %v", from, err)
	}
	if len(b) > maxToolArgs {
		return "", usageErr("the arguments in %s are larger than %d MiB; a tool call's arguments must be smaller (give a large text to a tool as a file path where it takes one)", from, maxToolArgs>>20)
	}
	return string(b), nil
}

// expandHome turns a leading ~ into the home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// writeJSON prints v as indented JSON. encoding/json escapes the C0
// controls (ESC becomes \u001b) but leaves DEL and the C1 controls (U+0080
// to U+009F, which a terminal can read as CSI and OSC) as they are; those
// are escaped too, so the JSON stays the same data and no terminal it
// reaches acts on it.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeControls(b.Bytes()))
	return err
}

// escapeControls rewrites DEL and the C1 controls in encoded JSON as \u
// escapes. They can only occur inside strings, where an escape means the
// same character.
func escapeControls(js []byte) []byte {
	if !bytes.ContainsRune(js, 0x7f) && !bytes.Contains(js, []byte{0xc2}) {
		return js
	}
	out := make([]byte, 0, len(js)+16)
	for i := 0; i < len(js); i++ {
		switch c := js[i]; {
		case c == 0x7f:
			out = append(out, `\u007f`...)
		case c == 0xc2 && i+1 < len(js) && js[i+1] >= 0x80 && js[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, js[i+1])
			i++
		default:
			out = append(out, c)
		}
	}
	return out
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
