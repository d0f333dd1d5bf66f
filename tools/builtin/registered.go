package builtin

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"sync"

	"github.com/jarvis-workbench/jarvis/tools"
)

// The tools a program adds to jarvis (package sdk's Register) are kept
// here, for the whole process, so that every registry built afterwards
// has them beside the built-in ones: `tools list`, `ask --tools`, the
// workbench, scheduled tasks and evaluations all see the same set.
var registered struct {
	sync.Mutex
	names     []string
	factories map[string]tools.Factory
}

// builtinNames are the names of the built-in tools alone.
var builtinNames = sync.OnceValue(func() []string {
	r := tools.NewRegistry()
	registerBuiltins(r, Deps{})
	return r.Names()
})

// Register adds a tool to every registry Registry builds from now on. The
// name must be a valid tool name (tools.CheckName: no "__", which names
// MCP servers' tools) that no built-in tool has and that was not
// registered before; the tool f builds must carry that name in its spec.
// Register before building anything: a registry built earlier does not
// see the tool.
func Register(name string, f tools.Factory) error {
	if f == nil {
		return fmt.Errorf("register tool %q: the factory is nil", name)
	}
	if err := tools.CheckName(name); err != nil {
		return fmt.Errorf("register tool: %w", err)
	}
	if slices.Contains(builtinNames(), name) {
		return fmt.Errorf("register tool %q: a built-in tool has that name; choose another", name)
	}
	taken := func() bool {
		_, dup := registered.factories[name]
		return dup
	}
	registered.Lock()
	dup := taken()
	registered.Unlock()
	if dup {
		return fmt.Errorf("register tool %q: already registered", name)
	}
	// Built once now, without dependencies (a factory must succeed
	// without them): a spec under another name, a nil tool or a panic is
	// refused at once, not at the first run that lists the tools.
	probe, err := guard(name, f)(tools.Deps{})
	if err != nil {
		return fmt.Errorf("register tool %q: %w", name, err)
	}
	tools.Close(probe)
	registered.Lock()
	defer registered.Unlock()
	if taken() {
		return fmt.Errorf("register tool %q: already registered", name)
	}
	if registered.factories == nil {
		registered.factories = map[string]tools.Factory{}
	}
	registered.factories[name] = f
	registered.names = append(registered.names, name)
	return nil
}

// Registered returns the names of the registered tools, sorted.
func Registered() []string {
	registered.Lock()
	defer registered.Unlock()
	out := slices.Clone(registered.names)
	sort.Strings(out)
	return out
}

// Names returns the names of the built-in and the registered tools,
// sorted: what --tools accepts before MCP servers and the config's
// commands are added.
func Names() []string {
	out := append(slices.Clone(builtinNames()), Registered()...)
	sort.Strings(out)
	return out
}

// registerExtras adds the registered tools to r, each factory guarded and
// given what the built-in tools get from d.
func registerExtras(r *tools.Registry, d Deps) {
	registered.Lock()
	defer registered.Unlock()
	for _, name := range registered.names {
		f := guard(name, registered.factories[name])
		must(r.Register(name, func(td tools.Deps) (tools.Tool, error) { return f(d.fill(td)) }))
	}
}

// guard wraps a program's factory: a panic, a nil tool or a spec under
// another name is an error naming the tool, not a crash or a tool that
// the executor would file under a name nobody asked for.
func guard(name string, f tools.Factory) tools.Factory {
	return func(d tools.Deps) (t tools.Tool, err error) {
		defer func() {
			if p := recover(); p != nil {
				t, err = nil, fmt.Errorf("its factory panicked: %v\n%s", p, debug.Stack())
			}
		}()
		t, err = f(d)
		switch {
		case err != nil:
			return nil, err
		case t == nil:
			return nil, fmt.Errorf("its factory returned no tool")
		}
		if got := t.Spec().Name; got != name {
			return nil, fmt.Errorf("registered as %q, but its spec is named %q; the two must match", name, got)
		}
		return t, nil
	}
}
