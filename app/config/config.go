// Package config reads jarvis's configuration once, at the edge: defaults,
// then the TOML file, then environment variables, then flags, each level
// overriding the one before. It remembers where every value came from so
// `jarvis config show` can say why a value is what it is, and it checks
// the whole configuration at once: every problem, each with its file and
// line (or the variable or flag) and key and what to do, so that no
// command starts with a value it would later refuse.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
	"github.com/jarvis-workbench/jarvis/tools/channels"
	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/command"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/tools/web"
)

// Config is the effective configuration.
type Config struct {
	Model string `toml:"model"`
	// Engine is the kind of the default server: "ollama" (when empty) or
	// "openai"; Host is its address, and APIKey the key an openai
	// server is sent (${VAR} is read from the environment).
	Engine   string   `toml:"engine"`
	Host     string   `toml:"host"`
	APIKey   Secret   `toml:"api_key"`
	Agent    string   `toml:"agent"`
	Tools    []string `toml:"tools"`
	System   string   `toml:"system"`
	Theme    string   `toml:"theme"`
	MaxTurns int      `toml:"max_turns"`
	DB       string   `toml:"db"`

	Options Options `toml:"options"`
	// Prices are US dollars per million tokens, keyed by model name; local
	// models cost nothing unless the user says otherwise.
	Prices map[string]Price `toml:"prices"`
	// Tool holds per-tool overrides: [tool.file_read] allowed_dirs = [...].
	Tool map[string]tools.Settings `toml:"tool"`
	// Web configures http_request ([web.http]) and web_search ([web.search]).
	Web web.Config `toml:"web"`
	// Channels are the messaging channels: [channels.NAME] type = "slack" ...
	Channels channels.Config `toml:"channels"`
	// Code configures code_interpreter, repl ([code]) and
	// code_interpreter_docker ([code.docker]).
	Code code.Config `toml:"code"`
	// MCP lists the external tool servers: [[mcp.servers]].
	MCP mcp.Config `toml:"mcp"`
	// Memory configures the memory tools' store ([memory]).
	Memory MemoryConfig `toml:"memory"`
	// Context configures what the model sees of a conversation
	// ([context]); the window itself is options.num_ctx.
	Context ContextConfig `toml:"context"`
	// Scheduler configures scheduled runs ([scheduler]).
	Scheduler SchedulerConfig `toml:"scheduler"`
	// Endpoints are named model servers besides the default one
	// ([[endpoints]]); their models are NAME/MODEL.
	Endpoints []Endpoint `toml:"endpoints"`
	// Images configures images attached to messages ([images]).
	Images ImagesConfig `toml:"images"`
	// Commands are programs offered to the model as tools ([[commands]]).
	Commands []command.Spec `toml:"commands"`

	// sources says where each value came from, by its path in the file
	// ("theme", "options.num_ctx", "mcp.servers[0].url"); lines locates
	// every key the file sets.
	sources map[string]string
	lines   keyLines
	path    string
	// builtinTools are the names of the built-in tools, which tools and
	// [tool.NAME] are checked against.
	builtinTools []string
	// themeNames are the themes the theme setting is checked against (nil:
	// not checked, see Flags.ThemeNames).
	themeNames []string
	// commands are Commands checked and compiled (CommandTools).
	commands []*command.Command
}

// MemoryConfig is [memory]: chunking, the optional embedding model whose
// similarity is blended with BM25 (empty: BM25 alone), and the largest file
// indexed (0: 1 MiB).
type MemoryConfig struct {
	EmbedModel     string  `toml:"embed_model"`
	ChunkSize      int     `toml:"chunk_size"`
	ChunkOverlap   int     `toml:"chunk_overlap"`
	SemanticWeight float64 `toml:"semantic_weight"`
	MaxFileBytes   int64   `toml:"max_file_bytes"`
}

// ContextConfig is [context]: the share of the window one tool result may
// take in what the model reads, and the share above which older turns are
// compacted (0: the defaults, a quarter and 85%).
type ContextConfig struct {
	ToolResultShare float64 `toml:"tool_result_share"`
	CompactAt       float64 `toml:"compact_at"`
}

// SchedulerConfig is [scheduler]: timeout is the time limit of a scheduled
// run whose task sets none (a Go duration, "10m").
type SchedulerConfig struct {
	Timeout string `toml:"timeout"`
}

// ImagesConfig is [images]: the largest image attached to a message, in
// bytes (0: 20 MiB).
type ImagesConfig struct {
	MaxBytes int64 `toml:"max_bytes"`
}

// TaskTimeout returns [scheduler] timeout, zero when unset (the
// scheduler's default applies). Load has checked it.
func (c *Config) TaskTimeout() time.Duration {
	d, _ := time.ParseDuration(c.Scheduler.Timeout)
	return d
}

// Options are the generation options ([options] in the file).
type Options struct {
	NumCtx      int      `toml:"num_ctx"`
	NumPredict  int      `toml:"num_predict"`
	Temperature *float64 `toml:"temperature"`
	Seed        *int     `toml:"seed"`
	KeepAlive   string   `toml:"keep_alive"`
	Think       string   `toml:"think"`
}

// Price is a model's price per million tokens.
type Price struct {
	Input  float64 `toml:"input"`
	Output float64 `toml:"output"`
}

// Cost returns what a reply with these token counts cost.
func (p Price) Cost(promptTokens, outputTokens int) float64 {
	return (float64(promptTokens)*p.Input + float64(outputTokens)*p.Output) / 1e6
}

// Defaults.
const (
	DefaultAgent    = "orchestrator"
	DefaultMaxTurns = 10
	DefaultTheme    = "auto"
)

// DefaultTools are enabled when the config names none: they cost nothing,
// touch nothing outside the process, and make a model exact at arithmetic.
var DefaultTools = []string{"calculator", "think"}

// Agents are the agent names jarvis knows.
var Agents = []string{"simple", "orchestrator", "react"}

// Flags are the command-line values; empty means "not given".
type Flags struct {
	ConfigPath string
	// Engine is --engine: the kind of the default server.
	Engine string
	Host   string
	Model  string
	DB     string
	Agent  string
	Tools  *string // nil: not given; "" or "none": no tools
	System string
	Theme  string
	// NumCtx is --num-ctx (0: not given).
	NumCtx int
	// Temperature, Seed, Think and MaxTurns are what a command sets for
	// one run (ask's --temperature, --seed, --think, --max-turns): nil,
	// "" and 0 when not given.
	Temperature *float64
	Seed        *int
	Think       string
	MaxTurns    int
	// ToolNames are the names of the tools besides the commands (built in
	// and registered by the program), to check tools, [tool.NAME] and
	// command names against (nil: those of tools/builtin, registered
	// ones included).
	ToolNames []string
	// ThemeNames are the themes the front end draws with, to check the
	// theme setting against (nil: a front end that draws nothing, such
	// as a program asking through the SDK, does not check it).
	ThemeNames []string
}

// DefaultPath is $XDG_CONFIG_HOME/jarvis/config.toml (~/.config/... when unset).
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "jarvis", "config.toml")
}

// Load builds the effective configuration. A missing file at the default
// path is fine (defaults apply); a missing file named with --config or
// JARVIS_CONFIG is a problem. Anything wrong, in the file or in a value
// from the environment or a flag, makes Load return nil and Problems, all
// of them at once.
func Load(f Flags) (*Config, error) {
	c, problems := Read(f)
	if len(problems) > 0 {
		return nil, problems
	}
	return c, nil
}

// Read builds the configuration as far as it can, and returns it with
// everything wrong with it (sorted by line): what `jarvis config show`
// and `jarvis doctor` report. A value that cannot be read keeps its
// default. Commands use Load, which refuses a configuration with
// problems.
func Read(f Flags) (*Config, Problems) {
	c := &Config{
		Tools:    append([]string(nil), DefaultTools...),
		Agent:    DefaultAgent,
		MaxTurns: DefaultMaxTurns,
		Theme:    DefaultTheme,
		sources:  map[string]string{},
		lines:    keyLines{},
	}
	r := &report{c: c}
	path, explicit := f.ConfigPath, f.ConfigPath != ""
	if !explicit {
		if env := os.Getenv("JARVIS_CONFIG"); env != "" {
			path, explicit = env, true
		} else {
			path = DefaultPath()
		}
	}
	c.loadFile(path, explicit, r)
	c.applyEngine(f.Engine)
	c.applyEnv()
	c.applyFlags(f)
	c.builtinTools, c.themeNames = f.ToolNames, f.ThemeNames
	if c.builtinTools == nil {
		c.builtinTools = builtin.Registry(builtin.Deps{}).Names()
	}
	for _, check := range checks {
		check(c, r)
	}
	sortProblems(r.problems)
	return c, r.problems
}

// Path is the config file that was read ("" when none was).
func (c *Config) Path() string { return c.path }

// Source says where a value came from: "default", "config FILE:LINE",
// "env VAR" or "flag --name". Keys are paths in the file ("theme",
// "options.num_ctx", "mcp.servers[0].url").
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

// fileSource is the source of a value set at path in the file.
func (c *Config) fileSource(path string) string {
	if l := c.lines.near(path); l > 0 {
		return fmt.Sprintf("config %s:%d", c.path, l)
	}
	return "config " + c.path
}

// loadFile reads and decodes the file at path into c, reporting what is
// wrong with it.
func (c *Config) loadFile(path string, explicit bool, r *report) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return
		}
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		r.problems = append(r.problems, Problem{Path: path, Msg: "cannot read the file: " + msg,
			Fix: "check the path given with --config or JARVIS_CONFIG, or leave both unset to use " + DefaultPath()})
		return
	}
	c.path = path
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		p := Problem{Path: path, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.Line, p.Key, p.Msg = pe.Position.Line, pe.LastKey, pe.Message
		} else if m := lineInMsg().FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
		}
		p.Msg = tomlPrefix().ReplaceAllString(p.Msg, "")
		p.Fix = "this is not valid TOML (https://toml.io); nothing else in the file was read"
		r.problems = append(r.problems, p)
		return
	}
	c.lines = locateKeys(string(data))
	d := &decoder{md: md, report: r, decoded: func(key string) { c.sources[key] = c.fileSource(key) }}
	d.table(top, reflect.ValueOf(c).Elem(), "")
}

var lineInMsg = lazyregexp.New(`line (\d+)`)

func (c *Config) set(key, value, source string, dst *string) {
	if value == "" {
		return
	}
	*dst = value
	c.sources[key] = source
}

func (c *Config) applyEnv() {
	c.set("model", os.Getenv("JARVIS_MODEL"), "env JARVIS_MODEL", &c.Model)
	if env := c.Driver().HostEnv; env != "" {
		// The kind's own variable (OLLAMA_HOST): it names no server of
		// another kind.
		c.set("host", os.Getenv(env), "env "+env, &c.Host)
	}
	c.set("agent", os.Getenv("JARVIS_AGENT"), "env JARVIS_AGENT", &c.Agent)
	c.set("theme", os.Getenv("JARVIS_THEME"), "env JARVIS_THEME", &c.Theme)
	c.set("db", os.Getenv("JARVIS_DB"), "env JARVIS_DB", &c.DB)
	if v, ok := os.LookupEnv("JARVIS_TOOLS"); ok {
		c.Tools = tools.ParseList(v)
		c.sources["tools"] = "env JARVIS_TOOLS"
	}
}

func (c *Config) applyFlags(f Flags) {
	c.set("model", f.Model, "flag --model", &c.Model)
	c.set("host", f.Host, "flag --host", &c.Host)
	c.set("agent", f.Agent, "flag --agent", &c.Agent)
	c.set("system", f.System, "flag --system", &c.System)
	c.set("theme", f.Theme, "flag --theme", &c.Theme)
	c.set("db", f.DB, "flag --db", &c.DB)
	if f.Tools != nil {
		c.Tools = tools.ParseList(*f.Tools)
		c.sources["tools"] = "flag --tools"
	}
	if f.NumCtx != 0 {
		c.Options.NumCtx = f.NumCtx
		c.sources["options.num_ctx"] = "flag --num-ctx"
	}
	if f.Temperature != nil {
		t := *f.Temperature
		c.Options.Temperature = &t
		c.sources["options.temperature"] = "flag --temperature"
	}
	if f.Seed != nil {
		n := *f.Seed
		c.Options.Seed = &n
		c.sources["options.seed"] = "flag --seed"
	}
	c.set("options.think", f.Think, "flag --think", &c.Options.Think)
	if f.MaxTurns != 0 {
		c.MaxTurns = f.MaxTurns
		c.sources["max_turns"] = "flag --max-turns"
	}
}

// SessionWindowSource is how the configuration names a window restored
// from a session.
const SessionWindowSource = "the window set for the session"

// UseSessionWindow makes a session's saved window options.num_ctx, unless
// --num-ctx set one: a session goes on with the window it was given.
func (c *Config) UseSessionWindow(n int) {
	if n <= 0 || c.Source("options.num_ctx") == "flag --num-ctx" {
		return
	}
	c.Options.NumCtx = n
	c.sources["options.num_ctx"] = SessionWindowSource
}

// PersonWindow is the window the person set for this run itself
// (--num-ctx, or a session's saved one), which a session records; 0 when
// the window comes from the config file, the environment or the server.
func (c *Config) PersonWindow() int {
	switch c.Source("options.num_ctx") {
	case "flag --num-ctx", SessionWindowSource:
		return c.Options.NumCtx
	}
	return 0
}

// NumCtxSource says where options.num_ctx came from, in words for the
// Context tab ("" when it is not set).
func (c *Config) NumCtxSource() string {
	if c.Options.NumCtx == 0 {
		return ""
	}
	src := c.Source("options.num_ctx")
	if strings.HasPrefix(src, "config ") {
		return "num_ctx in " + src
	}
	return src
}

// EngineOptions converts [options] for the engine.
func (c *Config) EngineOptions() (engine.Options, error) {
	o := engine.Options{
		NumCtx: c.Options.NumCtx, NumPredict: c.Options.NumPredict,
		Temperature: c.Options.Temperature, Seed: c.Options.Seed, Think: c.Options.Think,
	}
	if c.Options.KeepAlive != "" {
		d, err := time.ParseDuration(c.Options.KeepAlive)
		if err != nil {
			return o, fmt.Errorf("options.keep_alive %q is not a duration (use e.g. \"5m\" or \"1h\")", c.Options.KeepAlive)
		}
		o.KeepAlive = d
	}
	return o, nil
}

// ViewOptions are what the model's view of a conversation is built with:
// the window the person set (if any) and the [context] shares.
func (c *Config) ViewOptions() agent.ViewOptions {
	return agent.ViewOptions{
		NumCtx: c.Options.NumCtx, NumCtxSource: c.NumCtxSource(), NumPredict: c.Options.NumPredict,
		ResultShare: c.Context.ToolResultShare, CompactAt: c.Context.CompactAt,
	}
}

// PriceFor returns the price of a model (zero when not configured). A price
// set for "qwen3" also applies to "qwen3:8b".
func (c *Config) PriceFor(model string) Price {
	if p, ok := c.Prices[model]; ok {
		return p
	}
	if base, _, found := strings.Cut(model, ":"); found {
		return c.Prices[base]
	}
	return Price{}
}

// HostOrDefault returns the configured host or the engine's default
// (Ollama's, or llama-server's for the openai engine).
func (c *Config) HostOrDefault() string {
	if c.Host == "" {
		return c.defaultHost()
	}
	return c.Host
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
