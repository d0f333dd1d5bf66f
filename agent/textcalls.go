package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// Some models, when their template misfires, write a tool call as text
// instead of sending it natively: Hermes/Qwen style <tool_call>{...}
// </tool_call> tags, or a bare JSON object {"name": ..., "arguments": ...}
// as the whole reply. Treating that as the answer is the reference bug "a
// model announces a tool call but nothing runs"; the orchestrator runs such
// calls when they name an offered tool.
var toolCallTag = lazyregexp.New(`(?s)<tool_call>\s*(.*?)\s*</tool_call>`)

// textToolCalls returns the tool calls written in content, for tools in
// offered; none when content is an ordinary answer.
func textToolCalls(content string, offered map[string]bool) []engine.ToolCall {
	var raws []string
	for _, m := range toolCallTag().FindAllStringSubmatch(content, -1) {
		raws = append(raws, m[1])
	}
	if len(raws) == 0 {
		body := strings.TrimSpace(content)
		body = strings.TrimPrefix(body, "```json")
		body = strings.TrimPrefix(body, "```")
		body = strings.TrimSpace(strings.TrimSuffix(body, "```"))
		if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
			raws = append(raws, body)
		}
	}
	var calls []engine.ToolCall
	for _, raw := range raws {
		for _, c := range decodeTextCalls(raw) {
			if !offered[c.Name] {
				return nil // not a call of ours: leave the text alone
			}
			c.ID = fmt.Sprintf("text_%d", len(calls)+1)
			c.Index = len(calls)
			calls = append(calls, c)
		}
	}
	return calls
}

// decodeTextCalls reads one call object, or an array of them.
func decodeTextCalls(raw string) []engine.ToolCall {
	type textCall struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	var list []textCall
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		var one textCall
		if err := json.Unmarshal([]byte(raw), &one); err != nil {
			return nil
		}
		list = []textCall{one}
	}
	var out []engine.ToolCall
	for _, c := range list {
		if c.Name == "" {
			return nil
		}
		args := c.Arguments
		if len(args) == 0 {
			args = c.Parameters
		}
		text := strings.TrimSpace(string(args))
		// Arguments written as a JSON string holding the object.
		var inner string
		if json.Unmarshal(args, &inner) == nil {
			text = strings.TrimSpace(inner)
		}
		if text == "" || text == "null" {
			text = "{}"
		}
		out = append(out, engine.ToolCall{Name: c.Name, Arguments: text})
	}
	return out
}
