// Command mytool is jarvis with one more tool, the tool spec's my_tool:
// every jarvis command and the workbench, with my_tool listed, described
// and callable beside the built-in tools.
//
//	go run ./sdk/examples/mytool ask --agent orchestrator --tools my_tool "Process this data"
package main

import (
	"context"
	"log"

	"github.com/jarvis-workbench/jarvis/sdk"
	"github.com/jarvis-workbench/jarvis/sdk/jarvis"
	"github.com/jarvis-workbench/jarvis/tools"
)

type myTool struct{}

func (myTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "my_tool",
		Description: "A custom tool that does something useful.",
		Parameters:  tools.Params(tools.StringParam("input", "The input to process.", true)),
		Category:    "custom",
	}
}

func (myTool) Execute(_ context.Context, args tools.Args) tools.Result {
	return tools.OK("Processed: " + args.String("input"))
}

func main() {
	if err := sdk.Register("my_tool", func(tools.Deps) (tools.Tool, error) { return myTool{}, nil }); err != nil {
		log.Fatal(err)
	}
	jarvis.Main()
}
