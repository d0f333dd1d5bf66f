package tui

import (
	"fmt"

	"github.com/jarvis-workbench/jarvis/engine"
)

// tuiControls name the workbench's controls in the advice the layers
// below give (see engine.Say): slash commands and keys.
var tuiControls = engine.Controls{
	Agent:  func(name string) string { return "the " + name + " agent (/agent " + name + ")" },
	Model:  func() string { return "/model" },
	Models: func() string { return "/model" },
	Window: func(n int) string {
		if n > 0 {
			return fmt.Sprintf("/ctx %d", n)
		}
		return "/ctx N"
	},
	Tools:   func() string { return "/tools, or the Tools tab" },
	Host:    func() string { return "--host when you start jarvis" },
	Pull:    func(model string) string { return "/pull " + model },
	Compact: func() string { return "/compact" },
	New:     func() string { return "/new" },
	Think:   func() string { return "think = \"false\" in the config" },
}

// explain is err's message with its advice in the workbench's words.
func explain(err error) string { return engine.Explain(err, tuiControls) }

// say renders advice in the workbench's words.
func say(s string) string { return engine.Say(s, tuiControls) }
