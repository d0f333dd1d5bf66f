package cli

import (
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/config"
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
