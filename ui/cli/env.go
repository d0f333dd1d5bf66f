package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// environment is what commands build on: the application layer's (the
// configuration, the servers, the tool registry and its dependencies), with
// the servers as the commands' messages name them. It is built once per
// process.
type environment struct {
	w   *app.Env
	cfg *config.Config
	// def is the default server and named the endpoints; at is the one
	// the configured model is on, engine its engine and model the
	// model's name there ("qwen3-32b" for --model lab/qwen3-32b).
	def, at  *app.Server
	named    []*app.Server
	engine   engine.InferenceEngine
	model    string
	registry *tools.Registry
	deps     tools.Deps
	// sched is what the scheduler tools call; the TUI points it at the
	// scheduler it runs.
	sched *app.LazyScheduler
	// memory is the memory store; it touches the database on first use.
	memory *memory.Store
}

// loadConfig reads the configuration with the global flags and the
// command's own (agent, tools, system, theme). Commands that take none call
// environment directly.
func (a *cmdline) loadConfig(f config.Flags) (*config.Config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	f.ConfigPath, f.Host, f.Model, f.DB, f.Engine = a.g.configPath, a.g.host, a.g.model, a.g.dbPath, a.g.engine
	f.ThemeNames = themes.Names()
	cfg, err := app.LoadConfig(f)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	a.cfg = cfg
	return cfg, nil
}

func (a *cmdline) environment() (*environment, error) {
	if a.env != nil {
		return a.env, nil
	}
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return nil, err
	}
	db, err := a.database()
	if err != nil {
		return nil, err
	}
	w, err := app.New(cfg, db, app.Options{Command: "ask"})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	env := &environment{w: w, cfg: cfg, engine: w.Engine, model: w.Model, registry: w.Registry, deps: w.Deps, sched: w.Scheduler, memory: w.Memory}
	env.def, env.named, env.at = w.Default, w.Named, w.At
	a.env = env
	return a.env, nil
}

// priceAt adapts the configured prices of a server's models (endpoint ""
// for the default server) to the agents' and tools' signature.
func priceAt(cfg *config.Config, endpoint string) func(model string, in, out int) float64 {
	return app.Price(cfg, endpoint)
}

// resolveModel returns the configured model, or asks the server for one when
// none is configured: the first model that can call tools, else the first.
func (env *environment) resolveModel(ctx context.Context) (string, string, error) {
	return env.w.ResolveModel(ctx)
}

// pickModel asks a server of kind which model to use when none is set:
// the first that can call tools, else the first that can chat.
func pickModel(ctx context.Context, eng engine.InferenceEngine, kind string) (string, error) {
	return app.PickModel(ctx, eng, kind)
}

// closeIfCloser releases what a tool holds (see app.CloseTool).
func closeIfCloser(t tools.Tool) { app.CloseTool(t) }

// buildTools builds the named tools; an unknown name is a usage error.
func (env *environment) buildTools(names []string) ([]tools.Tool, error) {
	list, err := env.w.BuildTools(names)
	if err != nil {
		if _, unknown := err.(*tools.UnknownToolError); unknown {
			return nil, usageErr("%v", err)
		}
		return nil, failErr("%v", err)
	}
	return list, nil
}

// database returns the process's handle on the database named by --db,
// JARVIS_DB or the config (or the default path), without touching the file.
// The handle is shared: two handles on one file in one process would queue
// behind each other's file lock.
func (a *cmdline) database() (*store.DB, error) {
	if a.db != nil {
		return a.db, nil
	}
	path := a.g.dbPath
	if path == "" {
		if cfg, err := a.loadConfig(config.Flags{}); err == nil {
			path = cfg.DB
		}
	}
	db, err := app.OpenDB(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	a.db = db
	if named := a.dbNamed(); named != "" && !exists(db.Path()) {
		// A file named by hand that this command creates is said, so a
		// mistyped path is not taken for a new, empty database unseen.
		errw := a.io.Err
		a.closers = append(a.closers, func() {
			if exists(db.Path()) {
				fmt.Fprintf(errw, "jarvis: created the database %s (%s)\n", safe.Text(db.Path()), named)
			}
		})
	}
	// A command that waits for another process says so instead of
	// seeming to hang (the TUI replaces this with a status line).
	errw := a.io.Err
	db.OnWait(func(pid int, what string) {
		who := "another jarvis process"
		if pid > 0 {
			who = fmt.Sprintf("pid %d", pid)
			if what != "" {
				who += ", " + what
			}
		}
		fmt.Fprintf(errw, "jarvis: waiting for the database (held by %s)…\n", safe.Text(who))
	})
	// Released when the command ends, not after the idle delay.
	a.closers = append(a.closers, func() {
		// Writes queued for a busy file (none unless this command used
		// the queue) get a last moment, then stay in the journal.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := db.Flush(ctx); err != nil {
			fmt.Fprintf(errw, "jarvis: %v\n", err)
		}
		db.Close()
	})
	return db, nil
}

// dbNamed says where the database's path was named (flag --db, env
// JARVIS_DB, config FILE:LINE), "" for the default path.
func (a *cmdline) dbNamed() string {
	if a.g.dbPath != "" {
		return "flag --db"
	}
	if cfg, err := a.loadConfig(config.Flags{}); err == nil && cfg.DB != "" {
		return cfg.Source("db")
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readDB is openDB for a command that only reads the database: a file
// named with --db (JARVIS_DB, the config's db) that does not exist is
// refused rather than created empty, since a mistyped path would
// otherwise show nothing as if nothing were there.
func (a *cmdline) readDB(what string) (*store.DB, error) {
	db, err := a.database()
	if err != nil {
		return nil, err
	}
	if named := a.dbNamed(); named != "" && !exists(db.Path()) {
		return nil, usageErr("there is no database at %s (%s); check the path, or leave it out for %s. Commands that save (ask --save, memory index, scheduler create) create it",
			db.Path(), named, store.DefaultPath())
	}
	return a.openDB(what)
}

// openDB returns the database after checking it can be opened, for commands
// that need it, so a locked or unwritable file is reported up front. what
// tells another process waiting for the file what this one is doing. A
// command that only reads uses readDB.
func (a *cmdline) openDB(what string) (*store.DB, error) {
	db, err := a.database()
	if err != nil {
		return nil, err
	}
	db.SetPurpose(what)
	// A read: opening checks the file without writing to it.
	if err := db.View(func(storm.Node) error { return nil }); err != nil {
		return nil, failErr("%v", err)
	}
	return db, nil
}

func joinArgs(args []string) string { return strings.TrimSpace(strings.Join(args, " ")) }
