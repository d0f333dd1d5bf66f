package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *app) approvalsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and revoke the tools that are always allowed",
		Long: `A tool that needs confirmation runs without asking when it is always
allowed: choose "always allow" (A) in the workbench's approval dialog, or
answer "always" at a terminal prompt. The approval is kept in the database
and holds in every session and command until revoked here or in the
workbench's Tools tab (key A). An MCP tool's approval (SERVER__TOOL) covers
that tool of that server only.

The config keeps the last word: [tool.NAME] confirm = true makes the tool
ask again even when it is always allowed.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.approvalsListCommand(), a.approvalsRevokeCommand())
	return cmd
}

// approvalRow is an approval as `approvals list --json` prints it.
type approvalRow struct {
	approvals.Approval
	// ForcedByConfig: the config's confirm = true makes the tool ask
	// anyway.
	ForcedByConfig bool `json:"forced_by_config"`
}

func (a *app) approvalStore() (*approvals.Store, error) {
	db, err := a.openDB("approvals")
	if err != nil {
		return nil, err
	}
	return approvals.New(db), nil
}

func (a *app) approvalsListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the always-allowed tools",
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
				rows[i] = approvalRow{Approval: ap, ForcedByConfig: forced[ap.Name]}
			}
			if asJSON {
				return writeJSON(a.io.Out, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(a.io.Out, "No tool is always allowed.")
				return nil
			}
			w := tabwriter.NewWriter(a.io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TOOL\tAPPROVED\tFROM\tNOTE")
			for _, r := range rows {
				note := ""
				if r.ForcedByConfig {
					note = "asks anyway: [tool." + r.Name + "] confirm = true in the config"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", safe.Text(r.Name), r.At.Local().Format(timeLayout), orDash(r.Source), note)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approvals as a JSON array")
	return cmd
}

func (a *app) approvalsRevokeCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "revoke NAME",
		Short:   "Make an always-allowed tool ask again",
		Example: "  jarvis approvals revoke http_request\n  jarvis approvals revoke github__create_issue",
		Args:    argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := strings.TrimSpace(args[0])
			s, err := a.approvalStore()
			if err != nil {
				return err
			}
			var nae *approvals.NotApprovedError
			if err := s.Revoke(name); errors.As(err, &nae) {
				return failErr("%s; 'jarvis approvals list' shows them", safe.Text(nae.Error()))
			} else if err != nil {
				return failErr("%v", err)
			}
			if asJSON {
				return writeJSON(a.io.Out, map[string]any{"revoked": name})
			}
			fmt.Fprintf(a.io.Out, "%s asks for confirmation again.\n", safe.Text(name))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"revoked": NAME} as JSON`)
	return cmd
}
