// Package builtin assembles the registry of jarvis's built-in tools, and of
// the tools a program registers beside them (Register). It is the one place
// that lists them, so `--tools a,b` means the same thing in every command,
// and the one place their dependencies are injected.
package builtin

import (
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/channels"
	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/compute"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/tools/git"
	"github.com/jarvis-workbench/jarvis/tools/llm"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
	schedtools "github.com/jarvis-workbench/jarvis/tools/scheduler"
	"github.com/jarvis-workbench/jarvis/tools/shell"
	"github.com/jarvis-workbench/jarvis/tools/web"
)

// Deps are the dependencies of the built-in tools, filled once by ui/cli
// from the configuration. A missing dependency never prevents a tool from
// being listed or described; calling it fails with a message saying what is
// not configured.
type Deps struct {
	// Settings are the per-tool overrides (confirmation, timeout, allowed
	// directories), keyed by tool name.
	Settings map[string]tools.Settings
	// Engine, Model, Options and Price serve the llm tool's sub-queries.
	Engine  engine.InferenceEngine
	Model   string
	Options engine.Options
	Price   llm.Price
	// Web configures http_request and web_search ([web] in the config).
	Web web.Config
	// Channels are the messaging channels ([channels.NAME] in the config).
	Channels channels.Config
	// Code configures code_interpreter, repl and code_interpreter_docker
	// ([code] in the config).
	Code code.Config
	// Scheduler is the running task scheduler (agent/scheduler); nil makes
	// the scheduler tools answer "Scheduler not available.".
	Scheduler schedtools.Service
	// Memory is the long-term memory (store/memory); nil makes the memory
	// tools answer "Memory is not available: ...".
	Memory *memory.Store
	// MemoryTools are the memory tools' settings ([memory] in the config).
	MemoryTools memorytools.Options
	// MCP returns the running MCP servers (nil while none run), for the
	// mcp_adapter tool; their own tools are registered as SERVER__TOOL.
	MCP func() *mcp.Manager
	// Changes records in its session every file the write tools change
	// (store/sessions), for /undo; nil: changes are not recorded.
	Changes files.ChangeLog
}

// Registry returns a registry holding every built-in tool, their factories
// closing over d, and every tool registered with Register.
func Registry(d Deps) *tools.Registry {
	r := tools.NewRegistry()
	registerBuiltins(r, d)
	registerExtras(r, d)
	return r
}

func registerBuiltins(r *tools.Registry, d Deps) {
	must(schedtools.Register(r, d.Scheduler))
	must(memorytools.Register(r, d.Memory, d.MemoryTools))
	must(r.Register("calculator", compute.NewCalculator))
	must(r.Register("think", compute.NewThink))
	must(r.Register("file_read", func(td tools.Deps) (tools.Tool, error) { return files.NewFileRead(td) }))
	must(r.Register("llm", func(tools.Deps) (tools.Tool, error) { return llm.New(d.Engine, d.Model, d.Options, d.Price), nil }))
	must(r.Register("http_request", web.HTTPRequestFactory(d.Web)))
	must(r.Register("web_search", web.WebSearchFactory(d.Web)))
	must(r.Register("channel_send", channels.SendFactory(d.Channels)))
	must(r.Register("channel_list", channels.ListFactory(d.Channels)))
	must(r.Register("channel_status", channels.StatusFactory(d.Channels)))
	must(r.Register("code_interpreter", code.InterpreterFactory(d.Code)))
	must(r.Register("repl", code.REPLFactory(d.Code)))
	must(r.Register("code_interpreter_docker", code.DockerFactory(d.Code)))
	must(r.Register(mcp.AdapterName, mcp.AdapterFactory(d.MCP)))
	registerActing(r, d)
}

// registerActing registers the tools that change things: files, commands,
// commits.
func registerActing(r *tools.Registry, d Deps) {
	must(r.Register("file_write", func(td tools.Deps) (tools.Tool, error) { return files.NewFileWrite(td, d.Changes), nil }))
	must(r.Register("file_edit", func(td tools.Deps) (tools.Tool, error) { return files.NewFileEdit(td, d.Changes), nil }))
	must(r.Register("apply_patch", func(td tools.Deps) (tools.Tool, error) { return files.NewApplyPatch(td, d.Changes), nil }))
	must(r.Register(shell.Name, func(td tools.Deps) (tools.Tool, error) { return shell.New(td), nil }))
	must(r.Register("git_status", func(td tools.Deps) (tools.Tool, error) { return git.NewStatus(td), nil }))
	must(r.Register("git_diff", func(td tools.Deps) (tools.Tool, error) { return git.NewDiff(td), nil }))
	must(r.Register("git_log", func(td tools.Deps) (tools.Tool, error) { return git.NewLog(td), nil }))
	must(r.Register("git_commit", func(td tools.Deps) (tools.Tool, error) { return git.NewCommit(td), nil }))
}

// ToolDeps returns the tools.Deps that Registry's Build calls take.
func (d Deps) ToolDeps() tools.Deps {
	return tools.Deps{Settings: d.Settings, Engine: d.Engine, Model: d.Model, Options: d.Options, Memory: d.Memory}
}

// fill gives td what d has and td lacks: a registry built from d hands a
// registered tool the engine, model and memory the built-in ones close
// over, whoever builds it (an evaluation passes only the settings).
func (d Deps) fill(td tools.Deps) tools.Deps {
	if td.Engine == nil {
		td.Engine, td.Model, td.Options = d.Engine, d.Model, d.Options
	}
	if td.Memory == nil {
		td.Memory = d.Memory
	}
	return td
}

// must panics on a registration error, which can only be a duplicate name
// in the lists above (Register refuses the others): a bug caught by the
// package's tests, never by a user.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
