// Package sdk is jarvis as a Go library: register your own tools, ask
// questions from a program, or build "jarvis plus my tools" as a binary.
//
// Register adds a tool to every jarvis the program builds, as the tool
// spec's @ToolRegistry.register("my_tool") does: it is listed by `jarvis
// tools list`, described to the model, run through the same executor as a
// built-in tool (argument checks, confirmation, timeout, events), and shown
// in the workbench's Tools tab. Register it before New or jarvis.Main,
// typically in an init function.
//
// jarvis.Main (package sdk/jarvis) runs the whole jarvis command line and
// workbench with the registered tools, so a program of a few lines is a
// jarvis that has them:
//
//	func main() {
//		if err := sdk.Register("my_tool", NewMyTool); err != nil {
//			log.Fatal(err)
//		}
//		jarvis.Main()
//	}
//
// New and Ask are the spec's Jarvis() and ask_full: a question answered by
// an agent with the named tools, the answer and every tool result returned.
// New reads the same configuration the jarvis command reads (config file,
// environment, defaults; Options override them as the command's flags do)
// and uses the same database, so approvals given in the workbench hold
// here and every decision goes to the same audit log (source "sdk").
//
// The package is a thin layer over package app, which the command line
// uses too: a program asks exactly as `jarvis ask` does. It links no
// terminal UI; package sdk/jarvis is the whole jarvis, for Main.
package sdk

import (
	"context"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// Register makes the tool f builds part of every jarvis the program builds
// from now on (New, Main). name is what --tools and AskOptions.Tools call
// it, and the tool's spec must carry it. Letters, digits, '_' and '-',
// starting with a letter; a name of a built-in tool, one with "__" (the
// MCP servers' tools are SERVER__TOOL) or one registered before is an
// error.
//
// f receives the tools' dependencies (the user's per-tool settings); it
// must succeed without them and fail at Execute instead when it cannot
// work. A tool that can do harm sets RequiresConfirmation in its spec: its
// calls then wait for an approval, as the built-in ones do.
func Register(name string, f tools.Factory) error { return builtin.Register(name, f) }

// Options override the configuration as the jarvis command's flags do;
// an empty field leaves what the config file, the environment
// (JARVIS_MODEL, OLLAMA_HOST, JARVIS_DB, ...) or the defaults say.
type Options struct {
	// Host is the model server's URL (--host).
	Host string
	// Model is the model to use, ENDPOINT/MODEL for a configured endpoint
	// (--model).
	Model string
	// Engine is the kind of server: "ollama" or "openai" (--engine).
	Engine string
	// ConfigPath is the config file (--config); a file named here must
	// exist.
	ConfigPath string
	// DBPath is the database file (--db).
	DBPath string
}

// Jarvis is a configured jarvis: its servers, tools and database. It is
// safe for concurrent use; close it when done.
type Jarvis struct {
	env *app.Env
	db  *store.DB
	// approvals are the session approvals of this Jarvis: a Confirm
	// callback's "allow for the session" holds for its later questions.
	approvals *tools.Approvals
	// mcpMu serialises starting the MCP servers.
	mcpMu sync.Mutex
	// closed makes Close run once; closeErr is its answer.
	closed   sync.Once
	closeErr error
}

// New reads the configuration and wires jarvis, without contacting the
// model server or opening the database file yet. A configuration error
// names the file, the line and the key.
func New(ctx context.Context, o Options) (*Jarvis, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := app.LoadConfig(config.Flags{
		ConfigPath: o.ConfigPath, Host: o.Host, Model: o.Model, Engine: o.Engine, DB: o.DBPath,
	})
	if err != nil {
		return nil, err
	}
	db, err := app.OpenDB(cfg.DB)
	if err != nil {
		return nil, err
	}
	env, err := app.New(cfg, db, app.Options{Command: tools.SourceSDK})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Jarvis{env: env, db: db, approvals: tools.NewApprovals()}, nil
}

// closeWait bounds how long Close waits for queued writes (audit entries)
// to reach a database another process holds; what is left stays in the
// journal for the next jarvis.
const closeWait = 5 * time.Second

// Close stops the MCP servers it started and releases the database,
// after giving queued writes a moment to land. Calling it again returns
// the first call's answer.
func (j *Jarvis) Close() error {
	j.closed.Do(func() {
		if m := j.env.MCP(); m != nil {
			m.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		defer cancel()
		j.closeErr = j.db.Flush(ctx)
		if err := j.db.Close(); j.closeErr == nil {
			j.closeErr = err
		}
	})
	return j.closeErr
}

// Tools returns the names of the tools this jarvis can use, sorted: the
// built-in ones, the registered ones, the config's commands and the tools
// of MCP servers already started.
func (j *Jarvis) Tools() []string { return j.env.Registry.Names() }
