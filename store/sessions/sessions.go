// Package sessions keeps chat sessions in the jarvis database: each
// session's metadata and running totals, and its messages, one record per
// message, saved as each message completes.
//
// Durability: Append writes the messages and the session's new totals in
// one bbolt transaction, committed with fsync before it returns. A process
// killed at any point leaves either the whole Append or none of it, so a
// crash loses at most the reply that was still streaming, and a session's
// totals always match its stored messages.
//
// Layering: store sits below engine, tools and agent, so this package does
// not import them. Message, ToolCall and Usage mirror engine.Message,
// engine.ToolCall and events.Usage field for field (ToolCall and Usage are
// directly convertible: engine.ToolCall(tc), events.Usage(u)); the TUI turns
// a loaded session back into an agent.Conversation (see ChatMessages for the
// messages the model should see). The package's tests keep the mirrors in
// step with the originals.
//
// Branches: a question asked again (a retry) or edited keeps what was
// said before. The new answer, or the edited question and what follows
// it, go on a branch that leaves the conversation after a message; the
// messages of a session carry their branch, and the session records the
// branch the model sees now (its current path, Tree.Path). Every attempt
// stays stored and counted in the totals. A fork is another session that
// starts with a copy of one path up to a message and records where it
// came from (Session.Parent, Session.ParentSeq).
//
// Images are stored once, by content: a bucket of blobs keyed by the
// SHA-256 of the bytes, each counted by the messages that reference it
// (and removed when the last of them is deleted). Messages hold the hash
// and what is shown of the image (name, format, size); Load leaves the
// bytes out and FillImages reads them for the messages that are sent.
//
// Leases: a session is open in one jarvis at a time (Hold), so two
// processes never interleave their lines in it; the lease is a file lock
// the operating system lets go of when its process ends (see lease.go).
//
// Storage layout (storm/v3 on bbolt, under the root bucket "sessions"): one
// sessionRow per session, indexed by id and by last activity; the messages
// of a session in a bucket of their own keyed by their sequence number, so
// loading a session reads one bucket in order and deleting it drops that
// bucket; image bytes in "blobs" and their reference counts in
// "blobrefs", both keyed by the hash.
package sessions

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/asdine/storm/v3"
	"github.com/asdine/storm/v3/index"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/jarvis-workbench/jarvis/store"
)

// Message roles. User, assistant, tool and system are the engine's roles;
// notice and error are lines the interface showed (a fallback, an
// unreachable server) kept so a reloaded session looks as it did. They are
// never sent to a model.
//
// A summary records a compaction: from that point on the model saw the
// summary (Content) followed by the Kept chat messages stored before it
// and everything after it. The messages it stands for stay stored.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleNotice    = "notice"
	RoleError     = "error"
	RoleSummary   = "summary"
)

var roles = []string{RoleUser, RoleAssistant, RoleTool, RoleSystem, RoleNotice, RoleError, RoleSummary}

// TitleMax is the length in characters of a title taken from the first user
// message.
const TitleMax = 60

// root is the storm bucket holding everything this package stores.
const root = "sessions"

// ErrNotFound is wrapped by the errors of lookups that match no session.
var ErrNotFound = errors.New("session not found")

// Session is a conversation's metadata and running totals.
type Session struct {
	// ID is time-ordered (creation time first, then random characters):
	// ids sort in creation order.
	ID    string `json:"id"`
	Title string `json:"title"`
	// CreatedAt is when the session began; UpdatedAt when a message was
	// last appended. Renaming or changing the model does not move it.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Model, Agent and Tools are what the session runs with now (the model
	// of each reply is on its message), and NumCtx the window the person
	// set for it (/ctx, --num-ctx; 0 when none: the configuration's or
	// the server's).
	Model  string   `json:"model,omitempty"`
	Agent  string   `json:"agent,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	NumCtx int      `json:"num_ctx,omitempty"`
	// Messages is how many messages are stored, on every branch.
	Messages int    `json:"messages"`
	Totals   Totals `json:"totals"`
	// Branch is the branch the model sees ("" is the first line of the
	// conversation); Branches are the others, in the order they were
	// made.
	Branch   string   `json:"branch,omitempty"`
	Branches []Branch `json:"branches,omitempty"`
	// Parent is the session this one was forked from, and ParentSeq the
	// message of the parent the copy ends with.
	Parent    string `json:"parent,omitempty"`
	ParentSeq int    `json:"parent_seq,omitempty"`
	// Changes is how many file changes tools recorded in the session
	// (see Change).
	Changes int `json:"changes,omitempty"`
}

// Totals add up what a session used, every attempt on every branch
// included (a fork's count the turns it copied too). They are updated in
// the transaction that stores the messages they come from.
type Totals struct {
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CostUSD is the models' cost: the sum of the assistant messages' Usage.
	CostUSD float64 `json:"cost_usd"`
	// ToolCostUSD is the sum of the tool messages' Result.CostUSD;
	// ToolCostEstimated says some of it came from a spec's estimate.
	ToolCostUSD       float64 `json:"tool_cost_usd"`
	ToolCostEstimated bool    `json:"tool_cost_estimated,omitempty"`
	// Turns counts model replies (assistant messages), as agent.Result does.
	Turns int `json:"turns"`
	// ToolCalls counts the calls that have a result: tool messages and
	// react's observations (see IsToolResult).
	ToolCalls int `json:"tool_calls"`
}

// Add accumulates m's usage and tool cost.
func (t *Totals) Add(m Message) {
	if m.Role == RoleAssistant {
		t.Turns++
	}
	if IsToolResult(m) {
		t.ToolCalls++
	}
	if u := m.Usage; u != nil {
		t.PromptTokens += u.PromptTokens
		t.OutputTokens += u.OutputTokens
		t.CostUSD += u.CostUSD
	}
	if r := m.Result; r != nil {
		t.ToolCostUSD += r.CostUSD
		t.ToolCostEstimated = t.ToolCostEstimated || (r.CostEstimated && r.CostUSD != 0)
	}
}

// Meta is what a session is created with and what SetMeta changes.
type Meta struct {
	// Title is optional: empty means "from the first user message".
	Title  string
	Model  string
	Agent  string
	Tools  []string
	NumCtx int
}

// Message is one stored message: engine.Message's fields, when it was
// made, and what the interface needs to redraw it (usage of a reply, the
// outcome of a tool call).
type Message struct {
	// Seq is the message's position in its session, from 1. Append sets it.
	Seq        int        `json:"-"`
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	Thinking   string     `json:"thinking,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// CreatedAt is when the message was complete; zero means "now" to Append.
	CreatedAt time.Time `json:"created_at"`
	// Model produced an assistant message.
	Model string `json:"model,omitempty"`
	// Usage is an assistant message's reply usage (nil for other roles).
	Usage *Usage `json:"usage,omitempty"`
	// Result is a tool message's outcome (nil for other roles).
	Result *ToolResult `json:"result,omitempty"`
	// Kept is, for a summary, how many of the chat messages before it the
	// model still saw after the compaction; Replaced how many it stood
	// for (for the export).
	Kept     int `json:"kept,omitempty"`
	Replaced int `json:"replaced,omitempty"`
	// LeftOut is set on a summary that is no summary: the Replaced
	// messages were left out of what the model reads, and Content is the
	// note that told the model so.
	LeftOut bool `json:"left_out,omitempty"`
	// Branch is the branch the message belongs to ("" the first line).
	Branch string `json:"branch,omitempty"`
	// Images attached to a user message.
	Images []Image `json:"images,omitempty"`
	// Incomplete is set on a reply that stopped before the model finished
	// it, and says why: one of the Incomplete* values.
	Incomplete string `json:"incomplete,omitempty"`
	// Context is what an assistant message's request took of the model's
	// window (nil when it was not known), and RunSeconds how long the run
	// that appended the message had gone on: a reopened session shows a
	// reply's footer and its run's total as the live transcript did.
	Context    *ContextUse `json:"context,omitempty"`
	RunSeconds float64     `json:"run_seconds,omitempty"`
}

// ContextUse is how full a request left the window: its prompt's tokens,
// counted by the server (or estimated by jarvis when Estimated), of the
// Window's.
type ContextUse struct {
	Window       int  `json:"window"`
	PromptTokens int  `json:"prompt_tokens"`
	Estimated    bool `json:"estimated,omitempty"`
}

// Why a reply stopped before its end (Message.Incomplete); they mirror
// agent's values of the same names.
const (
	IncompleteCancelled = "cancelled" // the person cancelled the run
	IncompleteLost      = "lost"      // the connection to the server was lost
	IncompleteLength    = "length"    // the reply reached its length limit
	IncompleteRefused   = "refused"   // the server stopped it (a content filter)
	IncompleteError     = "error"     // the server ended it with an error
)

// ObservationPrefix starts a react agent's tool result, which the model
// reads as a user message.
const ObservationPrefix = "Observation: "

// ArgumentsKey holds, in a react observation's Result.Metadata, the
// arguments its call ran with: the model wrote them as text, so no tool
// call of the conversation carries them.
const ArgumentsKey = "arguments"

// ObservationArgs returns, as JSON, the arguments a react observation's
// call ran with ("" when none were stored).
func ObservationArgs(m Message) string {
	if m.Result == nil || m.Role != RoleUser {
		return ""
	}
	args, ok := m.Result.Metadata[ArgumentsKey]
	if !ok {
		return ""
	}
	b, err := json.Marshal(args)
	if err != nil {
		return ""
	}
	return string(b)
}

// IsToolResult reports whether m is a tool call's result: a tool message,
// or a react observation (a user message with a result, or, as the model
// reads it, starting with ObservationPrefix).
func IsToolResult(m Message) bool {
	return m.Role == RoleTool || m.Role == RoleUser && (m.Result != nil || strings.HasPrefix(m.Content, ObservationPrefix))
}

// ToolCall mirrors engine.ToolCall (convertible: engine.ToolCall(tc)).
type ToolCall struct {
	ID        string `json:"id"`
	Index     int    `json:"index"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage mirrors events.Usage (convertible: events.Usage(u)).
type Usage struct {
	PromptTokens   int     `json:"prompt_tokens"`
	OutputTokens   int     `json:"output_tokens"`
	EvalSeconds    float64 `json:"eval_seconds,omitempty"`
	TokensPerSec   float64 `json:"tokens_per_second,omitempty"`
	PromptSeconds  float64 `json:"prompt_seconds,omitempty"`
	LoadSeconds    float64 `json:"load_seconds,omitempty"`
	TotalSeconds   float64 `json:"total_seconds,omitempty"`
	CostUSD        float64 `json:"cost_usd,omitempty"`
	ToolCostUSD    float64 `json:"tool_cost_usd,omitempty"`
	WallSeconds    float64 `json:"wall_seconds,omitempty"`
	ThinkingTokens int     `json:"thinking_tokens,omitempty"`
	Estimated      bool    `json:"estimated,omitempty"`
}

// ToolResult is how a tool call ended: tools.Result without the content
// (that is the message's Content) and the tool name (the message's
// ToolName).
type ToolResult struct {
	Success bool `json:"success"`
	// Status is a tools.Status: ok, error, denied, timeout, cancelled.
	Status         string  `json:"status"`
	LatencySeconds float64 `json:"latency_seconds"`
	CostUSD        float64 `json:"cost_usd"`
	// CostEstimated marks a cost taken from the tool's spec because the
	// call reported none (shown as ~$0.0010).
	CostEstimated bool           `json:"cost_estimated,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// ChatMessages returns the chat's messages, in order: every message but
// notices and errors. Summaries are among them; replaying them (see
// agent.Conversation.Compact) gives what the model saw. Give it a path
// (Tree.Path) when the session has branches.
func ChatMessages(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != RoleNotice && m.Role != RoleError {
			out = append(out, m)
		}
	}
	return out
}

// sessionRow is a session as stored; its type and field names are part of
// the database format (storm names buckets and indexes after them).
type sessionRow struct {
	Session `storm:"inline"`
	// Recent orders sessions by activity: UpdatedAt in Unix nanoseconds as
	// 16 hex digits, then the id, so keys sort by time and are unique.
	Recent string `storm:"index" json:"recent"`
}

// messageRow is a message as stored, keyed by its sequence number (storm
// encodes integer ids big-endian, so the bucket's order is the session's).
type messageRow struct {
	Seq     int `storm:"id" json:"seq"`
	Message `storm:"inline"`
}

// Store reads and writes sessions in a store.DB. It is safe for concurrent
// use, also by several processes sharing the database file.
type Store struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Store on db.
func New(db *store.DB) *Store { return &Store{db: db, now: time.Now} }

// SetClock makes s take "now" from clock, so tests of what a session
// shows (an export, a listing) get fixed times.
func SetClock(s *Store, clock func() time.Time) { s.now = clock }

func (s *Store) view(fn func(storm.Node) error) error {
	return s.db.View(func(n storm.Node) error { return fn(n.From(root)) })
}

func (s *Store) update(fn func(storm.Node) error) error {
	return s.db.Update(func(n storm.Node) error { return fn(n.From(root)) })
}

// messages is the node holding one session's messages.
func messages(n storm.Node, id string) storm.Node { return n.From("messages", id) }

// clock returns the current time without its monotonic reading, in UTC, so
// what is stored and what is returned compare equal.
func (s *Store) clock() time.Time { return s.now().UTC().Round(0) }

// Create starts a session.
func (s *Store) Create(m Meta) (Session, error) {
	row := s.newRow(m)
	err := s.update(func(n storm.Node) error { return n.Save(&row) })
	if err != nil {
		return Session{}, fmt.Errorf("cannot create a session: %w", err)
	}
	return row.Session, nil
}

// newRow is a new session's record, not yet stored.
func (s *Store) newRow(m Meta) sessionRow {
	now := s.clock()
	row := sessionRow{Session: Session{
		ID:        newID(now),
		Title:     strings.TrimSpace(m.Title),
		CreatedAt: now,
		UpdatedAt: now,
		Model:     m.Model,
		Agent:     m.Agent,
		Tools:     slices.Clone(m.Tools),
		NumCtx:    m.NumCtx,
	}}
	row.Recent = recentKey(row.Session)
	return row
}

// Append stores msgs at the end of the session and adds them to its totals,
// in one transaction: after a crash either all of msgs are there or none.
// The session's title is taken from its first user message unless it has
// one. id may be a unique prefix.
func (s *Store) Append(id string, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if err := checkRoles(msgs); err != nil {
		return err
	}
	return s.update(func(n storm.Node) error { return appendTx(n, id, s.clock(), msgs) })
}

func checkRoles(msgs []Message) error {
	for i, m := range msgs {
		if !slices.Contains(roles, m.Role) {
			return fmt.Errorf("message %d has role %q; use one of: %s", i+1, m.Role, strings.Join(roles, ", "))
		}
		for _, im := range m.Images {
			if len(im.Data) == 0 && im.SHA256 == "" {
				return fmt.Errorf("message %d has an image (%s) with neither bytes nor a hash", i+1, im.Name)
			}
		}
	}
	return nil
}

// appendTx is Append inside a transaction on the package's root node; now
// is the time of messages that carry none.
func appendTx(n storm.Node, id string, now time.Time, msgs []Message) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	mn := messages(n, row.ID)
	for _, m := range msgs {
		if !row.hasBranch(m.Branch) {
			return fmt.Errorf("session %s has no branch %q to add a message to", row.ID, m.Branch)
		}
		images, err := storeImages(n, m.Images)
		if err != nil {
			return fmt.Errorf("cannot save the images of a message of session %s: %w", row.ID, err)
		}
		m.Images = images
		row.Messages++
		mr := messageRow{Seq: row.Messages, Message: sanitize(m)}
		if mr.CreatedAt.IsZero() {
			mr.CreatedAt = now
		}
		if err := mn.Save(&mr); err != nil {
			return fmt.Errorf("cannot save message %d of session %s: %w", mr.Seq, row.ID, err)
		}
		row.Totals.Add(mr.Message)
		if row.Title == "" && m.Role == RoleUser {
			row.Title = TitleFrom(m.Content)
		}
	}
	row.UpdatedAt = now
	row.Recent = recentKey(row.Session)
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot save session %s: %w", row.ID, err)
	}
	return nil
}

// Load returns a session and its messages in order. id may be a unique
// prefix.
func (s *Store) Load(id string) (Session, []Message, error) {
	var (
		sess Session
		msgs []Message
	)
	err := s.view(func(n storm.Node) error {
		row, err := resolve(n, id)
		if err != nil {
			return err
		}
		sess = row.Session
		if row.Messages == 0 {
			return nil
		}
		var rows []messageRow
		if err := messages(n, row.ID).All(&rows); err != nil && !notFound(err) {
			return fmt.Errorf("cannot read the messages of session %s: %w", row.ID, err)
		}
		msgs = make([]Message, len(rows))
		for i, r := range rows {
			msgs[i] = r.Message
			msgs[i].Seq = r.Seq
		}
		return nil
	})
	if err != nil {
		return Session{}, nil, err
	}
	return sess, msgs, nil
}

// Get returns a session without its messages. id may be a unique prefix.
func (s *Store) Get(id string) (Session, error) {
	var sess Session
	err := s.view(func(n storm.Node) error {
		row, err := resolve(n, id)
		sess = row.Session
		return err
	})
	return sess, err
}

// List returns up to limit sessions (all when limit <= 0), the most
// recently active first.
func (s *Store) List(limit int) ([]Session, error) {
	var rows []sessionRow
	err := s.view(func(n storm.Node) error {
		opts := []func(*index.Options){storm.Reverse()}
		if limit > 0 {
			opts = append(opts, storm.Limit(limit))
		}
		err := n.AllByIndex("Recent", &rows, opts...)
		if notFound(err) {
			rows = nil
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list sessions: %w", err)
	}
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = r.Session
	}
	return out, nil
}

// Last returns the most recently active session; ok is false when there is
// none.
func (s *Store) Last() (sess Session, ok bool, err error) {
	list, err := s.List(1)
	if err != nil || len(list) == 0 {
		return Session{}, false, err
	}
	return list[0], true, nil
}

// Rename sets a session's title. id may be a unique prefix.
func (s *Store) Rename(id, title string) error {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return errors.New("a session title cannot be empty")
	}
	return s.change(id, func(row *sessionRow) { row.Title = title })
}

// SetMeta records the model, agent, tools and window the session now
// runs with, and the title when m.Title is not empty. id may be a unique
// prefix.
func (s *Store) SetMeta(id string, m Meta) error {
	return s.change(id, metaOp{Meta: m}.apply)
}

func (s *Store) change(id string, fn func(*sessionRow)) error {
	return s.update(func(n storm.Node) error { return changeTx(n, id, fn) })
}

func changeTx(n storm.Node, id string, fn func(*sessionRow)) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	fn(&row)
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot save session %s: %w", row.ID, err)
	}
	return nil
}

// Delete removes a session and its messages. id may be a unique prefix.
func (s *Store) Delete(id string) error {
	return s.update(func(n storm.Node) error {
		row, err := resolve(n, id)
		if err != nil {
			return err
		}
		if row.Messages > 0 {
			var rows []messageRow
			if err := messages(n, row.ID).All(&rows); err != nil && !notFound(err) {
				return fmt.Errorf("cannot read the messages of session %s: %w", row.ID, err)
			}
			for _, r := range rows {
				if err := releaseImages(n, r.Images); err != nil {
					return fmt.Errorf("cannot delete the images of session %s: %w", row.ID, err)
				}
			}
		}
		if err := dropChanges(n, row); err != nil {
			return err
		}
		if err := n.DeleteStruct(&row); err != nil {
			return fmt.Errorf("cannot delete session %s: %w", row.ID, err)
		}
		// The bucket exists once a message was stored; dropping a missing
		// one through storm would fall back to a top-level bucket name.
		if row.Messages > 0 {
			err := n.From("messages").Drop(row.ID)
			if err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return fmt.Errorf("cannot delete the messages of session %s: %w", row.ID, err)
			}
		}
		return nil
	})
}

// resolve finds the session whose id is id or, failing that, the only one
// whose id starts with id.
func resolve(n storm.Node, id string) (sessionRow, error) {
	var row sessionRow
	id = strings.TrimSpace(id)
	if id == "" {
		return row, errors.New("no session id given")
	}
	err := n.One("ID", id, &row)
	if err == nil {
		return row, nil
	}
	if !notFound(err) {
		return row, fmt.Errorf("cannot read session %s: %w", id, err)
	}
	var rows []sessionRow
	if err := n.Prefix("ID", id, &rows, storm.Limit(4)); err != nil && !notFound(err) {
		return row, fmt.Errorf("cannot look up session %s: %w", id, err)
	}
	switch len(rows) {
	case 0:
		return row, fmt.Errorf("no session has the id or id prefix %q: %w", id, ErrNotFound)
	case 1:
		return rows[0], nil
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows[:min(len(rows), 3)] {
		ids = append(ids, r.ID)
	}
	more := ""
	if len(rows) > 3 {
		more = ", …"
	}
	return row, fmt.Errorf("session id prefix %q is ambiguous: it matches %s%s; give more characters", id, strings.Join(ids, ", "), more)
}

// notFound reports whether err is storm's "nothing there" in any of its
// forms (no record, or a bucket or index not created yet).
func notFound(err error) bool {
	return errors.Is(err, storm.ErrNotFound) || errors.Is(err, index.ErrNotFound)
}

func recentKey(s Session) string {
	return fmt.Sprintf("%016x", max(s.UpdatedAt.UnixNano(), 0)) + s.ID
}

// idAlphabet is Crockford's base32 in lower case: its characters are in
// ASCII order, so fixed-width ids sort like the numbers they encode.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// newID returns 10 characters of creation time in milliseconds and 6
// random ones: sortable, and unique without coordination between
// processes.
func newID(t time.Time) string {
	var b [16]byte
	ms := uint64(max(t.UnixMilli(), 0))
	for i := 9; i >= 0; i-- {
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	var r [8]byte
	rand.Read(r[:])
	rnd := binary.BigEndian.Uint64(r[:])
	for i := 10; i < 16; i++ {
		b[i] = idAlphabet[rnd&31]
		rnd >>= 5
	}
	return string(b[:])
}

// TitleFrom makes a session title from a message: whitespace collapsed,
// cut to TitleMax characters at a word boundary when one is near, with an
// ellipsis when cut.
func TitleFrom(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= TitleMax {
		return t
	}
	r := []rune(t)[:TitleMax-1]
	cut := len(r)
	for i := len(r) - 1; i >= TitleMax*2/3; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ") + "…"
}

// sanitize returns m ready for JSON: NaN and infinite figures (which JSON
// cannot hold) become 0 and metadata values that cannot be encoded are left
// out, so one odd value never costs the whole message.
func sanitize(m Message) Message {
	if m.Usage != nil {
		u := *m.Usage
		for _, f := range []*float64{&u.EvalSeconds, &u.TokensPerSec, &u.LoadSeconds, &u.TotalSeconds, &u.CostUSD, &u.ToolCostUSD, &u.WallSeconds} {
			*f = finite(*f)
		}
		m.Usage = &u
	}
	if m.Result != nil {
		r := *m.Result
		r.LatencySeconds, r.CostUSD = finite(r.LatencySeconds), finite(r.CostUSD)
		if _, err := json.Marshal(r.Metadata); err != nil {
			clean := make(map[string]any, len(r.Metadata))
			for k, v := range r.Metadata {
				if _, err := json.Marshal(v); err == nil {
					clean[k] = v
				}
			}
			r.Metadata = clean
		}
		m.Result = &r
	}
	return m
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
