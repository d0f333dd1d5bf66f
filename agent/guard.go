package agent

import (
	"encoding/json"

	"github.com/jarvis-workbench/jarvis/engine"
)

// LoopGuardLimit is how many times a run may make the same call with the
// same arguments before it is stopped: a model repeating itself will not
// stop on its own, and every repeat may have side effects.
const LoopGuardLimit = 3

// loopGuard counts identical calls within a run.
type loopGuard struct{ seen map[string]int }

// key identifies a call by name and arguments, insensitive to key order and
// spacing in the arguments.
func callKey(c engine.ToolCall) string {
	var v any
	if err := json.Unmarshal([]byte(c.Arguments), &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return c.Name + "\x00" + string(b)
		}
	}
	return c.Name + "\x00" + c.Arguments
}

// repeated records calls and returns the first that reached the limit, if
// any.
func (g *loopGuard) repeated(calls []engine.ToolCall) (engine.ToolCall, bool) {
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	var hit engine.ToolCall
	found := false
	for _, c := range calls {
		k := callKey(c)
		g.seen[k]++
		if g.seen[k] >= LoopGuardLimit && !found {
			hit, found = c, true
		}
	}
	return hit, found
}
