package sessions

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/asdine/storm/v3"
)

// Branch is a line of the conversation that leaves another after one of
// its messages: a retried answer, or an edited question with what
// follows. Its messages carry its ID.
type Branch struct {
	ID string `json:"id"`
	// Parent is the branch it leaves ("" the first line) and After the
	// sequence number of the last message it shares with it (0: none, a
	// first question edited).
	Parent string `json:"parent,omitempty"`
	After  int    `json:"after"`
	// Reason says why it was made: "retry", "edit".
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Reasons for a branch.
const (
	ReasonRetry = "retry"
	ReasonEdit  = "edit"
)

func (r *sessionRow) hasBranch(id string) bool {
	return id == "" || slices.ContainsFunc(r.Branches, func(b Branch) bool { return b.ID == id })
}

// Tree is a session's messages with their branches, for finding what the
// model sees (a path) and the alternatives at a message. It is a plain
// value: the workbench keeps one in memory beside what it writes.
type Tree struct {
	// Messages in order; Messages[i].Seq is i+1.
	Messages []Message
	Branches []Branch
	// Current is the branch the model sees.
	Current string
}

// TreeOf is the tree of a loaded session.
func TreeOf(s Session, msgs []Message) *Tree {
	return &Tree{Messages: msgs, Branches: slices.Clone(s.Branches), Current: s.Branch}
}

func (t *Tree) branch(id string) (Branch, bool) {
	for _, b := range t.Branches {
		if b.ID == id {
			return b, true
		}
	}
	return Branch{}, false
}

// Has reports whether the tree has the branch ("" always).
func (t *Tree) Has(id string) bool {
	_, ok := t.branch(id)
	return id == "" || ok
}

// Path returns the messages of a branch's line, in order: those of its
// ancestors up to where each line left, then its own.
func (t *Tree) Path(branch string) []Message {
	limits := t.limits(branch)
	out := make([]Message, 0, len(t.Messages))
	for _, m := range t.Messages {
		if l, ok := limits[m.Branch]; ok && m.Seq <= l {
			out = append(out, m)
		}
	}
	return out
}

// CurrentPath is the path the model sees.
func (t *Tree) CurrentPath() []Message { return t.Path(t.Current) }

// limits maps each branch of a line to the last message of it the line
// includes.
func (t *Tree) limits(branch string) map[string]int {
	limits := map[string]int{}
	limit := math.MaxInt
	for id := branch; ; {
		if _, seen := limits[id]; seen {
			break // a cycle cannot be stored; never loop on one anyway
		}
		limits[id] = limit
		if id == "" {
			break
		}
		b, ok := t.branch(id)
		if !ok {
			break
		}
		limit = min(limit, b.After)
		id = b.Parent
	}
	return limits
}

// Owner returns the branch of message seq ("" for 0 or an unknown one).
func (t *Tree) Owner(seq int) string {
	if seq < 1 || seq > len(t.Messages) {
		return ""
	}
	return t.Messages[seq-1].Branch
}

// Alternative is one way the conversation goes on after a message: the
// branch that holds it and the first message it has there.
type Alternative struct {
	Branch string
	First  int
}

// Alternatives lists the ways the conversation goes on after message
// after (0: from the start), oldest first. More than one means the
// message was answered again or what followed it was edited.
func (t *Tree) Alternatives(after int) []Alternative {
	owner := t.Owner(after)
	firsts := map[string]int{}
	candidates := map[string]bool{owner: true}
	for _, b := range t.Branches {
		if b.Parent == owner && b.After == after {
			candidates[b.ID] = true
		}
	}
	for _, m := range t.Messages {
		if m.Seq <= after || !candidates[m.Branch] {
			continue
		}
		if _, ok := firsts[m.Branch]; !ok {
			firsts[m.Branch] = m.Seq
		}
	}
	out := make([]Alternative, 0, len(firsts))
	for b, first := range firsts {
		out = append(out, Alternative{Branch: b, First: first})
	}
	slices.SortFunc(out, func(a, b Alternative) int { return a.First - b.First })
	return out
}

// Forks returns the alternatives at every message where the conversation
// goes on in more than one way (where a branch leaves), keyed by that
// message: one pass per fork, rather than one per message shown.
func (t *Tree) Forks() map[int][]Alternative {
	out := map[int][]Alternative{}
	for _, b := range t.Branches {
		if _, done := out[b.After]; !done {
			if alts := t.Alternatives(b.After); len(alts) > 1 {
				out[b.After] = alts
			} else {
				out[b.After] = nil
			}
		}
	}
	for p, alts := range out {
		if alts == nil {
			delete(out, p)
		}
	}
	return out
}

// Latest returns the branch whose line holds message seq and reaches
// furthest: flipping to an alternative shows the latest conversation that
// went through it.
func (t *Tree) Latest(seq int) string {
	best, bestEnd := t.Owner(seq), -1
	for _, id := range append([]string{""}, t.branchIDs()...) {
		limits := t.limits(id)
		if l, ok := limits[t.Owner(seq)]; !ok || seq > l {
			continue
		}
		end := 0
		for _, m := range t.Messages {
			if l, ok := limits[m.Branch]; ok && m.Seq <= l {
				end = m.Seq
			}
		}
		if end > bestEnd {
			best, bestEnd = id, end
		}
	}
	return best
}

func (t *Tree) branchIDs() []string {
	ids := make([]string, len(t.Branches))
	for i, b := range t.Branches {
		ids[i] = b.ID
	}
	return ids
}

// Branch adds a branch leaving the line after message after and makes it
// current. Its parent is the branch that holds that message, so
// alternatives at one message are always siblings. It returns the branch,
// which the caller records with the store's NewBranch(Queued).
func (t *Tree) Branch(after int, reason string, now time.Time) Branch {
	b := Branch{ID: newID(now), Parent: t.Owner(after), After: after, Reason: reason, CreatedAt: now.UTC().Round(0)}
	t.Branches = append(t.Branches, b)
	t.Current = b.ID
	return b
}

// Append adds a message at the end of the tree, on the current branch,
// and returns it with its sequence number and branch.
func (t *Tree) Append(m Message) Message {
	m.Seq, m.Branch = len(t.Messages)+1, t.Current
	t.Messages = append(t.Messages, m)
	return m
}

// checkBranch validates a branch about to be stored in row.
func checkBranch(row *sessionRow, b Branch) error {
	switch {
	case strings.TrimSpace(b.ID) == "":
		return errors.New("a branch needs an id")
	case row.hasBranch(b.ID):
		return fmt.Errorf("session %s already has a branch %s", row.ID, b.ID)
	case !row.hasBranch(b.Parent):
		return fmt.Errorf("session %s has no branch %q to leave", row.ID, b.Parent)
	case b.After < 0 || b.After > row.Messages:
		return fmt.Errorf("session %s has no message %d to branch after (it has %d)", row.ID, b.After, row.Messages)
	}
	return nil
}

// NewBranch records a branch (made with Tree.Branch) and makes it the
// session's current one. id may be a unique prefix.
func (s *Store) NewBranch(id string, b Branch) error {
	return s.update(func(n storm.Node) error { return branchTx(n, id, b) })
}

func branchTx(n storm.Node, id string, b Branch) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	if err := checkBranch(&row, b); err != nil {
		return err
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = time.Now().UTC().Round(0)
	}
	row.Branches = append(row.Branches, b)
	row.Branch = b.ID
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot save session %s: %w", row.ID, err)
	}
	return nil
}

// SetBranch makes branch the one the model sees when the session is
// opened again. id may be a unique prefix.
func (s *Store) SetBranch(id, branch string) error {
	return s.update(func(n storm.Node) error { return setBranchTx(n, id, branch) })
}

func setBranchTx(n storm.Node, id, branch string) error {
	row, err := resolve(n, id)
	if err != nil {
		return err
	}
	if !row.hasBranch(branch) {
		return fmt.Errorf("session %s has no branch %q", row.ID, branch)
	}
	row.Branch = branch
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot save session %s: %w", row.ID, err)
	}
	return nil
}

// Fork starts a session with a copy of the path of branch in session id
// up to message upTo (0: the whole path), recording where it came from.
// The copy is one line (no branches); its images are shared with the
// original, stored once. m gives the new session's model, agent and
// tools (and a title; empty keeps the original's).
func (s *Store) Fork(id, branch string, upTo int, m Meta) (Session, error) {
	var out Session
	err := s.update(func(n storm.Node) error {
		from, err := resolve(n, id)
		if err != nil {
			return err
		}
		row := s.newRow(m)
		row.Parent = from.ID
		if err := forkTx(n, row, branch, upTo); err != nil {
			return err
		}
		var saved sessionRow
		err = n.One("ID", row.ID, &saved)
		out = saved.Session
		return err
	})
	return out, err
}

// forkTx stores row, a new session forked from row.Parent, with the copy
// of the parent's path.
func forkTx(n storm.Node, row sessionRow, branch string, upTo int) error {
	from, err := resolve(n, row.Parent)
	if err != nil {
		return err
	}
	var rows []messageRow
	if from.Messages > 0 {
		if err := messages(n, from.ID).All(&rows); err != nil && !notFound(err) {
			return fmt.Errorf("cannot read the messages of session %s: %w", from.ID, err)
		}
	}
	msgs := make([]Message, len(rows))
	for i, r := range rows {
		msgs[i] = r.Message
		msgs[i].Seq = r.Seq
	}
	tree := TreeOf(from.Session, msgs)
	if !tree.Has(branch) {
		return fmt.Errorf("session %s has no branch %q to fork", from.ID, branch)
	}
	path := tree.Path(branch)
	if upTo > 0 {
		i := slices.IndexFunc(path, func(m Message) bool { return m.Seq == upTo })
		if i < 0 {
			return fmt.Errorf("message %d is not on the line of session %s being forked", upTo, from.ID)
		}
		path = path[:i+1]
	}
	if row.Title == "" {
		row.Title = from.Title
	}
	if len(path) > 0 {
		row.ParentSeq = path[len(path)-1].Seq
	}
	row.Recent = recentKey(row.Session)
	if err := n.Save(&row); err != nil {
		return fmt.Errorf("cannot create the fork of session %s: %w", from.ID, err)
	}
	copies := make([]Message, len(path))
	for i, m := range path {
		m.Seq, m.Branch = 0, ""
		copies[i] = m
	}
	if len(copies) == 0 {
		return nil
	}
	return appendTx(n, row.ID, row.CreatedAt, copies)
}
