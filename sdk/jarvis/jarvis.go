// Package jarvis is the whole jarvis (the workbench, ask, tools, the
// scheduler, memory, evals...) as a function: a program that registers tools
// with sdk.Register and then calls Main is jarvis with those tools.
//
// It lives apart from package sdk so that a program that imports sdk only
// to ask questions (sdk.New, Ask) links no terminal UI: Main is what brings
// in the workbench and the command line.
package jarvis

import (
	"os"

	"github.com/jarvis-workbench/jarvis/ui/cli"
)

// Main runs the jarvis command line with os.Args, the tools registered with
// sdk.Register among the built-in ones, and exits with its status.
func Main() {
	os.Exit(cli.Main(os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
