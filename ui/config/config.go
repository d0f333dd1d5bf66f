// Package config reads jarvis's configuration once, at the edge: defaults,
// then the TOML file, then environment variables, then flags, each level
// overriding the one before. It remembers where every value came from so
// `jarvis config show` can say why a value is what it is, and it reports a
// bad file with the file, line and key.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/channels"
	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/command"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
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

	sources map[string]string
	path    string
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
	// ToolNames are the names of the tools besides the commands (built in
	// and registered by the program), to check [tool.NAME] sections and
	// command names against (nil: not checked).
	ToolNames []string
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
// JARVIS_CONFIG is an error, as is any problem inside a file.
func Load(f Flags) (*Config, error) {
	c := &Config{
		Tools:    append([]string(nil), DefaultTools...),
		Agent:    DefaultAgent,
		MaxTurns: DefaultMaxTurns,
		Theme:    DefaultTheme,
		sources:  map[string]string{},
	}
	for _, k := range []string{"model", "engine", "host", "api_key", "agent", "tools", "system", "theme", "max_turns", "db"} {
		c.sources[k] = "default"
	}
	path, explicit := f.ConfigPath, f.ConfigPath != ""
	if !explicit {
		if env := os.Getenv("JARVIS_CONFIG"); env != "" {
			path, explicit = env, true
		} else {
			path = DefaultPath()
		}
	}
	if err := c.loadFile(path, explicit); err != nil {
		return nil, err
	}
	c.applyEngine(f.Engine)
	c.applyEnv()
	c.applyFlags(f)
	if err := c.validate(f.ToolNames); err != nil {
		return nil, err
	}
	return c, nil
}

// Path is the config file that was read ("" when none was).
func (c *Config) Path() string { return c.path }

// Source says where a top-level value came from.
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

// FileError is a problem in the config file, located for the person to fix.
type FileError struct {
	Path string
	Line int
	Key  string
	Msg  string
}

func (e *FileError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("config %s: key %q: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("config %s: %s", loc, e.Msg)
}

var lineInMsg = regexp.MustCompile(`line (\d+)`)

func (c *Config) loadFile(path string, explicit bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return nil
		}
		return fmt.Errorf("cannot read config file %s: %w", path, err)
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		fe := &FileError{Path: path, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			fe.Line, fe.Key, fe.Msg = pe.Position.Line, pe.LastKey, pe.Message
		} else if m := lineInMsg.FindStringSubmatch(err.Error()); m != nil {
			fe.Line, _ = strconv.Atoi(m[1])
		}
		return fe
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := undecoded[0].String()
		return &FileError{Path: path, Line: findKeyLine(string(data), undecoded[0]), Key: key,
			Msg: "unknown setting; see the README's configuration section for the keys jarvis reads"}
	}
	c.path = path
	for _, k := range md.Keys() {
		if len(k) == 1 {
			c.sources[k[0]] = "config " + path
		}
	}
	return nil
}

// lineOf returns the line of the file where text starts a line (0: not
// found or no file).
func (c *Config) lineOf(text string) int {
	if c.path == "" {
		return 0
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return 0
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), text) {
			return i + 1
		}
	}
	return 0
}

// findKeyLine finds the line where the last part of key is set, for
// messages about keys the decoder cannot point at.
func findKeyLine(text string, key toml.Key) int {
	last := key[len(key)-1]
	re := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(last) + `"?\s*=`)
	for i, line := range strings.Split(text, "\n") {
		if re.MatchString(line) || strings.TrimSpace(line) == "["+key.String()+"]" {
			return i + 1
		}
	}
	return 0
}

func (c *Config) set(key, value, source string, dst *string) {
	if value == "" {
		return
	}
	*dst = value
	c.sources[key] = source
}

func (c *Config) applyEnv() {
	c.set("model", os.Getenv("JARVIS_MODEL"), "env JARVIS_MODEL", &c.Model)
	if c.EngineName() == EngineOllama {
		// Ollama's variable: it names no server of another kind.
		c.set("host", os.Getenv("OLLAMA_HOST"), "env OLLAMA_HOST", &c.Host)
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
}

// NumCtxSource says where options.num_ctx came from, in words for the
// Context tab ("" when it is not set).
func (c *Config) NumCtxSource() string {
	if c.Options.NumCtx == 0 {
		return ""
	}
	if s, ok := c.sources["options.num_ctx"]; ok {
		return s
	}
	return "num_ctx in config " + c.path
}

func (c *Config) validate(toolNames []string) error {
	known := false
	for _, a := range Agents {
		known = known || a == c.Agent
	}
	if !known {
		return fmt.Errorf("unknown agent %q (from %s); choose one of: %s", c.Agent, c.Source("agent"), strings.Join(Agents, ", "))
	}
	if err := c.validateEngines(); err != nil {
		return err
	}
	if c.MaxTurns < 1 {
		return fmt.Errorf("max_turns must be at least 1 (got %d from %s)", c.MaxTurns, c.Source("max_turns"))
	}
	if _, err := c.EngineOptions(); err != nil {
		return err
	}
	if n := c.Options.NumCtx; n < 0 || n > 0 && n < 256 || n > 1<<24 {
		return fmt.Errorf("options.num_ctx (from %s) must be between 256 and %d tokens, got %d", orNone(c.NumCtxSource(), "config"), 1<<24, n)
	}
	if s := c.Context.ToolResultShare; s < 0 || s > 1 {
		return &FileError{Path: c.path, Key: "context.tool_result_share", Line: c.lineOf("tool_result_share"), Msg: fmt.Sprintf("must be a share of the window between 0 and 1 (e.g. 0.25), got %g", s)}
	}
	if s := c.Context.CompactAt; s < 0 || s > 1 {
		return &FileError{Path: c.path, Key: "context.compact_at", Line: c.lineOf("compact_at"), Msg: fmt.Sprintf("must be a share of the window between 0 and 1 (e.g. 0.85), got %g", s)}
	}
	if err := memorytools.CheckMaxFileBytes(c.Memory.MaxFileBytes); err != nil {
		return &FileError{Path: c.path, Key: "memory.max_file_bytes", Line: c.lineOf("max_file_bytes"), Msg: err.Error()}
	}
	if c.Images.MaxBytes < 0 {
		return &FileError{Path: c.path, Key: "images.max_bytes", Line: c.lineOf("max_bytes"), Msg: fmt.Sprintf("must be a size in bytes (e.g. 20971520 for 20 MiB), got %d", c.Images.MaxBytes)}
	}
	if t := c.Scheduler.Timeout; t != "" {
		if d, err := time.ParseDuration(t); err != nil || d < time.Second {
			return &FileError{Path: c.path, Key: "scheduler.timeout",
				Msg: fmt.Sprintf("%q is not a time limit of at least 1s; use a duration such as \"10m\" or \"1h\"", t)}
		}
	}
	if err := c.MCP.Validate(); err != nil {
		return fmt.Errorf("config %s: %w", c.path, err)
	}
	if err := c.validateCommands(toolNames); err != nil {
		return err
	}
	toolNames = c.withCommandNames(toolNames)
	for name := range c.Tool {
		// MCP tools (SERVER__TOOL) appear only once their server runs.
		if toolNames != nil && !strings.Contains(name, "__") && !slices.Contains(toolNames, name) {
			return &FileError{Path: c.path, Key: "tool." + name, Line: c.lineOf("[tool." + name + "]"),
				Msg: "no tool has that name; the tools are: " + strings.Join(toolNames, ", ")}
		}
	}
	c.Options.Think = strings.ToLower(strings.TrimSpace(c.Options.Think))
	switch c.Options.Think {
	case "", "true", "false", "low", "medium", "high":
	default:
		return fmt.Errorf("options.think must be true, false, low, medium or high (got %q)", c.Options.Think)
	}
	return nil
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

// Setting is one line of `jarvis config show`.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Settings lists the effective values with their sources, sorted by key.
func (c *Config) Settings() []Setting {
	tl := strings.Join(c.Tools, ",")
	if tl == "" {
		tl = "(none)"
	}
	out := []Setting{
		{"model", orNone(c.Model, "(ask the server: first model with tool support)"), c.Source("model")},
		{"host", c.HostOrDefault(), c.Source("host")},
		{"agent", c.Agent, c.Source("agent")},
		{"tools", tl, c.Source("tools")},
		{"system", orNone(c.System, "(agent default)"), c.Source("system")},
		{"theme", c.Theme, c.Source("theme")},
		{"max_turns", strconv.Itoa(c.MaxTurns), c.Source("max_turns")},
		{"db", orNone(c.DB, "(default path)"), c.Source("db")},
	}
	out = append(out, c.engineSettings()...)
	fileSrc := "config " + c.path
	if c.Options.NumCtx != 0 {
		out = append(out, Setting{"options.num_ctx", strconv.Itoa(c.Options.NumCtx), c.NumCtxSource()})
	} else {
		out = append(out, Setting{"options.num_ctx", "(the server's window for the model, else min(its maximum, 4096))", "default"})
	}
	if c.Context.ToolResultShare != 0 {
		out = append(out, Setting{"context.tool_result_share", strconv.FormatFloat(c.Context.ToolResultShare, 'g', -1, 64), fileSrc})
	}
	if c.Context.CompactAt != 0 {
		out = append(out, Setting{"context.compact_at", strconv.FormatFloat(c.Context.CompactAt, 'g', -1, 64), fileSrc})
	}
	if c.Options.NumPredict != 0 {
		out = append(out, Setting{"options.num_predict", strconv.Itoa(c.Options.NumPredict), fileSrc})
	}
	if c.Options.Temperature != nil {
		out = append(out, Setting{"options.temperature", strconv.FormatFloat(*c.Options.Temperature, 'g', -1, 64), fileSrc})
	}
	if c.Options.Seed != nil {
		out = append(out, Setting{"options.seed", strconv.Itoa(*c.Options.Seed), fileSrc})
	}
	if c.Options.KeepAlive != "" {
		out = append(out, Setting{"options.keep_alive", c.Options.KeepAlive, fileSrc})
	}
	if c.Options.Think != "" {
		out = append(out, Setting{"options.think", c.Options.Think, fileSrc})
	}
	if c.Scheduler.Timeout != "" {
		out = append(out, Setting{"scheduler.timeout", c.Scheduler.Timeout, fileSrc})
	}
	models := make([]string, 0, len(c.Prices))
	for m := range c.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		p := c.Prices[m]
		out = append(out, Setting{"prices." + m, fmt.Sprintf("$%g in / $%g out per million tokens", p.Input, p.Output), fileSrc})
	}
	names := make([]string, 0, len(c.Tool))
	for n := range c.Tool {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := c.Tool[n]
		if s.RequiresConfirmation != nil {
			out = append(out, Setting{"tool." + n + ".confirm", strconv.FormatBool(*s.RequiresConfirmation), fileSrc})
		}
		if s.TimeoutSeconds != nil {
			out = append(out, Setting{"tool." + n + ".timeout", strconv.FormatFloat(*s.TimeoutSeconds, 'g', -1, 64) + "s", fileSrc})
		}
		if len(s.AllowedDirs) > 0 {
			out = append(out, Setting{"tool." + n + ".allowed_dirs", strings.Join(s.AllowedDirs, ", "), fileSrc})
		}
	}
	return out
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
