// Package app is jarvis's application layer: what every way of running
// jarvis stands on, built from the configuration (app/config): the model
// servers and their engines, the database handle, the tool registry (the
// built-in tools, the tools the program registered, the config's command
// tools) with the dependencies its factories receive, the approval policy
// every entry point shares, and the one way a conversation's turn is run
// (Turn). The workbench (ui/tui), the command line (ui/cli), scheduled runs
// and the Go SDK (package sdk) all build on it, so `jarvis ask`, a
// scheduled task and a program's Ask find the same tools, servers and
// approvals, and run the same way. app/history converts between stored
// sessions and conversations; app/attach reads the images attached to a
// message.
//
// It draws nothing and parses no command line: printing, flags, keys and
// exit codes stay with the front ends, and so does the wording of fixes
// ("--host", "/ctx"), which depends on where the person is.
package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/command"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
)

// LoadConfig reads the configuration (file, environment, then f), with the
// tool names it checks [tool.NAME] sections and commands against: the
// built-in tools and those the program registered.
func LoadConfig(f config.Flags) (*config.Config, error) {
	f.ToolNames = builtin.Names()
	return config.Load(f)
}

// OpenDB returns a handle on the database at path ("" for the default),
// without touching the file; the caller closes it.
func OpenDB(path string) (*store.DB, error) { return store.New(path, "jarvis") }

// BaseDeps are the built-in tools' dependencies that come from the
// configuration alone, for a database at dbPath: the per-tool settings,
// generation options and prices, [web], [channels] and [code]. The code
// tools hide, and file_read and memory indexing refuse, the config file
// and the database wherever --config, JARVIS_CONFIG, --db or the config's
// db key put them, not only at their default paths.
func BaseDeps(cfg *config.Config, dbPath string) builtin.Deps {
	opts, _ := cfg.EngineOptions() // validated by config.Load
	bd := builtin.Deps{
		Settings: cfg.Tool, Options: opts, Price: Price(cfg, ""),
		Web: cfg.Web, Channels: cfg.Channels, Code: cfg.Code,
	}
	bd.Code.HidePaths = slices.Clip(bd.Code.HidePaths)
	for _, p := range []string{cfg.Path(), dbPath} {
		if p != "" {
			bd.Code.HidePaths = append(bd.Code.HidePaths, p)
		}
	}
	files.ProtectJarvisFiles(cfg.Path(), dbPath)
	return bd
}

// Options configure New.
type Options struct {
	// Command names this process to the other jarvis processes sharing
	// the database ("ask", "sdk"), as the scheduler records it.
	Command string
}

// Env is what a run is built from. Build it once per process with New.
type Env struct {
	Config *config.Config
	DB     *store.DB
	// Default is the default server, Named the endpoints; At is the one
	// the configured model is on, Engine its engine and Model the model's
	// name there ("qwen3-32b" for --model lab/qwen3-32b; "" when none is
	// configured, see ResolveModel).
	Default *Server
	Named   []*Server
	At      *Server
	Engine  engine.InferenceEngine
	Model   string
	// Registry builds tools by name with Deps: the built-in ones, those
	// the program registered (builtin.Register), the config's commands,
	// and the MCP servers' tools once StartMCP registers them.
	Registry *tools.Registry
	Deps     tools.Deps
	// Memory is the memory store; it touches the database on first use.
	Memory *memory.Store
	// Scheduler is what the scheduler tools call: a scheduler on the
	// database, opened when a tool is first called; a front end that
	// runs a scheduler points it there (LazyScheduler.Use).
	Scheduler *LazyScheduler

	mcp atomic.Pointer[mcp.Manager]
}

// New builds the environment of cfg on db (a handle from OpenDB; the file
// is not touched until something needs it).
func New(cfg *config.Config, db *store.DB, o Options) (*Env, error) {
	def, named, err := BuildServers(cfg)
	if err != nil {
		return nil, err
	}
	env := &Env{Config: cfg, DB: db, Default: def, Named: named}
	env.At, env.Model = env.Lookup(cfg.Model)
	env.Engine = env.At.Engine
	bd := BaseDeps(cfg, db.Path())
	bd.Engine, bd.Model, bd.Price = env.Engine, env.Model, Price(cfg, env.At.Name)
	// Embeddings come from the default server, where it can make them
	// (Ollama); elsewhere memory ranks with BM25 alone.
	var embedder memory.Embedder
	if e, ok := def.Engine.(engine.Embedder); ok {
		embedder = e
	}
	mem, err := memory.New(db, memory.Options{
		ChunkSize: cfg.Memory.ChunkSize, ChunkOverlap: cfg.Memory.ChunkOverlap,
		Embedder: embedder, EmbedModel: cfg.Memory.EmbedModel, SemanticWeight: cfg.Memory.SemanticWeight,
	})
	if err != nil {
		return nil, fmt.Errorf("[memory] in the config: %w", err)
	}
	bd.Memory, env.Memory = mem, mem
	bd.MemoryTools = memorytools.Options{MaxFileBytes: cfg.Memory.MaxFileBytes}
	env.Scheduler = newLazyScheduler(env, o.Command)
	bd.Scheduler = env.Scheduler
	bd.MCP = env.MCP
	bd.Changes = sessions.New(db)
	env.Deps = bd.ToolDeps()
	env.Registry = builtin.Registry(bd)
	if err := command.Register(env.Registry, cfg.CommandTools()); err != nil {
		return nil, err
	}
	return env, nil
}

// Servers lists the default server, then the endpoints.
func (e *Env) Servers() []*Server { return append([]*Server{e.Default}, e.Named...) }

// Lookup finds the server a model reference names ("lab/qwen3-32b", or a
// bare name for the default server) and the model's name there.
func (e *Env) Lookup(ref string) (*Server, string) {
	name, model := e.Config.SplitModel(ref)
	for _, s := range e.Named {
		if s.Name == name {
			return s, model
		}
	}
	return e.Default, model
}

// ResolveModel returns the configured model, or asks the server for one
// when none is configured (PickModel), with a note saying so.
func (e *Env) ResolveModel(ctx context.Context) (model, note string, err error) {
	if e.Model != "" {
		return e.Model, "", nil
	}
	chat, err := PickModel(ctx, e.Engine, e.At.Kind)
	if err != nil {
		return "", "", err
	}
	return chat, fmt.Sprintf("no model set; using %s (set one with --model or 'model' in the config)", chat), nil
}

// BuildTools builds the named tools. An unknown name is a
// *tools.UnknownToolError.
func (e *Env) BuildTools(names []string) ([]tools.Tool, error) {
	return e.Registry.BuildList(names, e.Deps)
}

// ValidateTask checks a task's agent and tool names against the agents
// and the registry: the names --agent and --tools accept everywhere.
func (e *Env) ValidateTask(agentName string, names []string) error {
	if !slices.Contains(agent.Names, agentName) {
		return fmt.Errorf("unknown agent %q: use one of %s", agentName, strings.Join(agent.Names, ", "))
	}
	for _, n := range names {
		if tools.IsPattern(n) {
			return fmt.Errorf("a task names each of its tools in full: it runs unattended, with exactly the tools it was given; %q is a pattern", n)
		}
		if !e.Registry.Has(n) {
			return &tools.UnknownToolError{Name: n, Known: e.Registry.Names()}
		}
	}
	return nil
}

// CloseTool releases what a tool holds (a REPL's interpreter), looking
// under settings wrappers; tools without anything to release are left.
func CloseTool(t tools.Tool) { tools.Close(t) }
