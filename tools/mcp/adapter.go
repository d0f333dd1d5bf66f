package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// Spec returns the adapter's spec. Its timeout is the executor's bound on
// the whole call; each server's own, shorter or not, is applied inside
// Execute, so the spec leaves room for the longest one configured.
func (a *Adapter) Spec() tools.Spec {
	spec := adapterSpec
	if m := a.get(); m != nil {
		for _, s := range m.Status() {
			spec.TimeoutSeconds = max(spec.TimeoutSeconds, s.TimeoutSeconds)
		}
	}
	return spec
}

func (a *Adapter) get() *Manager {
	if a.manager == nil {
		return nil
	}
	return a.manager()
}

// Target names the server tool a call reaches, as jarvis names it
// (SERVER__TOOL): approvals, the audit log and the tools a person turned
// off are about that tool, never about the adapter. A listing (no tool)
// targets nothing. A tool the server does not offer (yet) gets the name
// the call spells, which matches no approval.
func (a *Adapter) Target(args tools.Args) string {
	server := strings.TrimSpace(args.String("server"))
	tool := strings.TrimSpace(args.String("tool"))
	if tool == "" {
		return ""
	}
	if m := a.get(); m != nil {
		if srv, ok := m.Server(server); ok {
			if t, ok := lookupTool(m, srv, tool); ok {
				return t.Spec().Name
			}
		}
	}
	return server + Separator + tool
}

// Execute lists a server's tools or calls one of them.
func (a *Adapter) Execute(ctx context.Context, args tools.Args) tools.Result {
	m := a.get()
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
	t, ok := lookupTool(m, srv, tool)
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
	return callWithTimeout(ctx, t, inner)
}

// lookupTool finds the tool a call names. The name is the tool's own name
// on the server, which is what the parameter asks for and what the user
// approves; the jarvis name (SERVER__TOOL, as the listing shows it) is
// accepted too, since it is unique. Recomputing ToolName from the original
// would be wrong: when two originals sanitise alike, the plain name belongs
// to the other tool.
func lookupTool(m *Manager, srv ServerStatus, tool string) (tools.Tool, bool) {
	if t, ok := m.ToolByOriginal(srv.Name, tool); ok {
		return t, true
	}
	for _, ti := range srv.Tools {
		if ti.Name == tool {
			return m.ToolByOriginal(srv.Name, ti.Original)
		}
	}
	return nil, false
}

// callWithTimeout runs t under its server's timeout, which a direct call gets
// from the executor. A call that runs out of time reports it the way the
// executor does; the tool itself then has its server pinged and restarted
// if it no longer answers, as on the direct path.
func callWithTimeout(ctx context.Context, t tools.Tool, args tools.Args) tools.Result {
	spec := t.Spec()
	tctx, cancel := context.WithTimeout(ctx, time.Duration(spec.Timeout()*float64(time.Second)))
	defer cancel()
	r := t.Execute(tctx, args)
	if r.Success || ctx.Err() != nil || !errors.Is(tctx.Err(), context.DeadlineExceeded) {
		// A call cut short by the caller keeps its own result: the
		// executor reports the cancellation or its own timeout.
		return r
	}
	timedOut := tools.Fail("Tool '%s' timed out after %ss.", spec.Name, strconv.FormatFloat(spec.Timeout(), 'g', -1, 64))
	timedOut.Status = tools.StatusTimeout
	timedOut.Metadata = r.Metadata
	return timedOut
}

func listTools(s ServerStatus) tools.Result {
	if !s.Listed {
		return tools.Fail("MCP server '%s' has not listed its tools yet (%s).", s.Name, s.State)
	}
	var b strings.Builder
	noun := "tools"
	if len(s.Tools) == 1 {
		noun = "tool"
	}
	fmt.Fprintf(&b, "MCP server %s (%s) offers %d %s:\n", s.Name, s.State, len(s.Tools), noun)
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
