package tui

import (
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/history"
)

// itemsOf draws messages of a line as transcript items: a question each,
// the replies and tool calls that follow it as one answer, a note for
// each compaction. prev is the sequence number of the message before the
// first (0 from the start).
func itemsOf(msgs []sessions.Message, prev int) []item {
	var out []item
	var cur *assistantItem
	for _, m := range msgs {
		a := history.Appended(m)
		switch {
		case a.Compaction != nil:
			out = append(out, &noteItem{text: compactedText(*a.Compaction)})
			cur = nil
		case history.IsQuestion(m):
			out = append(out, &userItem{text: m.Content, seq: m.Seq, images: history.EngineImages(m.Images)})
			cur = nil
		case m.Role == sessions.RoleAssistant:
			if cur == nil {
				cur = newAssistantItem()
				cur.after = prev
				out = append(out, cur)
			}
			if a.Message.Thinking != "" {
				cur.appendThinking(a.Message.Thinking)
			}
			cur.appendText(a.Message.Content)
			cur.text.final = true
			if a.Usage != nil {
				cur.add(&lineBlock{kind: lineFooter, text: "↳ " + format.Usage(*a.Usage, 0)})
			}
			cur.text, cur.thinking, cur.group = nil, nil, nil
			for i, c := range a.Message.ToolCalls {
				var args map[string]any
				if parsed, msg := parseArgs(c.Arguments); msg == "" {
					args = parsed
				}
				cur.panel(c.Name, c.ID, i, args, 0).state = panelCancelled
			}
			cur.done = true
		case m.Role == sessions.RoleTool || a.Result != nil:
			if cur == nil {
				break
			}
			p := cur.panel(m.ToolName, m.ToolCallID, 0, nil, 0)
			if a.Result != nil {
				p.state, p.latency, p.cost = statusOf(string(a.Result.Status)), a.Result.LatencySeconds, a.Result.CostUSD
				p.setResult(a.Result.Content)
			} else {
				p.state = panelOK
				p.setResult(m.Content)
			}
			p.version++
		}
		if m.Role != sessions.RoleNotice && m.Role != sessions.RoleError {
			prev = m.Seq
		}
	}
	return out
}
