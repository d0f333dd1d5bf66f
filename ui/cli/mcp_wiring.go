package cli

import (
	"context"
	"errors"
	"io"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

// mcpConfig is the [[mcp.servers]] part of the configuration, validated by
// config.Load.
func (a *cmdline) mcpConfig() (mcp.Config, error) {
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return mcp.Config{}, err
	}
	return cfg.MCP, nil
}

// needsMCP reports whether a command using names (none: every tool) needs
// the MCP servers: MCP tools are named SERVER__TOOL, so a list of built-in
// names never starts a server.
func needsMCP(cfg mcp.Config, names []string) bool { return app.NeedsMCP(cfg, names) }

// startMCP starts the configured MCP servers and keeps their tools
// registered in the environment's registry. wait makes it wait (bounded)
// until each server is ready or has failed, for commands that use the
// tools at once; the TUI does not wait: tools appear as servers come up.
// The servers stop when the command ends.
func (a *cmdline) startMCP(ctx context.Context, env *environment, wait bool, logTo io.Writer) (*mcp.Manager, error) {
	return a.startMCPFor(ctx, env, nil, wait, logTo)
}

// startMCPFor is startMCP for the servers only (nil: all; see
// app.MCPServersFor): a command that uses one server's tools waits for
// that server alone.
func (a *cmdline) startMCPFor(ctx context.Context, env *environment, only []string, wait bool, logTo io.Writer) (*mcp.Manager, error) {
	if m := env.w.MCP(); m != nil {
		return m, nil
	}
	o := app.MCPOptions{Only: only, Wait: wait, Log: logTo, ClientVersion: versionString()}
	if wait && isTerminal(a.io.Err) && logTo != nil && logTo != io.Discard {
		p := newMCPProgress(a.io.Err)
		o.Progress = func(starting []mcp.ServerStatus) { p.update(starting, false) }
	}
	m, err := env.w.StartMCP(ctx, o)
	var ce *app.ConfigError
	if errors.As(err, &ce) {
		return nil, usageErr("%v", err)
	}
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { m.Close() })
	return m, nil
}
