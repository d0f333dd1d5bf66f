package cli

import (
	"fmt"

	"github.com/jarvis-workbench/jarvis/engine"
)

// cliControls name the command line's controls in the advice the layers
// below give (see engine.Say): flags and commands.
var cliControls = engine.Controls{
	Agent:  func(name string) string { return "the " + name + " agent (--agent " + name + ")" },
	Model:  func() string { return "--model" },
	Models: func() string { return "'jarvis models'" },
	Window: func(n int) string {
		if n > 0 {
			return fmt.Sprintf("--num-ctx %d, or num_ctx in the config", n)
		}
		return "--num-ctx N, or num_ctx in the config"
	},
	Tools:   func() string { return "--tools" },
	Host:    func() string { return "--host" },
	Pull:    func(model string) string { return "jarvis models pull " + model },
	Compact: func() string { return "/compact in the workbench (jarvis --continue)" },
	New:     func() string { return "without --continue or --session" },
	Think:   func() string { return "--think false, or think = \"false\" in the config" },
	Turns:   func() string { return "--max-turns N, or max_turns in the config" },
}

// explain is err's message with its advice in the command line's words.
func explain(err error) string { return engine.Explain(err, cliControls) }

// say renders advice in the command line's words.
func say(s string) string { return engine.Say(s, cliControls) }
