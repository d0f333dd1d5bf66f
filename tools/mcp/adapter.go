package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/tools"
)

// AdapterName is the registry name of the generic MCP tool.
const AdapterName = "mcp_adapter"

// Adapter is the mcp_adapter tool: one entry point to every configured MCP
// server. Each server tool is also offered on its own as SERVER__TOOL, with
// its own schema and its server's trust; the adapter is for a model (or a
// person running `jarvis tools run`) that needs to see what the servers
// offer, or to reach a tool that was not enabled by name. Because it can
// reach any tool on any server, it always asks for confirmation.
type Adapter struct {
	manager func() *Manager
}

// NewAdapter returns the adapter over the manager that get returns (nil
// while no servers run).
func NewAdapter(get func() *Manager) *Adapter { return &Adapter{manager: get} }

// AdapterFactory registers the adapter in a tools.Registry.
func AdapterFactory(get func() *Manager) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewAdapter(get), nil }
}

var adapterSpec = tools.Spec{
	Name: AdapterName,
	Description: "Use a tool of a connected MCP server: give the server and the tool's name on it, with its arguments. " +
		"Leave out the tool to list what the server offers.",
	Parameters: tools.Params(
		tools.StringParam("server", "Name of the MCP server, as configured", true),
		tools.StringParam("tool", "The tool's name on that server; omit to list the server's tools", false),
		tools.Param{Name: "arguments", Schema: &jsonschema.Schema{Type: "object", Description: "The tool's arguments"}},
	),
	Category:             Category,
	RequiresConfirmation: true,
	TimeoutSeconds:       DefaultTimeoutSeconds,
}

// Spec returns the adapter's spec.
func (a *Adapter) Spec() tools.Spec { return adapterSpec }

// Execute lists a server's tools or calls one of them.
func (a *Adapter) Execute(ctx context.Context, args tools.Args) tools.Result {
	var m *Manager
	if a.manager != nil {
		m = a.manager()
	}
	if m == nil || len(m.Status()) == 0 {
		return tools.Fail("No MCP servers are configured. Add [[mcp.servers]] entries to the config file; 'jarvis mcp list' shows their state.")
	}
	name := strings.TrimSpace(args.String("server"))
	srv, ok := m.Server(name)
	if !ok {
		var names []string
		for _, s := range m.Status() {
			names = append(names, s.Name)
		}
		return tools.Fail("Unknown MCP server %q. Configured servers: %s.", name, strings.Join(names, ", "))
	}
	tool := strings.TrimSpace(args.String("tool"))
	if tool == "" {
		return listTools(srv)
	}
	t, ok := m.Tool(ToolName(name, tool))
	if !ok {
		if !srv.Available() {
			return tools.Fail("MCP server '%s' is unavailable: %s", name, srv.Reason)
		}
		return tools.Fail("MCP server '%s' has no tool %q. %s", name, tool, toolNames(srv))
	}
	var inner tools.Args
	switch v := args["arguments"].(type) {
	case nil:
		inner = tools.Args{}
	case map[string]any:
		inner = tools.Args(v)
	default:
		return tools.Fail("Invalid arguments: 'arguments' must be a JSON object with the tool's parameters.")
	}
	return t.Execute(ctx, inner)
}

func listTools(s ServerStatus) tools.Result {
	if !s.Listed {
		return tools.Fail("MCP server '%s' has not listed its tools yet (%s).", s.Name, s.State)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s (%s) offers %d tools:\n", s.Name, s.State, len(s.Tools))
	for _, t := range s.Tools {
		fmt.Fprintf(&b, "\n%s", tools.DescribeSpecs([]tools.Spec{t.Spec}, false, false))
		b.WriteString("\n")
	}
	return tools.OK(strings.TrimRight(b.String(), "\n"))
}

func toolNames(s ServerStatus) string {
	var names []string
	for _, t := range s.Tools {
		names = append(names, t.Original)
	}
	if len(names) == 0 {
		return "It offers none."
	}
	return "It offers: " + strings.Join(names, ", ") + "."
}
