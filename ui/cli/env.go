package cli

import (
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// environment is what commands build on: the tool registry and the
// dependencies its factories receive.
type environment struct {
	registry *tools.Registry
	deps     tools.Deps
}

func (a *app) environment() (*environment, error) {
	return &environment{registry: builtin.Registry(), deps: tools.Deps{}}, nil
}
