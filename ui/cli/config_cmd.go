package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

func configPathDefault() string { return config.DefaultPath() }

// globalConfigFlags are the flags every command takes that the
// configuration reads.
func (a *cmdline) globalConfigFlags() config.Flags {
	return config.Flags{ConfigPath: a.g.configPath, Host: a.g.host, Model: a.g.model, DB: a.g.dbPath, Engine: a.g.engine,
		ThemeNames: themes.Names()}
}

// configFree are the commands that run whatever the configuration holds:
// they read none of it, or they report its problems themselves.
var configFree = map[string]bool{
	"version": true, "config": true, "doctor": true, "dev": true, "help": true, "completion": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true,
}

// refuseBadConfig stops every other command, before it does anything,
// when the configuration has problems: with all of them, each with its
// file and line, and exit 2. A command that reads the configuration with
// its own flags (ask --tools, the workbench's --theme) checks those again
// when it loads it.
func (a *cmdline) refuseBadConfig(cmd *cobra.Command) error {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if top.HasParent() && configFree[top.Name()] {
		return nil
	}
	if _, problems := config.Read(a.globalConfigFlags()); len(problems) > 0 {
		return usageErr("%v", problems)
	}
	return nil
}

func (a *cmdline) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and what is wrong with it",
		Args:  argsUsage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Print every setting, its value and where it came from, then any problems",
		Long: `Print the effective configuration: every setting of every section, its value
and where it came from: the default, the config file and line
($XDG_CONFIG_HOME/jarvis/config.toml or --config), an environment variable
(JARVIS_MODEL, JARVIS_ENGINE, OLLAMA_HOST, JARVIS_AGENT, JARVIS_TOOLS,
JARVIS_THEME, JARVIS_DB, OPENAI_API_KEY, SEARXNG_URL, BRAVE_API_KEY,
TAVILY_API_KEY) or a flag, each overriding the one before. Secrets (API keys,
channel tokens and webhook URLs, MCP env and header values, credentials in
URLs) are never printed: only whether they are set and where from.

Then every problem the configuration has, with its file, line and key and
what to do. Every other command refuses to run while there are any, so the
exit status is 2 when there are problems, as for any other wrong use.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, problems := config.Read(a.globalConfigFlags())
			settings := cfg.Settings()
			if asJSON {
				if problems == nil {
					problems = config.Problems{}
				}
				if err := writeJSON(a.io.Out, map[string]any{"file": cfg.Path(), "settings": settings, "problems": problems}); err != nil {
					return err
				}
				if len(problems) > 0 {
					return usageErr("the configuration has %s (under \"problems\" in the output); commands refuse to run until they are fixed", format.Count(len(problems), "problem"))
				}
				return nil
			}
			file := cfg.Path()
			if file == "" {
				file = "(none; would read " + config.DefaultPath() + ")"
			}
			fmt.Fprintf(a.io.Out, "config file: %s\n\n", file)
			w := table.New(a.io.Out)
			fmt.Fprintln(w, "KEY\tVALUE\tSOURCE")
			for _, s := range settings {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Key, oneLine(s.Value), s.Source)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if len(problems) == 0 {
				return nil
			}
			fmt.Fprintf(a.io.Out, "\n%s:\n", format.Count(len(problems), "problem"))
			for _, p := range problems {
				fmt.Fprintf(a.io.Out, "  %s\n", p.Error())
			}
			return usageErr("the configuration has %s (listed above); commands refuse to run until they are fixed", format.Count(len(problems), "problem"))
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print as JSON: file, settings and problems")
	cmd.AddCommand(show)
	return cmd
}

// oneLine keeps a value with line breaks (a system prompt, a template) on
// its row of the table.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`).Replace(s)
}
