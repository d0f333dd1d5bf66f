package tui

import (
	"strings"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// Conversions between what the agent appends to a conversation and what
// a session stores, and the transcript and conversation of a session's
// line (a path of its tree).

// storedOf is the message a session stores for what the agent appended.
func storedOf(a agent.Appended) sessions.Message {
	m := a.Message
	msg := sessions.Message{
		Role: m.Role, Content: m.Content, Thinking: m.Thinking,
		ToolName: m.ToolName, ToolCallID: m.ToolCallID, Images: storedImages(m.Images),
	}
	for _, c := range m.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, sessions.ToolCall(c))
	}
	if a.Usage != nil {
		u := sessions.Usage(*a.Usage)
		msg.Usage = &u
	}
	if a.Result != nil {
		msg.Result = &sessions.ToolResult{Success: a.Result.Success, Status: string(a.Result.Status),
			LatencySeconds: a.Result.LatencySeconds, CostUSD: a.Result.CostUSD}
	}
	if c := a.Compaction; c != nil {
		msg.Role, msg.Content, msg.Kept, msg.Replaced = sessions.RoleSummary, c.Summary, c.Kept, c.Replaced
		u := sessions.Usage(c.Usage)
		msg.Usage = &u
	}
	return msg
}

// appendedOf is the reverse of storedOf: a stored message as the agent
// appended it.
func appendedOf(m sessions.Message) agent.Appended {
	if m.Role == sessions.RoleSummary {
		var u events.Usage
		if m.Usage != nil {
			u = events.Usage(*m.Usage)
		}
		return agent.Appended{Message: agent.SummaryMessage(m.Content),
			Compaction: &agent.Compaction{Summary: m.Content, Kept: m.Kept, Replaced: m.Replaced, Usage: u}}
	}
	a := agent.Appended{Message: engine.Message{
		Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		Images: engineImages(m.Images),
	}}
	for _, c := range m.ToolCalls {
		a.Message.ToolCalls = append(a.Message.ToolCalls, engine.ToolCall(c))
	}
	if m.Usage != nil {
		u := events.Usage(*m.Usage)
		a.Usage = &u
	}
	if m.Result != nil {
		a.Result = &tools.Result{ToolName: m.ToolName, Content: m.Content, Success: m.Result.Success,
			Status: tools.Status(m.Result.Status), LatencySeconds: m.Result.LatencySeconds, CostUSD: m.Result.CostUSD}
	}
	return a
}

func storedImages(ims []engine.Image) []sessions.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]sessions.Image, len(ims))
	for i, im := range ims {
		out[i] = sessions.Image{Name: im.Name, MIMEType: im.MIMEType, Bytes: len(im.Data), Width: im.Width, Height: im.Height, Data: im.Data}
	}
	return out
}

func engineImages(ims []sessions.Image) []engine.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]engine.Image, len(ims))
	for i, im := range ims {
		out[i] = engine.Image{Name: im.Name, MIMEType: im.MIMEType, Data: im.Data, Width: im.Width, Height: im.Height}
	}
	return out
}

// conversationOf is what the model sees of a line: its chat messages with
// each compaction replayed where it happened.
func conversationOf(path []sessions.Message) *agent.Conversation {
	conv := &agent.Conversation{}
	for _, m := range sessions.ChatMessages(path) {
		a := appendedOf(m)
		if c := a.Compaction; c != nil {
			conv.Compact(c.Summary, c.Kept)
			continue
		}
		conv.Messages = append(conv.Messages, a.Message)
	}
	return conv
}

// isQuestion reports whether m is a message the person wrote (not a
// react observation, which is a tool's result).
func isQuestion(m sessions.Message) bool {
	return m.Role == sessions.RoleUser && !strings.HasPrefix(m.Content, "Observation: ")
}

// itemsOf draws messages of a line as transcript items: a question each,
// the replies and tool calls that follow it as one answer, a note for
// each compaction. prev is the sequence number of the message before the
// first (0 from the start). It returns the items and the tool calls seen.
func itemsOf(msgs []sessions.Message, prev int) ([]item, int) {
	var out []item
	var cur *assistantItem
	calls := 0
	for _, m := range msgs {
		a := appendedOf(m)
		switch {
		case a.Compaction != nil:
			out = append(out, &noteItem{text: compactedText(*a.Compaction)})
			cur = nil
		case isQuestion(m):
			out = append(out, &userItem{text: m.Content, seq: m.Seq, images: engineImages(m.Images)})
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
				cur.blocks = append(cur.blocks, &lineBlock{kind: lineFooter, text: "↳ " + format.Usage(*a.Usage, 0)})
			}
			cur.text, cur.thinking, cur.group = nil, nil, nil
			for _, c := range a.Message.ToolCalls {
				var args map[string]any
				if parsed, msg := parseArgs(c.Arguments); msg == "" {
					args = parsed
				}
				cur.panel(c.Name, c.ID, args, 0).state = panelCancelled
			}
			cur.done = true
		case m.Role == sessions.RoleTool || a.Result != nil:
			calls++
			if cur == nil {
				break
			}
			p := cur.panel(m.ToolName, m.ToolCallID, nil, 0)
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
	return out, calls
}
