package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/config"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// mcpConfig is the [[mcp.servers]] part of the configuration, validated by
// config.Load.
func (a *app) mcpConfig() (mcp.Config, error) {
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return mcp.Config{}, err
	}
	return cfg.MCP, nil
}

// needsMCP reports whether a command using names (none: every tool) needs
// the MCP servers: MCP tools are named SERVER__TOOL, so a list of built-in
// names never starts a server.
func needsMCP(cfg mcp.Config, names []string) bool {
	if len(cfg.Servers) == 0 {
		return false
	}
	if len(names) == 0 {
		return true
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "__") || n == mcp.AdapterName })
}

// startMCP starts the configured MCP servers and keeps their tools
// registered in the environment's registry. wait makes it wait (bounded)
// until each server is ready or has failed, for commands that use the
// tools at once; the TUI does not wait: tools appear as servers come up.
// The servers stop when the command ends.
func (a *app) startMCP(ctx context.Context, env *environment, wait bool, logTo io.Writer) (*mcp.Manager, error) {
	if env.mcp != nil {
		return env.mcp, nil
	}
	level := slog.LevelWarn
	if logTo == nil {
		logTo, level = io.Discard, slog.LevelError
	}
	m, err := mcp.New(env.cfg.MCP, mcp.Options{
		Logger:        slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level})),
		ClientVersion: versionString(),
	})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	m.Start()
	a.closers = append(a.closers, func() { m.Close() })
	if wait {
		// Each server's first attempt ends within its own start timeout
		// (start_timeout in the config), which bounds this wait.
		wctx, cancel := context.WithTimeout(ctx, m.StartWait())
		var err error
		if isTerminal(a.io.Err) && logTo != io.Discard {
			p := newMCPProgress(a.io.Err)
			err = m.WaitReadyReporting(wctx, func(starting []mcp.ServerStatus) { p.update(starting, false) })
			p.update(nil, false)
		} else {
			err = m.WaitReady(wctx)
		}
		cancel()
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, s := range m.Status() {
			if logTo == io.Discard {
				break
			}
			switch s.State {
			case mcp.StateFailed:
				fmt.Fprintf(logTo, "note: MCP server %s is not available, so its tools are left out: %s\n", s.Name, safe.Text(s.Reason))
			case mcp.StateStarting:
				fmt.Fprintf(logTo, "note: MCP server %s has not finished starting, so its tools are left out (%s)\n", s.Name, safe.Text(s.Waiting(time.Now())))
			}
		}
	}
	m.Register(env.registry)
	env.mcp = m
	return m, nil
}
