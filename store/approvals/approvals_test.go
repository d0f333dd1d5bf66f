package approvals_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/tools"
)

var (
	etc  = tools.Scope{Kind: tools.ScopeDir, Value: "/etc", Words: "reads in /etc"}
	home = tools.Scope{Kind: tools.ScopeDir, Value: "/home/me", Words: "reads in /home/me"}
	code = tools.ExactArguments(tools.Args{"code": "print(1)"}, "this exact code")
)

func open(t *testing.T, path, who string) *approvals.Store {
	t.Helper()
	db, err := store.Open(path, who)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := approvals.New(db)
	s.Source = who
	return s
}

// A grant covers its scope and nothing else, in every handle on the
// database; a tool-wide grant covers calls scoped by their arguments but
// never a directory.
func TestGrantsCoverTheirScopeAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	s := open(t, path, "tui")
	if _, ok, err := s.AlwaysMatch("file_read", etc); ok || err != nil {
		t.Fatalf("an empty store allows: %v %v", ok, err)
	}
	for _, g := range []tools.Grant{{Tool: "file_read", Scope: etc}, {Tool: "code_interpreter"}, {Tool: "web__fetch"}} {
		if err := s.AllowAlways(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AllowAlways(tools.Grant{Tool: "  "}); err == nil {
		t.Fatal("an empty name was approved")
	}
	if err := s.AllowAlways(tools.Grant{Tool: "file_read", Scope: tools.Scope{Kind: tools.ScopeDir}}); err == nil {
		t.Fatal("a directory grant without its directory was kept")
	}

	s2 := open(t, path, "cli") // another process sees them
	if g, ok, err := s2.AlwaysMatch("file_read", etc); !ok || err != nil || g.Scope.Words != "reads in /etc" {
		t.Fatalf("the /etc grant: %+v %v %v", g, ok, err)
	}
	if _, ok, _ := s2.AlwaysMatch("file_read", home); ok {
		t.Fatal("a grant for /etc covers /home/me")
	}
	if _, ok, _ := s2.AlwaysMatch("code_interpreter", code); !ok {
		t.Fatal("a tool-wide grant does not cover a call scoped by its arguments")
	}
	list, err := s2.List()
	if err != nil || len(list) != 3 || list[0].Key != "code_interpreter" || list[1].Key != "file_read dir:/etc" || list[1].Source != "tui" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if names, _ := s2.Names(); len(names) != 3 {
		t.Fatalf("Names = %v", names)
	}
}

// Approval is a record as databases written before scopes hold it
// (same bucket: storm names it by the type).
type Approval struct {
	Name   string    `storm:"id" json:"name"`
	At     time.Time `json:"approved_at"`
	Source string    `json:"source,omitempty"`
}

// A tool-wide approval from before scopes reads back as one: it still
// covers what a tool-wide grant may (an MCP tool, code by its arguments),
// never a directory, and it can be revoked.
func TestOldApprovalsAreToolWide(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	db, err := store.Open(path, "old")
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(n storm.Node) error {
		for _, name := range []string{"file_read", "github__create_issue"} {
			if err := n.From("approvals").Save(&Approval{Name: name, At: time.Now(), Source: "tui"}); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, "new")
	if _, ok, _ := s.AlwaysMatch("file_read", etc); ok {
		t.Fatal("an old always-approval of file_read still reads any directory")
	}
	if g, ok, _ := s.AlwaysMatch("github__create_issue", tools.Scope{}); !ok || !g.Scope.Wide() {
		t.Fatalf("an old MCP approval no longer holds: %+v %v", g, ok)
	}
	list, _ := s.List()
	if len(list) != 2 || list[0].Key != "file_read" || list[0].Tool != "file_read" {
		t.Fatalf("List = %+v", list)
	}
	if gone, err := s.Revoke("file_read", ""); err != nil || gone.Tool != "file_read" {
		t.Fatalf("revoking an old approval: %+v %v", gone, err)
	}
	if list, _ := s.List(); len(list) != 1 {
		t.Fatalf("after revoke: %+v", list)
	}
}

// Revoke takes one grant by its scope, the tool's only one without it,
// and says which exist otherwise.
func TestRevokeOneGrant(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "j.db"), "cli")
	for _, g := range []tools.Grant{{Tool: "file_read", Scope: etc}, {Tool: "file_read", Scope: home}, {Tool: "http_request",
		Scope: tools.Scope{Kind: tools.ScopeHost, Value: "api.github.com"}}} {
		if err := s.AllowAlways(g); err != nil {
			t.Fatal(err)
		}
	}
	var amb *approvals.AmbiguousError
	if _, err := s.Revoke("file_read", ""); !errors.As(err, &amb) || len(amb.Known) != 2 {
		t.Fatalf("revoking one of two without naming it: %v", err)
	}
	if _, err := s.Revoke("file_read", "dir:/etc"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.AlwaysMatch("file_read", etc); ok {
		t.Fatal("a revoked grant still allows")
	}
	if _, ok, _ := s.AlwaysMatch("file_read", home); !ok {
		t.Fatal("revoking /etc took /home/me too")
	}
	var nae *approvals.NotApprovedError
	if _, err := s.Revoke("file_read", "dir:/etc"); !errors.As(err, &nae) || len(nae.Known) != 1 || nae.Known[0] != "file_read dir:/home/me" {
		t.Fatalf("revoking twice: %v", err)
	}
	if _, err := s.Revoke("file_read", "dir"); err == nil {
		t.Fatal("a malformed grant was taken")
	}
	if _, err := s.Revoke("http_request", ""); err != nil {
		t.Fatal(err)
	}
	if n, err := s.RevokeAll("file_read"); n != 1 || err != nil {
		t.Fatalf("RevokeAll = %d, %v", n, err)
	}
}
