package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/ui/config"
)

func configPathDefault() string { return config.DefaultPath() }

func (a *app) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration",
		Args:  argsUsage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Print every setting, its value and where it came from",
		Long: `Print the effective configuration: defaults, then the config file
($XDG_CONFIG_HOME/jarvis/config.toml or --config), then environment variables
(JARVIS_MODEL, OLLAMA_HOST, JARVIS_AGENT, JARVIS_TOOLS, JARVIS_THEME, JARVIS_DB),
then flags, each overriding the one before.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(config.Flags{})
			if err != nil {
				return err
			}
			settings := cfg.Settings()
			if asJSON {
				return writeJSON(a.io.Out, map[string]any{"file": cfg.Path(), "settings": settings})
			}
			file := cfg.Path()
			if file == "" {
				file = "(none; would read " + config.DefaultPath() + ")"
			}
			fmt.Fprintf(a.io.Out, "config file: %s\n\n", file)
			w := tabwriter.NewWriter(a.io.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tVALUE\tSOURCE")
			for _, s := range settings {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Key, s.Value, s.Source)
			}
			return w.Flush()
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(show)
	return cmd
}
