package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// NeedsMCP reports whether using names (none: every tool) needs the MCP
// servers of cfg: MCP tools are named SERVER__TOOL, so a list of other
// names never starts a server.
func NeedsMCP(cfg mcp.Config, names []string) bool {
	if len(cfg.Servers) == 0 {
		return false
	}
	if len(names) == 0 {
		return true
	}
	// A pattern may match MCP tools ("fs__*", "*search*").
	return slices.ContainsFunc(names, func(n string) bool {
		return strings.Contains(n, mcp.Separator) || n == mcp.AdapterName || tools.IsPattern(n)
	})
}

// MCPServersFor names the MCP servers a tool list needs started: those
// its SERVER__TOOL names and SERVER__* patterns name, so that a command
// using one server's tools does not wait for every server to start. nil
// means all of them: for an empty list (every tool), the mcp_adapter
// (which reaches any server), or a pattern that may match any server's
// tools ("*search*", "*__fetch").
func MCPServersFor(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := []string{}
	for _, n := range names {
		if n == mcp.AdapterName {
			return nil
		}
		server, _, ok := strings.Cut(n, mcp.Separator)
		switch {
		case !ok && tools.IsPattern(n), ok && tools.IsPattern(server):
			return nil
		case ok && !slices.Contains(out, server):
			out = append(out, server)
		}
	}
	return out
}

// MCPOptions configure StartMCP.
type MCPOptions struct {
	// Only, when not nil, starts only the servers it names (see
	// MCPServersFor); the others' tools are not registered.
	Only []string
	// Wait waits until each server is ready or has failed (each server's
	// first attempt ends within its own start_timeout, which bounds the
	// wait), for callers that use the tools at once; otherwise tools
	// appear as servers come up.
	Wait bool
	// Progress, with Wait, is told while servers are still starting (a
	// terminal shows it), and once with none when the wait ends.
	Progress func(starting []mcp.ServerStatus)
	// Log receives notes for a person: each server that failed (once, not
	// at every retry), each tool a server offers that is left out, and why;
	// nil says nothing.
	Log io.Writer
	// ClientVersion is this program's version, sent to the servers.
	ClientVersion string
}

// MCP returns the running MCP servers (nil before StartMCP).
func (e *Env) MCP() *mcp.Manager { return e.mcp.Load() }

// StartMCP starts the configured MCP servers once and keeps their tools
// registered in the registry. An error from mcp.New is the config's; with
// Wait, a ctx that ends first is ctx's error. The caller closes the
// manager when it is done (Close).
func (e *Env) StartMCP(ctx context.Context, o MCPOptions) (*mcp.Manager, error) {
	if m := e.MCP(); m != nil {
		return m, nil
	}
	var notes *mcpNotes
	logger := slog.New(slog.DiscardHandler)
	if o.Log != nil {
		notes = newMCPNotes(o.Log, o.Wait)
		logger = slog.New(notes)
	}
	cfg := e.Config.MCP
	if o.Only != nil {
		cfg.Servers = slices.DeleteFunc(slices.Clone(cfg.Servers), func(s mcp.ServerConfig) bool { return !slices.Contains(o.Only, s.Name) })
	}
	m, err := mcp.New(cfg, mcp.Options{Logger: logger, ClientVersion: o.ClientVersion})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	m.Start()
	if o.Wait {
		wctx, cancel := context.WithTimeout(ctx, m.StartWait())
		var err error
		if o.Progress != nil {
			err = m.WaitReadyReporting(wctx, o.Progress)
			o.Progress(nil)
		} else {
			err = m.WaitReady(wctx)
		}
		cancel()
		if err != nil && ctx.Err() != nil {
			m.Close()
			return nil, ctx.Err()
		}
		for _, s := range m.Status() {
			if notes == nil {
				break
			}
			switch s.State {
			case mcp.StateFailed:
				notes.say("failed "+s.Name, fmt.Sprintf("MCP server %s is not available, so its tools are left out: %s", s.Name, s.Reason))
			case mcp.StateStarting:
				why := s.Waiting(time.Now())
				if s.Restarts > 0 && s.LastError != "" {
					// It failed and is being started again.
					why = "it failed: " + s.LastError + "; jarvis is starting it again"
				}
				notes.say("failed "+s.Name, fmt.Sprintf("MCP server %s is not available, so its tools are left out (%s)", s.Name, why))
			}
			for _, skipped := range s.Skipped {
				notes.say("skipped "+s.Name+" "+skipped, fmt.Sprintf("MCP server %s: a tool is left out: %s", s.Name, skipped))
			}
		}
		notes.speak()
	}
	m.Register(e.Registry)
	e.mcp.Store(m)
	return m, nil
}

// ConfigError is an error in the configuration found while wiring (the
// command line reports it as a wrong use).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// mcpNotes turns what the MCP servers report (the manager's log) into
// notes for a person, each said once: a server's failure, not every retry
// after it; a tool left out; a problem. While StartMCP waits for the
// servers it holds its tongue, since the notes after the wait say what
// came of each server; then it speaks.
type mcpNotes struct {
	shared *notesState
	attrs  []slog.Attr
}

type notesState struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	said  map[string]bool
}

func newMCPNotes(w io.Writer, quiet bool) *mcpNotes {
	return &mcpNotes{shared: &notesState{w: w, quiet: quiet, said: map[string]bool{}}}
}

// say writes a note once per key.
func (n *mcpNotes) say(key, text string) {
	st := n.shared
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.said[key] {
		return
	}
	st.said[key] = true
	fmt.Fprintln(st.w, "note: "+safe.Text(text))
}

// speak ends the quiet of the wait.
func (n *mcpNotes) speak() {
	n.shared.mu.Lock()
	n.shared.quiet = false
	n.shared.mu.Unlock()
}

func (n *mcpNotes) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (n *mcpNotes) Handle(_ context.Context, r slog.Record) error {
	n.shared.mu.Lock()
	quiet := n.shared.quiet
	n.shared.mu.Unlock()
	attr := map[string]string{}
	for _, a := range n.attrs {
		attr[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		attr[a.Key] = a.Value.String()
		return true
	})
	server := attr["mcp_server"]
	var key, text string
	switch r.Message {
	case "mcp server ready":
		// Back up: a later failure is news again.
		n.shared.mu.Lock()
		delete(n.shared.said, "failed "+server)
		n.shared.mu.Unlock()
		return nil
	case "mcp server failed":
		key, text = "failed "+server, fmt.Sprintf("MCP server %s failed: %s; jarvis starts it again in the background, and its tools are back when it is", server, attr["reason"])
	case "mcp tool skipped":
		key, text = "skipped "+server+" "+attr["reason"], fmt.Sprintf("MCP server %s: a tool is left out: %s", server, attr["reason"])
	case "mcp server problem":
		key, text = "problem "+server+" "+attr["error"], fmt.Sprintf("MCP server %s: %s", server, attr["error"])
	case "mcp tool not registered":
		key, text = "unregistered "+attr["tool"], fmt.Sprintf("MCP tool %s is left out: %s", attr["tool"], attr["error"])
	default:
		return nil
	}
	if quiet {
		return nil
	}
	n.say(key, text)
	return nil
}

func (n *mcpNotes) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &mcpNotes{shared: n.shared, attrs: append(slices.Clip(n.attrs), attrs...)}
}

func (n *mcpNotes) WithGroup(string) slog.Handler { return n }
