// Package approvals keeps the always-grants, in the jarvis database, so a
// grant holds in every session and every command until it is revoked
// (`jarvis approvals revoke`, or the workbench's Tools tab). A grant is a
// tool's jarvis name (for an MCP tool, SERVER__TOOL, so it covers that
// tool of that server and nothing else) and a scope: one directory, one
// host, one channel, one task, or the whole tool (see tools.Grant).
//
// Grants given before scopes existed are the whole tool; the policy
// honours them only for tools where a tool-wide grant can still be given,
// so an old "always allow file_read" no longer reads the whole disk.
//
// The config keeps the last word: `[tool.NAME] confirm = true` makes the
// tool ask even when it is always-allowed (see tools.Policy).
package approvals

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asdine/storm/v3"
	"github.com/asdine/storm/v3/index"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
)

// root is the storm bucket holding the approvals.
const root = "approvals"

// Approval is one always-grant.
type Approval struct {
	// Key is tools.Grant.Key(): the tool's name for a tool-wide grant
	// (the only kind older databases hold, whose records have no Key),
	// "TOOL KIND:VALUE" otherwise.
	Key string `storm:"id" json:"key"`
	// Tool keeps its old JSON name, so records written before scopes
	// read back as the tool-wide grants they are.
	Tool  string          `json:"name"`
	Kind  tools.ScopeKind `json:"kind,omitempty"`
	Value string          `json:"value,omitempty"`
	// Words say what the grant covers, as the dialog said it.
	Words string    `json:"covers,omitempty"`
	At    time.Time `json:"approved_at"`
	// Source is where it was given (tui, ask, ...).
	Source string `json:"source,omitempty"`
}

// Grant returns the approval as the policy's grant.
func (a Approval) Grant() tools.Grant {
	return tools.Grant{Tool: a.Tool, Scope: tools.Scope{Kind: a.Kind, Value: a.Value, Words: a.Words}}
}

// normal fills what a record written before scopes lacks.
func (a *Approval) normal() {
	if a.Key == "" {
		a.Key = a.Grant().Key()
	}
}

// Store reads and writes the approvals of one database.
type Store struct {
	db *store.DB
	// Source is recorded with the approvals given through this store.
	Source string
}

// New returns the approvals kept in db.
func New(db *store.DB) *Store { return &Store{db: db} }

func notFound(err error) bool {
	return errors.Is(err, storm.ErrNotFound) || errors.Is(err, index.ErrNotFound)
}

// AlwaysMatch returns the grant that lets a call of tool in scope run: the
// grant of that scope, else a tool-wide one where a tool-wide grant may
// cover the call. It waits its turn for the file; an error means the
// answer is unknown (the caller asks).
func (s *Store) AlwaysMatch(tool string, scope tools.Scope) (tools.Grant, bool, error) {
	keys := []string{tools.Grant{Tool: tool, Scope: scope}.Key()}
	if !scope.Wide() && scope.WideGrantable() {
		keys = append(keys, tool)
	}
	var found *Approval
	err := s.db.View(func(n storm.Node) error {
		node := n.From(root)
		for _, k := range keys {
			var a Approval
			err := node.One("Key", k, &a)
			if notFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			a.normal()
			if a.Grant().Covers(tool, scope) {
				found = &a
				return nil
			}
		}
		return nil
	})
	if err != nil || found == nil {
		return tools.Grant{}, false, err
	}
	return found.Grant(), true, nil
}

// AllowAlways records g (again: the time is renewed).
func (s *Store) AllowAlways(g tools.Grant) error {
	g.Tool = strings.TrimSpace(g.Tool)
	if g.Tool == "" {
		return errors.New("an approval needs a tool name")
	}
	if !g.Scope.Wide() && g.Scope.Value == "" {
		return fmt.Errorf("an approval of %s for a %s needs its value", g.Tool, g.Scope.Kind)
	}
	a := Approval{Key: g.Key(), Tool: g.Tool, Kind: g.Scope.Kind, Value: g.Scope.Value, Words: g.Scope.Words,
		At: time.Now().UTC(), Source: s.Source}
	return s.db.Update(func(n storm.Node) error { return n.From(root).Save(&a) })
}

// NotApprovedError says a revoked grant did not exist, and which do.
type NotApprovedError struct {
	// Name is what was asked for: a tool, or "TOOL REF".
	Name string
	// Known are the keys of the grants there are (of the tool, when it
	// has some; else all).
	Known []string
}

func (e *NotApprovedError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("%q is not always-allowed; nothing is", e.Name)
	}
	return fmt.Sprintf("%q is not always-allowed; these are: %s", e.Name, strings.Join(e.Known, ", "))
}

// AmbiguousError says a tool has several grants and revoking it needs the
// one meant (or all).
type AmbiguousError struct {
	Tool  string
	Known []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s has %d always-grants (%s): name the one to revoke, or all of them", e.Tool, len(e.Known), strings.Join(e.Known, ", "))
}

// Revoke removes one grant of tool: the one whose scope is ref (as
// tools.Scope.Ref writes it: "dir:/etc", "any"), or with ref empty the
// tool's only grant. A grant that does not exist is a *NotApprovedError,
// an empty ref for a tool with several an *AmbiguousError. It returns
// the grant removed.
func (s *Store) Revoke(tool, ref string) (Approval, error) {
	var gone Approval
	err := s.db.Update(func(n storm.Node) error {
		node := n.From(root)
		all, err := listIn(node)
		if err != nil {
			return err
		}
		var mine []Approval
		for _, a := range all {
			if a.Tool == tool {
				mine = append(mine, a)
			}
		}
		keysOf := func(list []Approval) []string {
			keys := make([]string, len(list))
			for i, a := range list {
				keys[i] = a.Key
			}
			return keys
		}
		ref = strings.TrimSpace(ref)
		if ref == "" {
			switch len(mine) {
			case 0:
				return &NotApprovedError{Name: tool, Known: keysOf(all)}
			case 1:
				gone = mine[0]
				return node.DeleteStruct(&gone)
			}
			return &AmbiguousError{Tool: tool, Known: keysOf(mine)}
		}
		kind, value, ok := tools.ParseRef(ref)
		if !ok {
			return fmt.Errorf("%q is not a grant's scope: write it as approvals list shows it (dir:/path, host:NAME, channel:NAME, task:ID, args:DIGEST or any)", ref)
		}
		key := tools.Grant{Tool: tool, Scope: tools.Scope{Kind: kind, Value: value}}.Key()
		for _, a := range mine {
			if a.Key == key {
				gone = a
				return node.DeleteStruct(&gone)
			}
		}
		known := keysOf(mine)
		if len(known) == 0 {
			known = keysOf(all)
		}
		return &NotApprovedError{Name: key, Known: known}
	})
	return gone, err
}

// RevokeAll removes every grant of tool and returns how many there were.
func (s *Store) RevokeAll(tool string) (int, error) {
	n := 0
	err := s.db.Update(func(node storm.Node) error {
		node = node.From(root)
		all, err := listIn(node)
		if err != nil {
			return err
		}
		for _, a := range all {
			if a.Tool != tool {
				continue
			}
			if err := node.DeleteStruct(&a); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// Names returns the tools that have an always-grant, sorted, each once.
func (s *Store) Names() ([]string, error) {
	list, err := s.List()
	var names []string
	for _, a := range list {
		if len(names) == 0 || names[len(names)-1] != a.Tool {
			names = append(names, a.Tool)
		}
	}
	return names, err
}

// List returns the grants sorted by key (so by tool).
func (s *Store) List() ([]Approval, error) {
	var all []Approval
	err := s.db.View(func(n storm.Node) error {
		var err error
		all, err = listIn(n.From(root))
		return err
	})
	return all, err
}

func listIn(node storm.Node) ([]Approval, error) {
	var all []Approval
	if err := node.All(&all); err != nil && !notFound(err) {
		return nil, err
	}
	for i := range all {
		all[i].normal()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	return all, nil
}
