package mcp

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// DefaultTimeoutSeconds bounds one call to an MCP tool when the server's
// config sets no timeout: external tools may do long work (a build, a crawl).
const DefaultTimeoutSeconds = 600

// DefaultStartTimeoutSeconds bounds starting a server, the MCP handshake
// and its first tool listing when neither the server's start_timeout nor
// Options.ConnectTimeout says otherwise. A local server answers in well
// under a second and npx or uvx fetch a package in a few; a server that
// has said nothing for this long is stuck, or not an MCP server.
const DefaultStartTimeoutSeconds = 30

// maxServerNameLen leaves room for the tool part of SERVER__TOOL within the
// 64 characters model APIs accept for a function name.
const maxServerNameLen = 32

// Config is the [mcp] section of the config file.
type Config struct {
	Servers []ServerConfig `toml:"servers" json:"servers"`
}

// ServerConfig is one [[mcp.servers]] entry: a stdio server (command, args,
// env, cwd) or a streamable HTTP server (url, headers).
type ServerConfig struct {
	// Name identifies the server and prefixes its tools' names
	// (SERVER__TOOL), so it is limited to letters, digits, '_' and '-'.
	Name string `toml:"name" json:"name"`

	// Command and Args start a stdio server.
	Command string   `toml:"command" json:"command,omitempty"`
	Args    []string `toml:"args" json:"args,omitempty"`
	// Env is the server's own environment, on top of the few variables
	// every program needs that it inherits from jarvis (see baseEnv); the
	// rest of jarvis's environment, API keys included, is not passed on.
	// Values may refer to jarvis's environment as ${VAR}, so secrets need
	// not be written into the config file.
	Env map[string]string `toml:"env" json:"env,omitempty"`
	// Cwd is the server's working directory ("~" is expanded).
	Cwd string `toml:"cwd" json:"cwd,omitempty"`

	// URL is the endpoint of a streamable HTTP server.
	URL string `toml:"url" json:"url,omitempty"`
	// Headers are sent with every HTTP request (values may use ${VAR}).
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`

	// Trusted servers' tools run without asking for confirmation.
	Trusted bool `toml:"trusted" json:"trusted,omitempty"`
	// Timeout bounds one tool call, in seconds; 0 means DefaultTimeoutSeconds.
	Timeout float64 `toml:"timeout" json:"timeout,omitempty"`
	// StartTimeout bounds starting the server, the MCP handshake and the
	// first listing of its tools, in seconds; 0 means the manager's
	// ConnectTimeout (DefaultStartTimeoutSeconds unless set). A server
	// that installs itself on first use (npx -y, uvx) may need more.
	StartTimeout float64 `toml:"start_timeout" json:"start_timeout,omitempty"`
	// Enabled is true when unset: a server is listed to be used.
	Enabled *bool `toml:"enabled" json:"enabled,omitempty"`
}

// Transport names how jarvis talks to a server.
type Transport string

// Transports.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
)

// Transport reports whether s is a stdio or an HTTP server.
func (s ServerConfig) Transport() Transport {
	if s.URL != "" {
		return TransportHTTP
	}
	return TransportStdio
}

// IsEnabled reports whether the server should be started.
func (s ServerConfig) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// startTimeout is the effective bound on one start, def when the entry
// sets none.
func (s ServerConfig) startTimeout(def time.Duration) time.Duration {
	if s.StartTimeout <= 0 {
		return def
	}
	return time.Duration(s.StartTimeout * float64(time.Second))
}

// TimeoutSeconds is the effective per-call timeout.
func (s ServerConfig) TimeoutSeconds() float64 {
	if s.Timeout <= 0 {
		return DefaultTimeoutSeconds
	}
	return s.Timeout
}

// Target is what the server runs or reaches, for status displays: the
// command line or the URL. Header and environment values are left out and
// the URL is shown through RedactURL, because they often hold secrets.
func (s ServerConfig) Target() string {
	if s.Transport() == TransportHTTP {
		return RedactURL(s.URL)
	}
	parts := append([]string{s.Command}, s.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

var serverNameRE = lazyregexp.New(`^[A-Za-z0-9_-]+$`)

// Validate checks every server and returns all problems at once, each
// naming the entry and what to change.
func (c Config) Validate() error {
	var errs []error
	c.each(func(i int, _, problem string) {
		where := fmt.Sprintf("mcp.servers[%d]", i)
		if name := c.Servers[i].Name; name != "" {
			where += fmt.Sprintf(" (%q)", name)
		}
		errs = append(errs, fmt.Errorf("%s: %s", where, problem))
	})
	return errors.Join(errs...)
}

// Check reports the same problems as Validate, each with its key under
// [mcp] ("servers[1].command"), for a configuration that lists every
// problem of every section with its line. The problems say what to do,
// so the fix is empty.
func (c Config) Check(report func(key, problem, fix string)) {
	c.each(func(i int, field, problem string) {
		report(fmt.Sprintf("servers[%d].%s", i, field), problem, "")
	})
}

// each calls fn with every problem of every entry, in order: the index of
// the entry, the key the problem is about, and the problem.
func (c Config) each(fn func(i int, field, problem string)) {
	seen := map[string]int{}
	for i, s := range c.Servers {
		for _, p := range s.problems() {
			fn(i, p.field, p.msg)
		}
		if s.Name != "" {
			if j, dup := seen[s.Name]; dup {
				fn(i, "name", fmt.Sprintf("name %q is already used by mcp.servers[%d]; server names must be unique", s.Name, j))
			} else {
				seen[s.Name] = i
			}
		}
	}
}

// serverProblem is one thing wrong with an entry: the key it is about and
// a phrase that says what to do.
type serverProblem struct{ field, msg string }

// problems lists what is wrong with one entry.
func (s ServerConfig) problems() []serverProblem {
	var out []serverProblem
	add := func(field, format string, args ...any) {
		out = append(out, serverProblem{field, fmt.Sprintf(format, args...)})
	}
	switch {
	case s.Name == "":
		add("name", "name is required (it prefixes the server's tool names, as NAME__TOOL)")
	case !serverNameRE().MatchString(s.Name):
		add("name", "name %q may contain only letters, digits, '_' and '-' (it becomes part of tool names)", s.Name)
	case strings.Contains(s.Name, "__") || strings.HasSuffix(s.Name, "_"):
		add("name", "name %q must not contain \"__\" or end with '_': \"__\" separates server and tool in tool names", s.Name)
	case len(s.Name) > maxServerNameLen:
		add("name", "name %q is %d characters long; use at most %d so tool names stay within 64", s.Name, len(s.Name), maxServerNameLen)
	}
	switch {
	case s.Command == "" && s.URL == "":
		add("command", "set command (a stdio server) or url (a streamable HTTP server)")
	case s.Command != "" && s.URL != "":
		add("url", "set either command (a stdio server) or url (a streamable HTTP server), not both")
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("url", "url %q must be an absolute http:// or https:// URL", RedactURL(s.URL))
		}
		if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
			field := "cwd"
			switch {
			case len(s.Args) > 0:
				field = "args"
			case len(s.Env) > 0:
				field = "env"
			}
			add(field, "args, env and cwd apply to stdio servers (command) only; remove them or use command instead of url")
		}
	default:
		if len(s.Headers) > 0 {
			add("headers", "headers apply to HTTP servers (url) only; remove them or use url instead of command")
		}
	}
	if s.Timeout < 0 || math.IsNaN(s.Timeout) || math.IsInf(s.Timeout, 0) {
		add("timeout", "timeout must be a positive number of seconds, got %v (leave it out for %d)", s.Timeout, DefaultTimeoutSeconds)
	}
	if s.StartTimeout < 0 {
		add("start_timeout", "start_timeout must be a positive number of seconds, got %v (leave it out for %d)", s.StartTimeout, DefaultStartTimeoutSeconds)
	}
	return out
}

// Server returns the entry called name. An unknown name is an error that
// lists the configured ones.
func (c Config) Server(name string) (ServerConfig, error) {
	names := make([]string, 0, len(c.Servers))
	for _, s := range c.Servers {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return ServerConfig{}, fmt.Errorf("no MCP server named %q: no servers are configured (add [[mcp.servers]] entries to the config file)", name)
	}
	return ServerConfig{}, fmt.Errorf("no MCP server named %q; configured servers: %s", name, strings.Join(names, ", "))
}

// Names returns the configured server names in order.
func (c Config) Names() []string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Name
	}
	return out
}

var envRefRE = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} with the variable's value. An unset variable is an
// error: sending "Bearer " to a server would fail later and less clearly.
func expand(what, value string) (string, error) {
	var missing []string
	out := envRefRE().ReplaceAllStringFunc(value, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s refers to ${%s}, which is not set in jarvis's environment", what, strings.Join(missing, "}, ${"))
	}
	return out, nil
}

// expandHome turns a leading "~" into the home directory.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}
