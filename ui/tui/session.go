package tui

import (
	"time"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/events"
)

// SessionStore is what the TUI needs to persist sessions. ui/cli adapts the
// store's sessions package to it; tests use an in-memory one.
type SessionStore interface {
	// Create starts a session and returns its id.
	Create(meta SessionMeta) (string, error)
	// Append saves one message as it completes.
	Append(sessionID string, m agent.Appended) error
	// List returns the newest sessions first.
	List(limit int) ([]SessionSummary, error)
	// Load returns a session and its messages in order.
	Load(id string) (SessionSummary, []agent.Appended, error)
	// Last returns the most recently used session, if any.
	Last() (SessionSummary, bool, error)
	// Export renders a session as a markdown transcript.
	Export(id string) (string, error)
}

// SessionMeta is what a new session records.
type SessionMeta struct {
	Title, Model, Agent string
	Tools               []string
}

// SessionSummary describes a stored session.
type SessionSummary struct {
	ID, Title, Model, Agent string
	Updated                 time.Time
	Messages                int
	Usage                   events.Usage
}
