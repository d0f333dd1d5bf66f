// Package history converts between what a session stores
// (store/sessions) and what an agent appends to and reads from a
// conversation: the workbench and `jarvis ask --continue` save a run's
// messages and rebuild the conversation the model sees from a session's
// line, compactions replayed where they happened.
package history

import (
	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Stored is the message a session stores for what the agent appended.
func Stored(a agent.Appended) sessions.Message {
	m := a.Message
	msg := sessions.Message{
		Role: m.Role, Content: m.Content, Thinking: m.Thinking,
		ToolName: m.ToolName, ToolCallID: m.ToolCallID, Images: storedImages(m.Images),
		Incomplete: a.Incomplete, RunSeconds: a.RunSeconds,
	}
	if c := a.Context; c != nil && c.Window > 0 {
		msg.Context = &sessions.ContextUse{Window: c.Window, PromptTokens: c.PromptTokens, Estimated: c.Estimated}
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
		if m.Role == engine.RoleUser {
			// A react observation is a user message for the model; the
			// session keeps which tool it is the result of, and the
			// arguments it ran with (the model wrote them as text).
			msg.ToolName = a.Result.ToolName
			if args, ok := a.Result.Metadata[sessions.ArgumentsKey]; ok {
				msg.Result.Metadata = map[string]any{sessions.ArgumentsKey: args}
			}
		}
		if d := a.Result.Diff(); d != "" {
			// The diff the person approved, for a reopened session's
			// panel to show as the live one did.
			if msg.Result.Metadata == nil {
				msg.Result.Metadata = map[string]any{}
			}
			msg.Result.Metadata[tools.MetaDiff] = d
		}
	}
	if c := a.Compaction; c != nil {
		msg.Role, msg.Content, msg.Kept, msg.Replaced, msg.LeftOut = sessions.RoleSummary, c.Summary, c.Kept, c.Replaced, c.LeftOut
		u := sessions.Usage(c.Usage)
		msg.Usage = &u
	}
	return msg
}

// Appended is the reverse of Stored: a stored message as the agent
// appended it.
func Appended(m sessions.Message) agent.Appended {
	if m.Role == sessions.RoleSummary {
		a := agent.Appended{Message: agent.SummaryMessage(m.Content),
			Compaction: &agent.Compaction{Summary: m.Content, Kept: m.Kept, Replaced: m.Replaced, LeftOut: m.LeftOut}}
		if m.Usage != nil {
			u := events.Usage(*m.Usage)
			a.Usage, a.Compaction.Usage = &u, u
		}
		return a
	}
	a := agent.Appended{Message: engine.Message{
		Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		Images: EngineImages(m.Images),
	}, Incomplete: m.Incomplete, RunSeconds: m.RunSeconds}
	if c := m.Context; c != nil {
		a.Context = &events.ContextPayload{Window: c.Window, PromptTokens: c.PromptTokens, Estimated: c.Estimated}
	}
	if m.Role == sessions.RoleUser {
		a.Message.ToolName = "" // an observation reads as the user's message
	}
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
		if d, ok := m.Result.Metadata[tools.MetaDiff].(string); ok && d != "" {
			a.Result.Metadata = map[string]any{tools.MetaDiff: d}
		}
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

func EngineImages(ims []sessions.Image) []engine.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]engine.Image, len(ims))
	for i, im := range ims {
		out[i] = engine.Image{Name: im.Name, MIMEType: im.MIMEType, Data: im.Data, Width: im.Width, Height: im.Height}
	}
	return out
}

// Conversation is what the model sees of a line: its chat messages with
// each compaction replayed where it happened.
func Conversation(path []sessions.Message) *agent.Conversation {
	conv := &agent.Conversation{}
	for _, m := range sessions.ChatMessages(path) {
		a := Appended(m)
		if c := a.Compaction; c != nil {
			conv.Compact(c.Summary, c.Kept)
			continue
		}
		conv.Messages = append(conv.Messages, a.Message)
	}
	return conv
}

// IsQuestion reports whether m is a message the person wrote (not a
// react observation, which is a tool's result).
func IsQuestion(m sessions.Message) bool {
	return m.Role == sessions.RoleUser && !sessions.IsToolResult(m)
}
