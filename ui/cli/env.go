package cli

import (
	"github.com/jarvis-workbench/jarvis/store"
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
	bd := builtin.Deps{}
	return &environment{registry: builtin.Registry(bd), deps: bd.ToolDeps()}, nil
}

// openDB opens the database named by --db (or the default), telling other
// processes that wait for it what this one is doing.
func (a *app) openDB(what string) (*store.DB, error) {
	db, err := store.Open(a.g.dbPath, what)
	if err != nil {
		return nil, failErr("%v", err)
	}
	return db, nil
}
