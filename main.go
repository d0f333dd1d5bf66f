// Command jarvis is a terminal workbench for local models and their tools.
package main

import (
	"os"

	"github.com/jarvis-workbench/jarvis/ui/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
