package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asdine/storm/v3"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
	"github.com/jarvis-workbench/jarvis/ui/config"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// environment is what commands build on: the configuration, the engine,
// the tool registry and the dependencies its factories receive. It is built
// once per process.
type environment struct {
	cfg *config.Config
	// def is the default server and named the endpoints; at is the one
	// the configured model is on, engine its engine and model the
	// model's name there ("qwen3-32b" for --model lab/qwen3-32b).
	def, at  *server
	named    []*server
	engine   engine.InferenceEngine
	model    string
	registry *tools.Registry
	deps     tools.Deps
	// sched is what the scheduler tools call; the TUI points it at the
	// scheduler it runs.
	sched *lazyScheduler
	// memory is the memory store; it touches the database on first use.
	memory *memory.Store
	// mcp runs the MCP servers once a command needs their tools.
	mcp *mcp.Manager
}

// loadConfig reads the configuration with the global flags and the
// command's own (agent, tools, system, theme). Commands that take none call
// environment directly.
func (a *app) loadConfig(f config.Flags) (*config.Config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	f.ConfigPath, f.Host, f.Model, f.DB, f.Engine = a.g.configPath, a.g.host, a.g.model, a.g.dbPath, a.g.engine
	f.ToolNames = builtin.Registry(builtin.Deps{}).Names()
	cfg, err := config.Load(f)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	a.cfg = cfg
	return cfg, nil
}

func (a *app) environment() (*environment, error) {
	if a.env != nil {
		return a.env, nil
	}
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return nil, err
	}
	def, named, err := buildServers(cfg)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	env := &environment{cfg: cfg, def: def, named: named}
	env.at, env.model = env.lookup(cfg.Model)
	env.engine = env.at.engine
	opts, _ := cfg.EngineOptions() // validated by config.Load
	bd := builtin.Deps{
		Settings: cfg.Tool,
		Engine:   env.engine,
		Model:    env.model,
		Options:  opts,
		Price:    priceAt(cfg, env.at.name),
		Web:      cfg.Web,
		Channels: cfg.Channels,
		Code:     cfg.Code,
	}
	db, err := a.database()
	if err != nil {
		return nil, err
	}
	// The code tools hide the config file and the database wherever
	// --config, JARVIS_CONFIG, --db or the config's db key put them, not
	// only at their default paths.
	bd.Code.HidePaths = slices.Clip(bd.Code.HidePaths)
	for _, p := range []string{cfg.Path(), db.Path()} {
		if p != "" {
			bd.Code.HidePaths = append(bd.Code.HidePaths, p)
		}
	}
	// file_read and memory indexing refuse them there too.
	files.ProtectJarvisFiles(cfg.Path(), db.Path())
	// Embeddings come from the default server, where it can make them
	// (Ollama); elsewhere memory ranks with BM25 alone.
	var embedder memory.Embedder
	if e, ok := def.engine.(engine.Embedder); ok {
		embedder = e
	}
	mem, err := memory.New(db, memory.Options{
		ChunkSize: cfg.Memory.ChunkSize, ChunkOverlap: cfg.Memory.ChunkOverlap,
		Embedder: embedder, EmbedModel: cfg.Memory.EmbedModel, SemanticWeight: cfg.Memory.SemanticWeight,
	})
	if err != nil {
		return nil, usageErr("[memory] in the config: %v", err)
	}
	bd.Memory = mem
	bd.MemoryTools = memorytools.Options{MaxFileBytes: cfg.Memory.MaxFileBytes}
	// The scheduler tools reach the task store lazily; a chat that runs the
	// scheduler (the TUI) replaces this with its running scheduler.
	lazy := &lazyScheduler{}
	bd.Scheduler = lazy
	env.deps, env.sched, env.memory = bd.ToolDeps(), lazy, mem
	bd.MCP = func() *mcp.Manager { return env.mcp }
	env.registry = builtin.Registry(bd)
	lazy.open = func() (*scheduler.Scheduler, error) {
		// Tasks a model creates record this process's server.
		opts, err := a.schedOptions("ask", nil)
		if err != nil {
			return nil, err
		}
		s, _, err := a.openScheduler(opts)
		return s, err
	}
	a.env = env
	return a.env, nil
}

// priceAt adapts the configured prices of a server's models (endpoint ""
// for the default server) to the agents' and tools' signature.
func priceAt(cfg *config.Config, endpoint string) func(model string, in, out int) float64 {
	return func(model string, in, out int) float64 { return cfg.PriceAt(endpoint, model).Cost(in, out) }
}

// resolveModel returns the configured model, or asks the server for one when
// none is configured: the first model that can call tools, else the first.
func (env *environment) resolveModel(ctx context.Context) (string, string, error) {
	if env.model != "" {
		return env.model, "", nil
	}
	chat, err := pickModel(ctx, env.engine, env.at.kind)
	if err != nil {
		return "", "", err
	}
	return chat, fmt.Sprintf("no model set; using %s (set one with --model or 'model' in the config)", chat), nil
}

// pickModel asks a server of kind which model to use when none is set:
// the first that can call tools, else the first that can chat.
func pickModel(ctx context.Context, eng engine.InferenceEngine, kind string) (string, error) {
	models, err := eng.ListModels(ctx)
	if err != nil {
		return "", err
	}
	if len(models) == 0 {
		if kind == config.EngineOpenAI {
			return "", fmt.Errorf("no model is set and the server at %s lists none; start it with a model (llama-server -m FILE, vllm serve MODEL, or load one in LM Studio), then run again", eng.Host())
		}
		return "", fmt.Errorf("no model is set and the server at %s has none. Download one with 'jarvis models pull qwen3', then run again", eng.Host())
	}
	// The first model that can chat and call tools, else the first that can
	// chat (an embedding model cannot answer at all).
	var chat string
	for _, m := range models {
		caps, err := eng.Capabilities(ctx, m.Name)
		if err != nil || !slices.Contains(caps, engine.CapCompletion) {
			continue
		}
		if slices.Contains(caps, engine.CapTools) {
			chat = m.Name
			break
		}
		if chat == "" {
			chat = m.Name
		}
	}
	if chat == "" {
		fix := "Download one with 'jarvis models pull qwen3'"
		if kind == config.EngineOpenAI {
			fix = "Start the server with a chat model"
		}
		return "", fmt.Errorf("no model is set and none of the server's models can chat (%s, e.g. embedding models). %s", format.Count(len(models), "model"), fix)
	}
	return chat, nil
}

// buildTools builds the named tools; an unknown name is a usage error.
func (env *environment) buildTools(names []string) ([]tools.Tool, error) {
	list, err := env.registry.BuildList(names, env.deps)
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
func (a *app) database() (*store.DB, error) {
	if a.db != nil {
		return a.db, nil
	}
	path := a.g.dbPath
	if path == "" {
		if cfg, err := a.loadConfig(config.Flags{}); err == nil {
			path = cfg.DB
		}
	}
	db, err := store.New(path, "jarvis")
	if err != nil {
		return nil, usageErr("%v", err)
	}
	a.db = db
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

// openDB returns the database after checking it can be opened, for commands
// that need it, so a locked or unwritable file is reported up front. what
// tells another process waiting for the file what this one is doing.
func (a *app) openDB(what string) (*store.DB, error) {
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
