package tui

import (
	"context"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// storeAdapter is the SessionStore over the database's sessions package.
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
	sess, err := a.s.CreateQueued(sessions.Meta{Model: m.Model, Agent: m.Agent, Tools: m.Tools, NumCtx: m.NumCtx})
	return sess.ID, err
}

func (a storeAdapter) Append(id string, msgs ...sessions.Message) error {
	return a.s.AppendQueued(id, msgs...)
}

func (a storeAdapter) Branch(id string, b sessions.Branch) error { return a.s.NewBranchQueued(id, b) }

func (a storeAdapter) SetBranch(id, branch string) error { return a.s.SetBranchQueued(id, branch) }

func (a storeAdapter) Hold(id string) (*sessions.Lease, error) { return a.s.Hold(id, "the workbench") }

func (a storeAdapter) SetMeta(id string, m SessionMeta) error {
	return a.s.SetMetaQueued(id, sessions.Meta{Model: m.Model, Agent: m.Agent, Tools: m.Tools, NumCtx: m.NumCtx})
}

func (a storeAdapter) Fork(id, branch string, upTo int, m SessionMeta) (string, error) {
	sess, err := a.s.ForkQueued(id, branch, upTo, sessions.Meta{Title: m.Title, Model: m.Model, Agent: m.Agent, Tools: m.Tools, NumCtx: m.NumCtx})
	return sess.ID, err
}

func summary(s sessions.Session) SessionSummary {
	return SessionSummary{
		ID: s.ID, Title: s.Title, Model: s.Model, Agent: s.Agent, Tools: s.Tools, NumCtx: s.NumCtx, Updated: s.UpdatedAt, Messages: s.Messages,
		Usage: events.Usage{PromptTokens: s.Totals.PromptTokens, OutputTokens: s.Totals.OutputTokens,
			CostUSD: s.Totals.CostUSD, ToolCostUSD: s.Totals.ToolCostUSD},
		Parent: s.Parent, ParentSeq: s.ParentSeq, Branches: len(s.Branches),
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

// Load reads the whole tree with every image's bytes: flipping to
// another attempt must not wait for the database.
func (a storeAdapter) Load(id string) (SessionSummary, *sessions.Tree, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return SessionSummary{}, nil, err
	}
	if err := a.s.FillImages(msgs); err != nil {
		return SessionSummary{}, nil, err
	}
	return summary(sess), sessions.TreeOf(sess, msgs), nil
}

func (a storeAdapter) Last() (SessionSummary, bool, error) {
	a.flush()
	s, ok, err := a.s.Last()
	return summary(s), ok, err
}

// Export writes the markdown to path and the session's images, once
// each, in a directory beside it (NAME-images for NAME.md), which the
// markdown links to by relative paths.
func (a storeAdapter) Export(id, path string) (ExportResult, error) {
	a.flush()
	sess, msgs, err := a.s.Load(id)
	if err != nil {
		return ExportResult{}, err
	}
	return ExportSession(a.s, sess, msgs, path)
}
