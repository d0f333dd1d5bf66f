package tui

import (
	"time"

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
type ExportResult struct {
	// Path is the file written; Asked the path asked for when a file was
	// there already and the export took the next free name.
	Path, Asked string
	// ImageDir holds the images (empty when the session has none), and
	// Images counts the files written there.
	ImageDir string
	Images   int
}
