package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// A grant is a person's "yes" that outlives one call: for the rest of a
// session, or always (kept in the database). It covers exactly what the
// dialog named when the person gave it, its Scope, and nothing more:
//
//   - a file tool: the one directory of the path asked about (its files,
//     not its subdirectories); never "anywhere";
//   - http_request: one host; channel_send: one channel; the task tools:
//     one task;
//   - tools whose danger is the whole argument (code_interpreter, repl,
//     shell_exec, schedule_task, the config's commands): the exact
//     arguments, for the session; a tool-wide grant only when the person
//     picks it explicitly (a second question);
//   - everything else (an MCP server's tool, web_search): the tool.
//
// A tool-wide grant is only ever given by an explicit choice (the second
// question, the Tools tab's A with its question, an approve list), and it
// never covers a file tool: a directory is never widened to "anywhere".
// A tool says what its calls' scope is by implementing Scoper. Grants
// made before scopes existed cover the whole tool, file tools excepted.

// ScopeKind is what kind of thing a grant is limited to.
type ScopeKind string

// Scope kinds.
const (
	// ScopeTool: the whole tool, whatever the arguments.
	ScopeTool ScopeKind = ""
	// ScopeDir: files directly in one directory (Value, resolved).
	ScopeDir ScopeKind = "dir"
	// ScopeHost: requests to one host (Value, lower case, with a port
	// when it is not the scheme's).
	ScopeHost ScopeKind = "host"
	// ScopeChannel: messages to one configured channel.
	ScopeChannel ScopeKind = "channel"
	// ScopeTask: one scheduled task (its full id).
	ScopeTask ScopeKind = "task"
	// ScopeArgs: these exact arguments (Value is their digest).
	ScopeArgs ScopeKind = "args"
)

// Noun names what one grant of the kind covers ("directory", "host"),
// for "NAME is approved per directory".
func (k ScopeKind) Noun() string {
	switch k {
	case ScopeDir:
		return "directory"
	case ScopeTool, ScopeArgs:
		return "call"
	}
	return string(k)
}

// Scope is what a grant covers beyond the tool's name.
type Scope struct {
	Kind  ScopeKind `json:"kind,omitempty"`
	Value string    `json:"value,omitempty"`
	// Words complete "allow ..." and "always allow ...": "reads in /etc",
	// "requests to api.github.com", "this exact code". Empty for the
	// whole tool, which is named by the tool.
	Words string `json:"words,omitempty"`
}

// Of names, in words, what a grant of tool in this scope covers: the
// scope's words ("reads in /etc"), or the tool's name for the whole tool.
func (s Scope) Of(tool string) string {
	if s.Words != "" {
		return s.Words
	}
	return tool
}

// Wide reports whether the scope is the whole tool.
func (s Scope) Wide() bool { return s.Kind == ScopeTool }

// WideGrantable reports whether a tool-wide grant may cover calls of this
// scope: any but a directory, which is never widened to "anywhere" (the
// file tools' reach is the working directory and what the person grants
// directory by directory, or allowed_dirs).
func (s Scope) WideGrantable() bool { return s.Kind != ScopeDir }

// AlwaysScope is what "always" grants for a call of this scope: the
// scope, except that exact arguments are not worth remembering across
// sessions, so "always" there means the whole tool (asked about
// separately, see AlwaysIsWide).
func (s Scope) AlwaysScope() Scope {
	if s.Kind == ScopeArgs {
		return Scope{}
	}
	return s
}

// AlwaysIsWide reports whether "always" for this call grants the whole
// tool while "for this session" grants less: the dialog then asks again
// before giving it.
func (s Scope) AlwaysIsWide() bool { return s.Kind == ScopeArgs }

// Scoper is implemented by tools whose grants are narrower than the tool:
// GrantScope names the scope a call with these arguments falls in. It is
// called with arguments that passed the schema; it must be cheap and must
// not fail (a scope it cannot work out is the exact arguments, the
// narrowest). Its Kind must not depend on the arguments: GrantKind reads
// it from empty ones.
type Scoper interface {
	GrantScope(args Args) Scope
}

// GrantKind is the kind of scope t's grants have (ScopeTool for a tool
// without a Scoper), so a front end can say what a grant of the tool would
// cover before any call is made.
func GrantKind(t Tool) ScopeKind {
	s, ok := under[Scoper](t)
	if !ok {
		return ScopeTool
	}
	return scopeFor(s, Args{}).Kind
}

// ExactArguments is the scope of these exact arguments, for tools whose
// danger is the whole argument. what names them in words ("this exact
// code", "this exact command").
func ExactArguments(args Args, what string) Scope {
	b, err := json.Marshal(map[string]any(args)) // map keys are sorted: one text per value
	if err != nil {
		b = []byte("unencodable")
	}
	sum := sha256.Sum256(b)
	return Scope{Kind: ScopeArgs, Value: hex.EncodeToString(sum[:12]), Words: what}
}

// scopeFor runs a Scoper; one that panics scopes the exact arguments.
func scopeFor(s Scoper, args Args) (sc Scope) {
	defer func() {
		if recover() != nil {
			sc = ExactArguments(args, "these exact arguments")
		}
	}()
	sc = s.GrantScope(args)
	sc.Words = printable(sc.Words)
	return sc
}

// Grant is one tool allowed within one scope.
type Grant struct {
	Tool  string `json:"tool"`
	Scope Scope  `json:"scope"`
}

// Key identifies the grant: "TOOL" for the whole tool, "TOOL KIND:VALUE"
// otherwise. `jarvis approvals revoke` takes the part after the tool.
func (g Grant) Key() string {
	if g.Scope.Wide() {
		return g.Tool
	}
	return g.Tool + " " + g.Scope.Ref()
}

// Ref is the scope as `approvals list` shows it and `approvals revoke`
// takes it: "dir:/etc", "host:api.github.com", "any" for the whole tool.
func (s Scope) Ref() string {
	if s.Wide() {
		return "any"
	}
	return string(s.Kind) + ":" + s.Value
}

// ParseRef reads a Ref back; ok is false for text that is not one.
func ParseRef(ref string) (kind ScopeKind, value string, ok bool) {
	ref = strings.TrimSpace(ref)
	if ref == "any" || ref == "" {
		return ScopeTool, "", true
	}
	k, v, found := strings.Cut(ref, ":")
	switch ScopeKind(k) {
	case ScopeDir, ScopeHost, ScopeChannel, ScopeTask, ScopeArgs:
		return ScopeKind(k), v, found && v != ""
	}
	return "", "", false
}

// Covers reports whether the grant lets a call of tool in scope run.
func (g Grant) Covers(tool string, scope Scope) bool {
	if g.Tool != tool {
		return false
	}
	if g.Scope.Wide() {
		return scope.WideGrantable()
	}
	return g.Scope.Kind == scope.Kind && g.Scope.Value == scope.Value
}

// Describe says what the grant covers in words: "file_read: reads in
// /etc", "code_interpreter: any call".
func (g Grant) Describe() string {
	if g.Scope.Wide() || g.Scope.Words == "" {
		if g.Scope.Wide() {
			return g.Tool + ": any call"
		}
		return g.Tool + ": " + g.Scope.Ref()
	}
	return g.Tool + ": " + g.Scope.Words
}

// Approvals are the grants a person gave for the rest of a session. They
// are kept apart from the Executor so that a session keeps them when its
// tool set changes and a new executor is built.
type Approvals struct {
	mu     sync.RWMutex
	grants map[string]Grant
}

// NewApprovals returns an empty set.
func NewApprovals() *Approvals { return &Approvals{grants: map[string]Grant{}} }

// Grant records g for the session.
func (a *Approvals) Grant(g Grant) {
	a.mu.Lock()
	a.grants[g.Key()] = g
	a.mu.Unlock()
}

// AllowTool grants the whole tool for the session (what a person did
// when they picked the tool-wide option, or a front end's own approval
// list).
func (a *Approvals) AllowTool(name string) { a.Grant(Grant{Tool: name}) }

// Revoke forgets every session grant of a tool.
func (a *Approvals) Revoke(name string) {
	a.mu.Lock()
	for k, g := range a.grants {
		if g.Tool == name {
			delete(a.grants, k)
		}
	}
	a.mu.Unlock()
}

// Match returns the grant that lets a call of tool in scope run.
func (a *Approvals) Match(tool string, scope Scope) (Grant, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if g, ok := a.grants[Grant{Tool: tool, Scope: scope}.Key()]; ok && g.Covers(tool, scope) {
		return g, true
	}
	if g, ok := a.grants[tool]; ok && g.Covers(tool, scope) {
		return g, true
	}
	return Grant{}, false
}

// Allowed reports whether the whole tool was granted for the session.
func (a *Approvals) Allowed(name string) bool {
	_, ok := a.Match(name, Scope{})
	return ok
}

// List returns the session's grants, by key.
func (a *Approvals) List() []Grant {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]Grant, 0, len(a.grants))
	for _, g := range a.grants {
		out = append(out, g)
	}
	slices.SortFunc(out, func(x, y Grant) int { return strings.Compare(x.Key(), y.Key()) })
	return out
}
