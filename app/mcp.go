package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

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
	return slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, mcp.Separator) || n == mcp.AdapterName })
}

// MCPOptions configure StartMCP.
type MCPOptions struct {
	// Wait waits until each server is ready or has failed (each server's
	// first attempt ends within its own start_timeout, which bounds the
	// wait), for callers that use the tools at once; otherwise tools
	// appear as servers come up.
	Wait bool
	// Progress, with Wait, is told while servers are still starting (a
	// terminal shows it), and once with none when the wait ends.
	Progress func(starting []mcp.ServerStatus)
	// Log receives the servers' warnings and a note for each server that
	// failed; nil discards them (errors only).
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
	logTo, level := o.Log, slog.LevelWarn
	if logTo == nil {
		logTo, level = io.Discard, slog.LevelError
	}
	m, err := mcp.New(e.Config.MCP, mcp.Options{
		Logger:        slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level})),
		ClientVersion: o.ClientVersion,
	})
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
			if o.Log == nil {
				break
			}
			switch s.State {
			case mcp.StateFailed:
				fmt.Fprintf(o.Log, "note: MCP server %s is not available, so its tools are left out: %s\n", s.Name, safe.Text(s.Reason))
			case mcp.StateStarting:
				fmt.Fprintf(o.Log, "note: MCP server %s has not finished starting, so its tools are left out (%s)\n", s.Name, safe.Text(s.Waiting(time.Now())))
			}
		}
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
