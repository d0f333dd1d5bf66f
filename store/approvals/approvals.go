// Package approvals keeps the tools a person always allows, in the jarvis
// database, so the approval holds in every session and every command until
// it is revoked (`jarvis approvals revoke NAME`, or the workbench's Tools
// tab). A name is a tool's jarvis name: for an MCP tool, SERVER__TOOL, so
// an approval covers that tool of that server and nothing else.
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
)

// root is the storm bucket holding the approvals.
const root = "approvals"

// Approval is one always-allowed tool.
type Approval struct {
	Name string    `storm:"id" json:"name"`
	At   time.Time `json:"approved_at"`
	// Source is where it was given (tui, ask, ...).
	Source string `json:"source,omitempty"`
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

// AlwaysAllowed reports whether name is always allowed. It waits its turn
// for the file; an error means the answer is unknown (the caller asks).
func (s *Store) AlwaysAllowed(name string) (bool, error) {
	var a Approval
	err := s.db.View(func(n storm.Node) error { return n.From(root).One("Name", name, &a) })
	if notFound(err) {
		return false, nil
	}
	return err == nil, err
}

// AllowAlways records name as always allowed (again: the time is renewed).
func (s *Store) AllowAlways(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return errors.New("an approval needs a tool name")
	}
	return s.db.Update(func(n storm.Node) error {
		return n.From(root).Save(&Approval{Name: name, At: time.Now().UTC(), Source: s.Source})
	})
}

// NotApprovedError says a revoked name had no approval, and which do.
type NotApprovedError struct {
	Name  string
	Known []string
}

func (e *NotApprovedError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("%q is not always-allowed; no tool is", e.Name)
	}
	return fmt.Sprintf("%q is not always-allowed; these are: %s", e.Name, strings.Join(e.Known, ", "))
}

// Revoke removes name's approval; a name without one is a
// *NotApprovedError.
func (s *Store) Revoke(name string) error {
	var known []string
	err := s.db.Update(func(n storm.Node) error {
		node := n.From(root)
		var a Approval
		err := node.One("Name", name, &a)
		if notFound(err) {
			var all []Approval
			if err := node.All(&all); err != nil && !notFound(err) {
				return err
			}
			for _, x := range all {
				known = append(known, x.Name)
			}
			return &NotApprovedError{Name: name, Known: known}
		}
		if err != nil {
			return err
		}
		return node.DeleteStruct(&a)
	})
	return err
}

// Names returns the always-allowed tools' names, sorted.
func (s *Store) Names() ([]string, error) {
	list, err := s.List()
	names := make([]string, len(list))
	for i, a := range list {
		names[i] = a.Name
	}
	return names, err
}

// List returns the approvals sorted by name.
func (s *Store) List() ([]Approval, error) {
	var all []Approval
	err := s.db.View(func(n storm.Node) error { return n.From(root).All(&all) })
	if notFound(err) {
		err = nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, err
}
