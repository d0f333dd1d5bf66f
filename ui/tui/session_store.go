package tui

import (
	"context"
	"time"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// SessionStore is what the TUI needs to persist sessions. ui/cli adapts the
// store's sessions package to it (NewSessionStore).
//
// The TUI keeps the session's messages and branches in memory as a
// sessions.Tree and writes each change as it makes it: a message with
// its sequence number and branch as the tree gave them, a new branch, a
// switch of branch. So nothing is read back while a session is open.
type SessionStore interface {
	// Create starts a session and returns its id.
	Create(meta SessionMeta) (string, error)
	// Append saves messages as they complete.
	Append(sessionID string, msgs ...sessions.Message) error
	// Branch records a branch made in the tree (it becomes current);
	// SetBranch records that another one became current.
	Branch(sessionID string, b sessions.Branch) error
	SetBranch(sessionID, branch string) error
	// SetMeta records the model, agent and tools the session runs with
	// now (the title is kept).
	SetMeta(sessionID string, meta SessionMeta) error
	// Fork starts a session with a copy of the line of branch up to
	// message upTo and returns its id.
	Fork(sessionID, branch string, upTo int, meta SessionMeta) (string, error)
	// List returns the newest sessions first.
	List(limit int) ([]SessionSummary, error)
	// Load returns a session and its tree, image bytes included.
	Load(id string) (SessionSummary, *sessions.Tree, error)
	// Last returns the most recently used session, if any.
	Last() (SessionSummary, bool, error)
	// Hold takes the lease of a session: it is open in one jarvis at a
	// time, so two never interleave their lines in it. A session another
	// jarvis holds is a *sessions.HeldError.
	Hold(sessionID string) (*sessions.Lease, error)
	// Export writes a session as a markdown transcript to path (another
	// name when path exists: nothing is replaced), its images beside
	// it, and returns what it wrote.
	Export(id, path string) (ExportResult, error)
}

// SessionMeta is what a new session records. NumCtx is the window the
// person set (/ctx, --num-ctx), 0 when none.
type SessionMeta struct {
	Title, Model, Agent string
	Tools               []string
	NumCtx              int
}

// SessionSummary describes a stored session.
type SessionSummary struct {
	ID, Title, Model, Agent string
	// Tools are the tools the session runs with, NumCtx the window the
	// person set for it (0: none).
	Tools    []string
	NumCtx   int
	Updated  time.Time
	Messages int
	Usage    events.Usage
	// Parent is the session this one was forked from (ParentSeq its last
	// copied message); Branches counts the lines besides the first.
	Parent    string
	ParentSeq int
	Branches  int
}

// ExportResult says what an export wrote.
type ExportResult = history.Export

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
	return history.WriteExport(a.s, sess, msgs, path)
}
