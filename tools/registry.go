package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/memory"
)

// Factory builds a tool from its dependencies. A factory must succeed when a
// dependency is missing (a tool without its engine or scheduler still has a
// spec to list and describe) and fail at Execute with a clear message instead.
type Factory func(Deps) (Tool, error)

// Settings are the user's per-tool overrides from the config file.
type Settings struct {
	// RequiresConfirmation, when set, replaces the spec's value.
	RequiresConfirmation *bool `toml:"confirm" json:"confirm,omitempty"`
	// TimeoutSeconds, when set and positive, replaces the spec's timeout.
	TimeoutSeconds *float64 `toml:"timeout" json:"timeout,omitempty"`
	// AllowedDirs restricts file tools to these directories.
	AllowedDirs []string `toml:"allowed_dirs" json:"allowed_dirs,omitempty"`
	// PassEnv names variables of jarvis's environment that shell_exec's
	// commands get besides the clean environment's.
	PassEnv []string `toml:"pass_env" json:"pass_env,omitempty"`
	// Sandbox runs shell_exec's commands in Linux namespaces (no
	// network, their own process tree).
	Sandbox bool `toml:"sandbox" json:"sandbox,omitempty"`
	// Description, when set, replaces what the model reads about the tool,
	// and Parameters replaces the descriptions of the named parameters:
	// both the schema a native tool call is offered with and the text of
	// BuildToolDescriptions change, so a person can measure whether other
	// wording helps a model (jarvis eval).
	Description *string           `toml:"description" json:"description,omitempty"`
	Parameters  map[string]string `toml:"parameters" json:"parameters,omitempty"`
}

// rewordsSpec reports whether s changes what the model reads.
func (s Settings) rewordsSpec() bool { return s.Description != nil || len(s.Parameters) > 0 }

// Deps are what factories may need: the same for the built-in tools and
// for those a program registers (package sdk), filled by the application
// layer (app) from the configuration and the run. A nil dependency is
// allowed: the tools that need it fail at Execute with a message saying
// what is missing.
type Deps struct {
	// Settings holds per-tool overrides, keyed by tool name.
	Settings map[string]Settings
	// Engine and Model are where a tool's own questions to a model go
	// (the llm tool's sub-queries): the configured model on its server;
	// Options are the configured generation options. nil and "" when no
	// model is configured.
	Engine  engine.InferenceEngine
	Model   string
	Options engine.Options
	// Memory is the long-term memory store (nil: none).
	Memory *memory.Store
	// Bus receives the events of the run the tool is built for, for a
	// tool that has news of its own to publish (nil: none).
	Bus events.Publisher
	// WorkDir is the working directory of the tools built: where a
	// relative path in a call resolves, what a file tool reaches without
	// asking, where commands and git run. "" is the process's own; an
	// evaluation gives each case its scratch directory, so a case never
	// acts in the person's.
	WorkDir string
}

// For returns the settings for one tool (zero when none).
func (d Deps) For(name string) Settings { return d.Settings[name] }

// Registry maps tool names to factories, so `--tools calculator,think` can
// build tools anywhere with the same dependencies.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: make(map[string]Factory)} }

// Register adds a factory under name. Registering a name twice is a
// programming error and is reported as one.
func (r *Registry) Register(name string, f Factory) error {
	if name == "" || f == nil {
		return fmt.Errorf("register tool: empty name or nil factory")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("register tool %q: already registered", name)
	}
	r.factories[name] = f
	return nil
}

// Unregister removes name (MCP tools come and go with their servers).
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	delete(r.factories, name)
	r.mu.Unlock()
}

// Names returns every registered name, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Has reports whether name is registered.
func (r *Registry) Has(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.factories[name]
	return ok
}

// UnknownToolError names a tool that is not registered and lists those that
// are, so the person (or model) can correct the name.
type UnknownToolError struct {
	Name  string
	Known []string
	// Pattern says Name is a pattern that matched no tool.
	Pattern bool
}

func (e *UnknownToolError) Error() string {
	if e.Pattern {
		return fmt.Sprintf("no tool matches %q; known tools: %s", e.Name, strings.Join(e.Known, ", "))
	}
	msg := fmt.Sprintf("unknown tool %q", e.Name)
	if s := Suggest(e.Name, e.Known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; known tools: " + strings.Join(e.Known, ", ")
}

// Build builds one tool by name and applies the user's overrides for it.
func (r *Registry) Build(name string, deps Deps) (Tool, error) {
	r.mu.RLock()
	f, ok := r.factories[name]
	r.mu.RUnlock()
	if !ok {
		return nil, &UnknownToolError{Name: name, Known: r.Names()}
	}
	t, err := f(deps)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	s := deps.For(name)
	if err := CheckSettings(t.Spec(), s); err != nil {
		return nil, err
	}
	return ApplySettings(t, s), nil
}

// CheckSettings reports settings that cannot apply to the tool: a
// description for a parameter it does not take (a typo would otherwise
// leave the model reading the old words while the person believes they
// changed), or an empty description.
func CheckSettings(spec Spec, s Settings) error {
	if s.Description != nil && strings.TrimSpace(*s.Description) == "" {
		return fmt.Errorf("tool %s: the description override is empty; remove it to keep the tool's own", spec.Name)
	}
	if len(s.Parameters) == 0 {
		return nil
	}
	var known []string
	if spec.Parameters != nil {
		known = orderedProperties(spec.Parameters)
	}
	names := make([]string, 0, len(s.Parameters))
	for name := range s.Parameters {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			takes := "no parameters"
			if len(known) > 0 {
				takes = "only " + strings.Join(known, ", ")
			}
			msg := fmt.Sprintf("tool %s has no parameter %q to describe (it takes %s)", spec.Name, name, takes)
			if sg := Suggest(name, known); sg != "" {
				msg += fmt.Sprintf("; did you mean %q?", sg)
			}
			return errors.New(msg)
		}
		if strings.TrimSpace(s.Parameters[name]) == "" {
			return fmt.Errorf("tool %s: the description override of parameter %q is empty; remove it to keep the tool's own", spec.Name, name)
		}
	}
	return nil
}

// BuildList builds the named tools in order; a pattern ("fs__*", see
// IsPattern) stands for the tools it matches. An unknown name, or a
// pattern that matches nothing, fails the whole list: a tool silently
// missing from a run is worse than an error.
func (r *Registry) BuildList(names []string, deps Deps) ([]Tool, error) {
	for _, n := range names {
		if err := r.checkPattern(n); err != nil {
			return nil, err
		}
	}
	names = r.Expand(names)
	out := make([]Tool, 0, len(names))
	for _, n := range names {
		t, err := r.Build(n, deps)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// IsPattern reports whether an entry of a tool list is a pattern rather
// than a name: it holds *, ? or [, which no tool name does (they are
// letters, digits, _ and -). "fs__*" is every tool of the MCP server fs.
func IsPattern(entry string) bool { return strings.ContainsAny(entry, "*?[") }

// MatchPattern reports whether the tool name matches the pattern (the
// syntax of path.Match; a tool name has no /). A malformed pattern
// matches nothing; CheckPattern says what is wrong with it.
func MatchPattern(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return ok && err == nil
}

// CheckPattern says what is wrong with a pattern of a tool list, nil when
// nothing is.
func CheckPattern(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("%q is not a valid tool pattern (* matches any run of characters, ? one, [abc] one of those)", pattern)
	}
	return nil
}

// Expand replaces each pattern of a tool list by the registered tools it
// matches, in name order, keeps names as they are (registered or not), and
// drops repeats.
func (r *Registry) Expand(entries []string) []string {
	if !slices.ContainsFunc(entries, IsPattern) {
		return entries
	}
	all := r.Names()
	out := make([]string, 0, len(entries))
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, e := range entries {
		if !IsPattern(e) {
			add(e)
			continue
		}
		for _, n := range all {
			if MatchPattern(e, n) {
				add(n)
			}
		}
	}
	return out
}

// Check checks the entries of a tool list against the registry: each
// name must be registered, and each pattern well formed and matching a
// registered tool. The error for a name or pattern that selects nothing
// is a *UnknownToolError.
func (r *Registry) Check(entries []string) error {
	for _, e := range entries {
		if !IsPattern(e) && !r.Has(e) {
			return &UnknownToolError{Name: e, Known: r.Names()}
		}
		if err := r.checkPattern(e); err != nil {
			return err
		}
	}
	return nil
}

// checkPattern fails for a malformed pattern, or one that matches no
// registered tool.
func (r *Registry) checkPattern(entry string) error {
	if !IsPattern(entry) {
		return nil
	}
	if err := CheckPattern(entry); err != nil {
		return err
	}
	if !slices.ContainsFunc(r.Names(), func(n string) bool { return MatchPattern(entry, n) }) {
		return &UnknownToolError{Name: entry, Known: r.Names(), Pattern: true}
	}
	return nil
}

// BuildAll builds every registered tool, sorted by name.
func (r *Registry) BuildAll(deps Deps) ([]Tool, error) { return r.BuildList(r.Names(), deps) }

// ParseList splits a comma-separated tool list ("calculator, think"),
// dropping blanks and repeats. "none" and "" mean no tools.
func ParseList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		n := strings.TrimSpace(part)
		if n == "" || n == "none" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// ApplySettings returns t with the user's overrides applied to its spec:
// confirmation, timeout, and the descriptions the model reads (t itself
// when there are none). A parameter the tool does not take is left out
// here; CheckSettings reports it.
func ApplySettings(t Tool, s Settings) Tool {
	if s.RequiresConfirmation == nil && (s.TimeoutSeconds == nil || *s.TimeoutSeconds <= 0) && !s.rewordsSpec() {
		return t
	}
	spec := t.Spec()
	if s.RequiresConfirmation != nil {
		if spec.RequiresConfirmation && !*s.RequiresConfirmation {
			spec.WaivedBy = "[tool." + spec.Name + "] confirm = false"
		}
		spec.RequiresConfirmation = *s.RequiresConfirmation
	}
	if s.TimeoutSeconds != nil && *s.TimeoutSeconds > 0 {
		spec.TimeoutSeconds = *s.TimeoutSeconds
	}
	if s.Description != nil && strings.TrimSpace(*s.Description) != "" {
		spec.Description = *s.Description
	}
	if len(s.Parameters) > 0 && spec.Parameters != nil {
		// Specs share schemas (the memory search tools share one), so the
		// schema is copied before a description in it changes.
		params := spec.Parameters.CloneSchemas()
		for name, desc := range s.Parameters {
			if _, known := params.Properties[name]; !known || strings.TrimSpace(desc) == "" {
				continue
			}
			p := params.Properties[name]
			if p == nil {
				p = &jsonschema.Schema{} // accepts anything, as nil does
				params.Properties[name] = p
			}
			p.Description = desc
		}
		spec.Parameters = params
	}
	return &overridden{Tool: t, spec: spec}
}

type overridden struct {
	Tool
	spec Spec
}

func (o *overridden) Spec() Spec { return o.spec }

func (o *overridden) Execute(ctx context.Context, args Args) Result { return o.Tool.Execute(ctx, args) }

// Unwrap returns the tool under the overrides, for callers that need its
// concrete type (a session closing its REPL, say).
func (o *overridden) Unwrap() Tool { return o.Tool }

// Suggest returns the known name closest to name when it is close enough
// to be a likely typo ("" otherwise), for messages that say "did you
// mean ...?".
func Suggest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := levenshtein(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
