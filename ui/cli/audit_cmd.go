package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/store/audit"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) auditCommand() *cobra.Command {
	var tool, since string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "List the confirmation decisions: who allowed or denied which tool call",
		Long: `Every decision about a tool call that needs confirmation is kept in the
database: when, the tool (an MCP tool reached through mcp_adapter is listed
by its own name, SERVER__TOOL, with the adapter in VIA), the arguments (as
they ran, and as first asked when a person edited them), the decision
(allowed, denied, edited), who or what decided (person, session approval,
always-approval, --yes, task approve list, no terminal, nobody to ask,
config, tools tab), where (tui, ask, tools run, scheduler, eval), the
session or task, and the reason.

Calls of tools that never ask are not recorded, except those the config
let run unasked ([tool.NAME] confirm = false), recorded as allowed by
config. Tokens, keys and passwords in the arguments (by their names, in
URLs, after "Bearer") are redacted before they are written.`,
		Example: "  jarvis audit --since 24h\n  jarvis audit --tool http_request --since 7d --json",
		Args:    argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := audit.Filter{Tool: strings.TrimSpace(tool), Limit: limit}
			if limit < 0 {
				return usageErr("--limit must be 0 (all) or more, not %d", limit)
			}
			if since != "" {
				d, err := parseAge(since)
				if err != nil {
					return usageErr("--since %q: %v", since, err)
				}
				f.Since = time.Now().Add(-d)
			}
			db, err := a.readDB("audit")
			if err != nil {
				return err
			}
			entries, err := audit.New(db).List(cmd.Context(), f)
			if err != nil {
				return failErr("%v", err)
			}
			if asJSON {
				if entries == nil {
					entries = []audit.Entry{}
				}
				return writeJSON(a.io.Out, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(a.io.Out, "No decisions recorded"+describeFilter(f)+".")
				return nil
			}
			w := table.New(a.io.Out)
			fmt.Fprintln(w, "TIME\tTOOL\tDECISION\tBY\tSOURCE\tARGUMENTS\tREASON")
			for _, e := range entries {
				name := e.Tool
				if e.Via != "" {
					name += " (via " + e.Via + ")"
				}
				args := format.Args(e.Args, 60)
				if e.AskedArgs != nil {
					args += " (asked " + format.Args(e.AskedArgs, 40) + ")"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(timeLayout), safe.Text(name), e.Decision,
					e.By, e.Source, safe.Text(format.OneLine(args, 100)), safe.Text(format.OneLine(e.Reason, 80)))
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", "", "only this tool's decisions (a SERVER__TOOL name, or mcp_adapter for every call made through it)")
	f.StringVar(&since, "since", "", "only decisions this recent: a duration such as 90m, 24h or 7d")
	f.IntVar(&limit, "limit", 0, "only the newest N decisions (0: all)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array of {time, tool, via, args, asked_args, decision, by, source, session, task, reason}")
	return cmd
}

// parseAge reads a duration as Go writes them (90m, 1h30m) or in days
// (7d, 1d12h).
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("write it as a number of days (7d), or a duration such as 24h or 90m")
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("write it as a duration such as 90m, 24h or 7d")
	}
	return days + d, nil
}

func describeFilter(f audit.Filter) string {
	var parts []string
	if f.Tool != "" {
		parts = append(parts, " for "+safe.Text(f.Tool))
	}
	if !f.Since.IsZero() {
		parts = append(parts, " since "+f.Since.Local().Format(timeLayout))
	}
	return strings.Join(parts, "")
}
