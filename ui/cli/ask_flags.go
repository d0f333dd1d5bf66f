package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/tools"
)

// runFlags are what a script sets for one ask, over the configuration:
// the generation options, the turn limit, and the tools approved for the
// run.
type runFlags struct {
	temperature float64
	seed        int
	think       string
	maxTurns    int
	approve     string
}

func (f *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().Float64Var(&f.temperature, "temperature", 0, "sampling temperature for this run (default: options.temperature, else the model's)")
	cmd.Flags().IntVar(&f.seed, "seed", 0, "random seed for this run, for answers that repeat (default: options.seed, else random)")
	cmd.Flags().StringVar(&f.think, "think", "", "thinking for this run: true, false, or a level low, medium, high for models that take one (default: options.think)")
	cmd.Flags().IntVar(&f.maxTurns, "max-turns", 0, fmt.Sprintf("the most model turns the run may take (default: max_turns, else %d)", config.DefaultMaxTurns))
	cmd.Flags().StringVar(&f.approve, "approve", "", "comma-separated tools approved for this run without asking (not a call a directory grant covers: a file written, a read outside the working directory); --yes approves every tool")
}

// apply puts the flags that were given into cf.
func (f *runFlags) apply(cmd *cobra.Command, cf *config.Flags) error {
	if cmd.Flags().Changed("temperature") {
		t := f.temperature
		cf.Temperature = &t
	}
	if cmd.Flags().Changed("seed") {
		n := f.seed
		cf.Seed = &n
	}
	if cmd.Flags().Changed("think") {
		if strings.TrimSpace(f.think) == "" {
			return usageErr("--think needs a value: true, false, low, medium or high")
		}
		cf.Think = f.think
	}
	if cmd.Flags().Changed("max-turns") {
		if f.maxTurns < 1 {
			return usageErr("--max-turns must be at least 1, got %d", f.maxTurns)
		}
		cf.MaxTurns = f.maxTurns
	}
	return nil
}

// approved is the --approve list, checked against the tools that exist:
// a misspelt name would otherwise approve nothing without a word.
func (f *runFlags) approved(env *environment) ([]string, error) {
	names := tools.ParseList(f.approve)
	for _, n := range names {
		if tools.IsPattern(n) {
			return nil, usageErr("--approve names each tool in full (it approves exactly those): %q is a pattern", n)
		}
		if !env.registry.Has(n) {
			return nil, usageErr("--approve: %v", &tools.UnknownToolError{Name: n, Known: env.registry.Names()})
		}
	}
	return names, nil
}

// runNotes says what the flags and the configuration ask for that the run
// will not do: tools given to the simple agent, which offers none, and
// approvals for tools the run does not offer.
func runNotes(cfg *config.Config, approved []string) []string {
	var notes []string
	if cfg.Agent == agent.Simple && len(cfg.Tools) > 0 && cfg.Source("tools") == "flag --tools" {
		notes = append(notes, fmt.Sprintf("the simple agent offers the model no tools, so --tools %s %s not used; use --agent orchestrator, or react for a model without native tool calls",
			strings.Join(cfg.Tools, ","), isAre(len(cfg.Tools))))
	}
	var absent []string
	for _, n := range approved {
		if !slices.Contains(cfg.Tools, n) || cfg.Agent == agent.Simple {
			absent = append(absent, n)
		}
	}
	if len(absent) > 0 {
		notes = append(notes, fmt.Sprintf("--approve names %s, which this run does not offer the model (--tools)", strings.Join(absent, ", ")))
	}
	return notes
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
