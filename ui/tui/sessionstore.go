package tui

import (
	"context"
	"time"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// storeAdapter is the SessionStore over the database's sessions package,
// converting between the agent's messages and the stored mirrors.
//
// Writes go through the database's queue (sessions' Queued methods): a
// reply never waits for another process to let go of the file, and a
// message is never lost because it did. Reads flush the queue first, so
// a listing, a reload or an export shows everything said so far.
type storeAdapter struct{ s *sessions.Store }

// NewSessionStore adapts a sessions.Store for the TUI.
func NewSessionStore(s *sessions.Store) SessionStore { return storeAdapter{s} }

// flushWait bounds how long a read waits for this process's own queued
// writes before reading what has landed.
const flushWait = 5 * time.Second

func (a storeAdapter) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	a.s.Flush(ctx)
}

func (a storeAdapter) Create(m SessionMeta) (string, error) {
	sess, err := a.s.CreateQueued(sessions.Meta{Model: m.Model, Agent: m.Agent, Tools: m.Tools})
	return sess.ID, err
}

func (a storeAdapter) Append(id string, m agent.Appended) error {
	msg := sessions.Message{
		Role: m.Message.Role, Content: m.Message.Content, Thinking: m.Message.Thinking,
		ToolName: m.Message.ToolName, ToolCallID: m.Message.ToolCallID,
	}
	for _, c := range m.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, sessions.ToolCall(c))
	}
	if m.Usage != nil {
		u := sessions.Usage(*m.Usage)
		msg.Usage = &u
	}
	if m.Result != nil {
		msg.Result = &sessions.ToolResult{Success: m.Result.Success, Status: string(m.Result.Status),
			LatencySeconds: m.Result.LatencySeconds, CostUSD: m.Result.CostUSD}
	}
	if c := m.Compaction; c != nil {
		msg.Role, msg.Content, msg.Kept, msg.Replaced = sessions.RoleSummary, c.Summary, c.Kept, c.Replaced
		u := sessions.Usage(c.Usage)
		msg.Usage = &u
	}
	return a.s.AppendQueued(id, msg)
}

func summary(s sessions.Session) SessionSummary {
	return SessionSummary{
		ID: s.ID, Title: s.Title, Model: s.Model, Agent: s.Agent, Updated: s.UpdatedAt, Messages: s.Messages,
		Usage: events.Usage{PromptTokens: s.Totals.PromptTokens, OutputTokens: s.Totals.OutputTokens,
			CostUSD: s.Totals.CostUSD, ToolCostUSD: s.Totals.ToolCostUSD},
	}
}

func (a storeAdapter) List(limit int) ([]SessionSummary, error) {
	a.flush()
	list, err := a.s.List(limit)
	out := make([]SessionSummary, len(list))
	for i, s := range list {
		out[i] = summary(s)
	}
	return out, err
}

func (a storeAdapter) Load(id string) (SessionSummary, []agent.Appended, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return SessionSummary{}, nil, err
	}
	var out []agent.Appended
	for _, m := range sessions.ChatMessages(msgs) {
		if m.Role == sessions.RoleSummary {
			out = append(out, agent.Appended{Message: agent.SummaryMessage(m.Content),
				Compaction: &agent.Compaction{Summary: m.Content, Kept: m.Kept, Replaced: m.Replaced}})
			continue
		}
		ap := agent.Appended{Message: engine.Message{
			Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		}}
		for _, c := range m.ToolCalls {
			ap.Message.ToolCalls = append(ap.Message.ToolCalls, engine.ToolCall(c))
		}
		if m.Usage != nil {
			u := events.Usage(*m.Usage)
			ap.Usage = &u
		}
		if m.Result != nil {
			ap.Result = &tools.Result{ToolName: m.ToolName, Content: m.Content, Success: m.Result.Success,
				Status: tools.Status(m.Result.Status), LatencySeconds: m.Result.LatencySeconds, CostUSD: m.Result.CostUSD}
		}
		out = append(out, ap)
	}
	return summary(sess), out, nil
}

func (a storeAdapter) Last() (SessionSummary, bool, error) {
	a.flush()
	s, ok, err := a.s.Last()
	return summary(s), ok, err
}

func (a storeAdapter) Export(id string) (string, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return "", err
	}
	return format.SessionMarkdown(sess, msgs), nil
}
