package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	storemem "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
)

// checks are the checks of the configuration, one per part of it. Each
// reports every problem it finds, so that one run lists them all; a
// command never meets a value these let through and then refuses it. A
// new section adds its check here.
var checks = []func(*Config, *report){
	checkTop,
	checkTools,
	checkOptions,
	checkPrices,
	checkToolSettings,
	checkEndpoints,
	func(c *Config, r *report) { c.Web.Check(r.section("web")) },
	func(c *Config, r *report) { c.Channels.Check(r.section("channels")) },
	func(c *Config, r *report) { c.Code.Check(r.section("code")) },
	func(c *Config, r *report) { c.MCP.Check(r.section("mcp")) },
	checkMemory,
	checkContext,
	checkScheduler,
	checkImages,
	checkCommands,
}

// checkTop checks the top-level settings that are not lists of tools.
func checkTop(c *Config, r *report) {
	drv, engineKnown := engine.DriverFor(c.EngineName())
	if !engineKnown {
		r.value("engine", fmt.Sprintf("unknown engine %q", c.Engine), "choose "+kinds())
	}
	if strings.TrimSpace(c.Host) != "" && engineKnown {
		if _, err := ParseServerHost(c.EngineName(), c.Host); err != nil {
			r.value("host", hideURL(err.Error(), c.Host), drv.HostHint)
		}
	}
	if drv.TakesKey {
		if _, err := c.APIKeyValue(); err != nil {
			var ke *KeyError
			if errors.As(err, &ke) {
				r.value("api_key", fmt.Sprintf("is ${%s}, but %s is not set in the environment", ke.Var, ke.Var),
					fmt.Sprintf("export %s=..., or write the key in the config", ke.Var))
			}
		}
	}
	if !slices.Contains(Agents, c.Agent) {
		r.value("agent", fmt.Sprintf("unknown agent %q", c.Agent), "choose one of: "+strings.Join(Agents, ", "))
	}
	if c.MaxTurns < 1 {
		r.value("max_turns", fmt.Sprintf("must be at least 1, got %d", c.MaxTurns), fmt.Sprintf("leave it out for %d", DefaultMaxTurns))
	}
	if t := strings.ToLower(strings.TrimSpace(c.Theme)); t != "" && c.themeNames != nil && !slices.Contains(c.themeNames, t) {
		msg := fmt.Sprintf("%q is not a theme", c.Theme)
		if s := tools.Suggest(t, c.themeNames); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		r.value("theme", msg, "choose one of: "+strings.Join(c.themeNames, ", "))
	}
}

// hideURL replaces raw in msg by its redacted form: a server address
// quoted in an error may carry credentials.
func hideURL(msg, raw string) string {
	if raw == "" {
		return msg
	}
	return strings.ReplaceAll(msg, raw, tools.RedactURL(raw))
}

// toolNames are the names tools and [tool.NAME] may use besides those of
// MCP servers (which toolProblem checks by their server): the built-in
// tools. A section that defines tools of its own adds their names here.
func (c *Config) toolNames() []string {
	return append(slices.Clip(c.builtinTools), c.commandNames()...)
}

// toolProblem says why name cannot be a tool of this configuration ("":
// it can). An MCP tool, SERVER__TOOL, is known once its server runs, so
// only its server is checked: configured, and enabled when running is
// what the tool is named for (in tools, not in [tool.NAME], whose
// settings may wait for the server to be enabled again).
func (c *Config) toolProblem(name string, mustRun bool) string {
	if slices.Contains(c.toolNames(), name) {
		return ""
	}
	if tools.IsPattern(name) {
		return c.patternProblem(name, mustRun)
	}
	if server, _, ok := strings.Cut(name, "__"); ok {
		s, err := c.MCP.Server(server)
		switch {
		case err != nil:
			return fmt.Sprintf("%q is an MCP tool name (SERVER__TOOL), but %s", name, err)
		case mustRun && !s.IsEnabled():
			return fmt.Sprintf("%q is a tool of the MCP server %q, which is disabled (enabled = false)", name, server)
		}
		return ""
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if s := tools.Suggest(name, c.toolNames()); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// patternProblem says why a pattern of tools ("fs__*") cannot select
// tools of this configuration: it must be well formed, and match a
// built-in tool or name a configured MCP server (whose tools are known
// only once it runs). In [tool.NAME] a pattern is never a name.
func (c *Config) patternProblem(pattern string, mustRun bool) string {
	if !mustRun {
		return fmt.Sprintf("%q is a pattern; settings apply to one tool, named in full", pattern)
	}
	if err := tools.CheckPattern(pattern); err != nil {
		return err.Error()
	}
	if slices.ContainsFunc(c.toolNames(), func(n string) bool { return tools.MatchPattern(pattern, n) }) {
		return ""
	}
	if server, _, ok := strings.Cut(pattern, "__"); ok && !tools.IsPattern(server) {
		s, err := c.MCP.Server(server)
		switch {
		case err != nil:
			return fmt.Sprintf("%q selects the tools of an MCP server (SERVER__*), but %s", pattern, err)
		case !s.IsEnabled():
			return fmt.Sprintf("%q selects the tools of the MCP server %q, which is disabled (enabled = false)", pattern, server)
		}
		return ""
	}
	if len(c.MCP.Servers) > 0 {
		return "" // it may match the tools of a server once they are listed
	}
	return fmt.Sprintf("no tool matches %q", pattern)
}

func (c *Config) toolsFix() string {
	return "the tools are: " + strings.Join(c.toolNames(), ", ") + ", and SERVER__TOOL for the tools of [[mcp.servers]] (SERVER__* for all of them)"
}

// checkTools checks the names in tools.
func checkTools(c *Config, r *report) {
	for _, name := range c.Tools {
		if p := c.toolProblem(name, true); p != "" {
			r.value("tools", p, c.toolsFix())
		}
	}
}

// dirTools are the tools that read allowed_dirs: set on another tool, it
// would restrict nothing while the person believes it does.
var dirTools = []string{"file_read", "memory_index", "file_write", "file_edit", "apply_patch", "shell_exec",
	"git_status", "git_diff", "git_log", "git_commit"}

// checkToolSettings checks each [tool.NAME].
func checkToolSettings(c *Config, r *report) {
	names := make([]string, 0, len(c.Tool))
	for n := range c.Tool {
		names = append(names, n)
	}
	sort.Strings(names)
	var reg *tools.Registry
	for _, name := range names {
		s, at := c.Tool[name], "tool."+name
		if p := c.toolProblem(name, false); p != "" {
			r.at(at, p, c.toolsFix())
			continue
		}
		if t := s.TimeoutSeconds; t != nil && (*t <= 0 || math.IsNaN(*t) || math.IsInf(*t, 0)) {
			r.at(at+".timeout", fmt.Sprintf("must be a positive number of seconds, got %v", *t), "leave it out to keep the tool's own timeout")
		}
		if len(s.AllowedDirs) > 0 && !slices.Contains(dirTools, name) {
			r.at(at+".allowed_dirs", fmt.Sprintf("%s does not read allowed_dirs, so it would restrict nothing", name),
				"only "+strings.Join(dirTools, " and ")+" take it; move it there or remove it")
		}
		if (len(s.PassEnv) > 0 || s.Sandbox) && name != "shell_exec" {
			r.at(at, name+" does not run commands, so pass_env and sandbox change nothing for it",
				"only shell_exec takes them ([[commands]] entries have their own pass_env); move them there or remove them")
		}
		if d := s.Description; d != nil && strings.TrimSpace(*d) == "" {
			r.at(at+".description", "is empty", "remove it to keep the tool's own description")
		}
		if len(s.Parameters) == 0 || !slices.Contains(c.toolNames(), name) {
			continue
		}
		if reg == nil {
			reg = builtin.Registry(builtin.Deps{})
		}
		t, err := reg.Build(name, tools.Deps{})
		if err != nil {
			continue // not a tool of tools/builtin: its parameters are not known here
		}
		params := make([]string, 0, len(s.Parameters))
		for p := range s.Parameters {
			params = append(params, p)
		}
		sort.Strings(params)
		for _, p := range params {
			one := tools.Settings{Parameters: map[string]string{p: s.Parameters[p]}}
			if err := tools.CheckSettings(t.Spec(), one); err != nil {
				r.at(at+".parameters."+p, err.Error(), "")
			}
		}
	}
}

// checkOptions checks [options] and --num-ctx.
func checkOptions(c *Config, r *report) {
	o := &c.Options
	if n := o.NumCtx; n < 0 || n > 0 && n < 256 || n > 1<<24 {
		r.value("options.num_ctx", fmt.Sprintf("must be between 256 and %d tokens, got %d", 1<<24, n),
			"leave it out to use the model's window")
	}
	if o.NumPredict < -2 {
		r.at("options.num_predict", fmt.Sprintf("must be a number of tokens, -1 (no limit) or -2 (fill the window), got %d", o.NumPredict), "")
	}
	if t := o.Temperature; t != nil && (*t < 0 || math.IsNaN(*t) || math.IsInf(*t, 0)) {
		r.value("options.temperature", fmt.Sprintf("must be 0 or more, got %v", *t), "use e.g. 0.2 for steady answers, 0.8 for varied ones")
	}
	if o.KeepAlive != "" {
		if _, err := time.ParseDuration(o.KeepAlive); err != nil {
			r.at("options.keep_alive", fmt.Sprintf("%q is not a duration", o.KeepAlive), `write one such as "5m" or "1h"`)
		}
	}
	o.Think = strings.ToLower(strings.TrimSpace(o.Think))
	switch o.Think {
	case "", "true", "false", "low", "medium", "high":
	default:
		r.value("options.think", fmt.Sprintf("%q is not a thinking setting", o.Think), "use true, false, low, medium or high")
	}
}

// checkPrices checks [prices.MODEL] and each endpoint's prices.
func checkPrices(c *Config, r *report) {
	check := func(base string, prices map[string]Price) {
		models := make([]string, 0, len(prices))
		for m := range prices {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			p := prices[m]
			for _, f := range []struct {
				key string
				v   float64
			}{{"input", p.Input}, {"output", p.Output}} {
				if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
					r.at(base+"."+m+"."+f.key, fmt.Sprintf("must be a price in dollars per million tokens (0 or more), got %v", f.v), "")
				}
			}
		}
	}
	check("prices", c.Prices)
	for i, ep := range c.Endpoints {
		check(fmt.Sprintf("endpoints[%d].prices", i), ep.Prices)
	}
}

// checkMemory checks [memory] as the memory store and tools will take it.
func checkMemory(c *Config, r *report) {
	m := c.Memory
	size, overlap := m.ChunkSize, m.ChunkOverlap
	if size == 0 {
		size = storemem.DefaultChunkSize
		if overlap == 0 {
			overlap = storemem.DefaultChunkOverlap
		}
	}
	if err := storemem.CheckChunking(size, overlap); err != nil {
		key := "memory.chunk_overlap"
		if size <= 0 || size > storemem.MaxChunkSize {
			key = "memory.chunk_size"
		}
		r.at(key, err.Error(), fmt.Sprintf("leave chunk_size and chunk_overlap out for %d and %d words", storemem.DefaultChunkSize, storemem.DefaultChunkOverlap))
	}
	if w := m.SemanticWeight; w < 0 || w > 1 || math.IsNaN(w) {
		r.at("memory.semantic_weight", fmt.Sprintf("must be a share between 0 and 1, got %v", w), "e.g. 0.5 weighs embeddings and keywords alike")
	}
	if err := memorytools.CheckMaxFileBytes(m.MaxFileBytes); err != nil {
		r.at("memory.max_file_bytes", err.Error(), "leave it out for 1 MiB")
	}
}

// checkContext checks the [context] shares.
func checkContext(c *Config, r *report) {
	for _, f := range []struct {
		key, example string
		v            float64
	}{
		{"context.tool_result_share", "0.25", c.Context.ToolResultShare},
		{"context.compact_at", "0.85", c.Context.CompactAt},
	} {
		if f.v < 0 || f.v > 1 || math.IsNaN(f.v) {
			r.at(f.key, fmt.Sprintf("must be a share of the window between 0 and 1, got %v", f.v), "e.g. "+f.example+", or leave it out for the default")
		}
	}
}

// checkScheduler checks [scheduler].
func checkScheduler(c *Config, r *report) {
	if t := c.Scheduler.Timeout; t != "" {
		if d, err := time.ParseDuration(t); err != nil || d < time.Second {
			r.at("scheduler.timeout", fmt.Sprintf("%q is not a time limit of at least 1s", t), `use a duration such as "10m" or "1h"`)
		}
	}
}

// checkImages checks [images].
func checkImages(c *Config, r *report) {
	if c.Images.MaxBytes < 0 {
		r.at("images.max_bytes", fmt.Sprintf("must be a size in bytes, got %d", c.Images.MaxBytes), "e.g. 20971520 for 20 MiB, or leave it out for that")
	}
}
