package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) approvalsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and revoke the always-grants",
		Long: `A call that needs confirmation runs without asking when an always-grant
covers it: choose "always allow" (A) in the workbench's approval dialog, or
answer "always" at a terminal prompt. A grant covers what the question
named and nothing more: a file tool, the directory of the file asked
about (its files, not its subdirectories); http_request, one host;
channel_send, one channel; the task tools, one task; an MCP tool
(SERVER__TOOL), that tool of that server; tools whose danger is their
whole argument (code_interpreter, repl, the config's commands), the whole
tool, only when chosen as such. Grants are kept in the database and hold
in every session and command until revoked here or in the workbench's
Tools tab (key A).

The config keeps the last word: [tool.NAME] confirm = true makes the tool
ask again even when a grant covers the call.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.approvalsListCommand(), a.approvalsRevokeCommand())
	return cmd
}

// approvalRow is a grant as `approvals list --json` prints it.
type approvalRow struct {
	approvals.Approval
	// Grant is what `approvals revoke` takes after the tool.
	Grant string `json:"grant"`
	// ForcedByConfig: the config's confirm = true makes the tool ask
	// anyway.
	ForcedByConfig bool `json:"forced_by_config"`
	// Honoured is false for a tool-wide grant made before grants had
	// scopes, of a tool whose grants now name a directory, a host, a
	// channel or a task: it covers nothing.
	Honoured bool `json:"honoured"`
}

func (a *cmdline) approvalStore() (*approvals.Store, error) {
	db, err := a.readDB("approvals")
	if err != nil {
		return nil, err
	}
	return approvals.New(db), nil
}

// grantKind says what a grant of the named tool covers; ScopeTool when
// the tool cannot be built here (an MCP server's tool: those are
// tool-wide).
func (a *cmdline) grantKind(name string) tools.ScopeKind {
	env, err := a.environment()
	if err != nil || !env.w.Registry.Has(name) {
		return tools.ScopeTool
	}
	list, err := env.w.BuildTools([]string{name})
	if err != nil || len(list) == 0 {
		return tools.ScopeTool
	}
	defer closeIfCloser(list[0])
	return tools.GrantKind(list[0])
}

func (a *cmdline) approvalsListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the always-grants, each with what it covers",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.approvalStore()
			if err != nil {
				return err
			}
			list, err := s.List()
			if err != nil {
				return failErr("%v", err)
			}
			forced := a.sharedPolicy().Overrides
			rows := make([]approvalRow, len(list))
			for i, ap := range list {
				g := ap.Grant()
				rows[i] = approvalRow{Approval: ap, Grant: g.Scope.Ref(), ForcedByConfig: forced[ap.Tool], Honoured: true}
				if g.Scope.Wide() {
					rows[i].Honoured = (tools.Scope{Kind: a.grantKind(ap.Tool)}).WideGrantable()
				}
			}
			if asJSON {
				return writeJSON(a.io.Out, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(a.io.Out, "Nothing is always allowed.")
				return nil
			}
			w := table.New(a.io.Out)
			fmt.Fprintln(w, "TOOL\tGRANT\tCOVERS\tAPPROVED\tFROM\tNOTE")
			for _, r := range rows {
				var notes []string
				if r.ForcedByConfig {
					notes = append(notes, "asks anyway: [tool."+r.Tool+"] confirm = true in the config")
				}
				if !r.Honoured {
					notes = append(notes, "covers nothing: "+r.Tool+" is granted per "+a.grantKind(r.Tool).Noun()+" now; revoke it")
				}
				covers := r.Words
				if covers == "" {
					covers = "any call"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", safe.Text(r.Tool), safe.Text(r.Grant), safe.Text(covers),
					r.At.Local().Format(timeLayout), orDash(r.Source), strings.Join(notes, "; "))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the grants as a JSON array")
	return cmd
}

func (a *cmdline) approvalsRevokeCommand() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "revoke TOOL [GRANT]",
		Short: "Take an always-grant off, so the calls it covered ask again",
		Long: `revoke takes off one always-grant of TOOL: GRANT is the grant as
'jarvis approvals list' shows it (dir:/path, host:NAME, channel:NAME,
task:ID, any). Without GRANT, the tool's only grant goes; with --all, every
grant of the tool.`,
		Example: "  jarvis approvals revoke http_request host:api.github.com\n  jarvis approvals revoke file_read dir:/etc\n  jarvis approvals revoke github__create_issue\n  jarvis approvals revoke file_read --all",
		Args:    argsUsage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := strings.TrimSpace(args[0])
			ref := ""
			if len(args) == 2 {
				ref = args[1]
			}
			if all && ref != "" {
				return usageErr("give either a GRANT or --all, not both")
			}
			s, err := a.approvalStore()
			if err != nil {
				return err
			}
			if all {
				n, err := s.RevokeAll(name)
				if err != nil {
					return failErr("%v", err)
				}
				if n == 0 {
					return failErr("%s has no always-grant; 'jarvis approvals list' shows them", safe.Text(name))
				}
				if asJSON {
					return writeJSON(a.io.Out, map[string]any{"revoked": name, "count": n})
				}
				fmt.Fprintf(a.io.Out, "%s asks for confirmation again (%s revoked).\n", safe.Text(name), format.Count(n, "always-grant"))
				return nil
			}
			gone, err := s.Revoke(name, ref)
			var nae *approvals.NotApprovedError
			var amb *approvals.AmbiguousError
			switch {
			case errors.As(err, &nae):
				return failErr("%s; 'jarvis approvals list' shows them", safe.Text(nae.Error()))
			case errors.As(err, &amb):
				return failErr("%s (--all takes every one)", safe.Text(amb.Error()))
			case err != nil:
				return failErr("%v", err)
			}
			g := gone.Grant()
			if asJSON {
				return writeJSON(a.io.Out, map[string]any{"revoked": name, "grant": g.Scope.Ref()})
			}
			fmt.Fprintf(a.io.Out, "Revoked %s; those calls ask for confirmation again.\n", safe.Text(g.Describe()))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"revoked": TOOL, "grant": GRANT} as JSON`)
	cmd.Flags().BoolVar(&all, "all", false, "revoke every always-grant of the tool")
	return cmd
}
