// Package builtin assembles the registry of jarvis's built-in tools. It is
// the one place that lists them, so `--tools a,b` means the same thing in
// every command.
package builtin

import (
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/compute"
	"github.com/jarvis-workbench/jarvis/tools/files"
)

// Registry returns a registry holding every built-in tool.
func Registry() *tools.Registry {
	r := tools.NewRegistry()
	must(r.Register("calculator", compute.NewCalculator))
	must(r.Register("think", compute.NewThink))
	must(r.Register("file_read", func(d tools.Deps) (tools.Tool, error) { return files.NewFileRead(d) }))
	return r
}

// must panics on a registration error, which can only be a duplicate name
// in the list above: a bug caught by the package's tests, never by a user.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
