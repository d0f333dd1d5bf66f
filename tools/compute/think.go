package compute

import (
	"context"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Think is the reasoning scratchpad: it echoes the thought back, so a model
// can think out loud inside a tool-calling loop at no cost.
type Think struct{}

// NewThink returns the think tool.
func NewThink(tools.Deps) (tools.Tool, error) { return Think{}, nil }

var thinkSpec = tools.Spec{
	Name:        "think",
	Description: "Reasoning scratchpad: write out a thought, a plan or intermediate steps; the thought is returned unchanged. Costs nothing and has no side effects.",
	Parameters:  tools.Params(tools.StringParam("thought", "The reasoning or thought process", true)),
	Category:    "reasoning",
}

// NonBlocking marks think as pure computation (it echoes).
func (Think) NonBlocking() {}

// Spec returns the think tool's spec.
func (Think) Spec() tools.Spec { return thinkSpec }

// Execute echoes the thought.
func (Think) Execute(_ context.Context, args tools.Args) tools.Result {
	return tools.OK(args.String("thought"))
}
