package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// Sandbox is where one case run's tools act: a scratch directory with the
// case's files, and a scratch database for memory and scheduled tasks.
type Sandbox struct {
	// Dir is the case's scratch directory ({dir} in the suite).
	Dir string
	// DB is the scratch database (opened on first use).
	DB        *store.DB
	Memory    *memory.Store
	Scheduler *scheduler.Scheduler
}

// ToolSource returns the registry a case's tools are built from, its
// factories bound to the sandbox and to the target (the llm tool asks the
// model under test).
type ToolSource func(sb *Sandbox, t Target) *tools.Registry

// BuiltinTools is the ToolSource of the built-in tools: base as the
// configuration fills it, with memory and the scheduler on the sandbox's
// database and no MCP servers.
func BuiltinTools(base builtin.Deps) ToolSource {
	return func(sb *Sandbox, t Target) *tools.Registry {
		d := base
		d.Engine, d.Model = t.Engine, t.Model
		d.Memory, d.Scheduler, d.MCP = nil, nil, nil
		if sb != nil {
			d.Memory = sb.Memory
			if sb.Scheduler != nil {
				d.Scheduler = sb.Scheduler
			}
		}
		return builtin.Registry(d)
	}
}

// stateDir holds the scratch databases, beside the cases' directories so
// a tool reading the case's directory does not meet them.
const stateDir = ".state"

// newSandbox lays out a fresh sandbox for c under root: the directory
// emptied and filled with the case's files, a new database with the
// case's memories.
func newSandbox(ctx context.Context, root string, c Case) (*Sandbox, error) {
	dir := filepath.Join(root, c.ID)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clearing the scratch directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the scratch directory: %w", err)
	}
	for name, content := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("writing file %s: %w", name, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return nil, fmt.Errorf("writing file %s: %w", name, err)
		}
	}
	// A database left by an earlier repetition goes with the files beside
	// it (lock, journal): every run starts from the case's own state.
	state := filepath.Join(root, stateDir, c.ID)
	if err := os.RemoveAll(state); err != nil {
		return nil, fmt.Errorf("clearing the scratch database: %w", err)
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("making the scratch database's directory: %w", err)
	}
	dbPath := filepath.Join(state, "jarvis.db")
	db, err := store.New(dbPath, "eval")
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{Dir: dir, DB: db}
	if sb.Memory, err = memory.New(db, memory.Options{}); err != nil {
		db.Close()
		return nil, err
	}
	for i, m := range c.Memories {
		if _, err := sb.Memory.Add(ctx, memory.Input{Content: expandDir(m, dir), Source: fmt.Sprintf("eval:%s:%d", c.ID, i+1)}); err != nil {
			db.Close()
			return nil, fmt.Errorf("storing memory %d: %w", i+1, err)
		}
	}
	sb.Scheduler = scheduler.New(db, scheduler.Options{Command: "eval"})
	return sb, nil
}

// Close releases the scratch database, after the writes its tools queued
// (a memory_store meeting a busy file) have landed, and stops its write
// queue; the files stay until the run's scratch root is removed.
func (sb *Sandbox) Close() {
	if sb.DB == nil {
		return
	}
	if _, err := os.Stat(sb.DB.Path()); err != nil {
		return // never opened: no tool used it, nothing was queued
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sb.DB.Queue().Close(ctx)
	sb.DB.Close()
}

// expandDir puts the scratch directory in place of DirPlaceholder.
func expandDir(s, dir string) string { return strings.ReplaceAll(s, DirPlaceholder, dir) }

// expandValue expands DirPlaceholder in every string of an expected value.
func expandValue(v any, dir string) any {
	switch x := v.(type) {
	case string:
		return expandDir(x, dir)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expandValue(e, dir)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandValue(e, dir)
		}
		return out
	}
	return v
}

// expandExpect returns e with DirPlaceholder expanded.
func expandExpect(e Expect, dir string) Expect {
	out := e
	out.Calls = make([]CallExpect, len(e.Calls))
	for i, c := range e.Calls {
		out.Calls[i] = CallExpect{Tool: c.Tool}
		if c.Args != nil {
			out.Calls[i].Args = expandValue(c.Args, dir).(map[string]any)
		}
	}
	out.AnswerContains = make([]string, len(e.AnswerContains))
	for i, s := range e.AnswerContains {
		out.AnswerContains[i] = expandDir(s, dir)
	}
	return out
}
