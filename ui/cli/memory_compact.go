package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/ui/format"
)

func (a *cmdline) memCompactCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "Give back the disk space that forgotten or re-indexed memory left in the database",
		Long: `The database file never shrinks by itself: after a large forget or a re-index
it keeps the pages it no longer uses (they are reused by later writes). compact
rewrites the file without them.

It holds the database for as long as the copy takes (seconds for a large
one): other jarvis processes wait meanwhile, and say so.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := a.openDB("memory compact")
			if err != nil {
				return err
			}
			res, err := db.Compact()
			if err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintf(a.io.Out, "Compacted %s: %s → %s (%s given back) in %s.\n", db.Path(),
				format.Bytes(res.Before), format.Bytes(res.After), format.Bytes(max(res.Before-res.After, 0)), format.Latency(res.Took.Seconds()))
			return nil
		},
	}
}
