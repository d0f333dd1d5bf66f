package approvals_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/approvals"
)

func TestAllowListRevokeAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	db, err := store.Open(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	s := approvals.New(db)
	s.Source = "tui"
	if ok, err := s.AlwaysAllowed("http_request"); ok || err != nil {
		t.Fatalf("empty store allows: %v %v", ok, err)
	}
	for _, n := range []string{"web__fetch", "http_request"} {
		if err := s.AllowAlways(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AllowAlways("  "); err == nil {
		t.Fatal("an empty name was approved")
	}
	db.Close()

	// Another process (a new handle) sees them.
	db2, err := store.Open(path, "cli")
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	s2 := approvals.New(db2)
	list, err := s2.List()
	if err != nil || len(list) != 2 || list[0].Name != "http_request" || list[1].Source != "tui" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := s2.Revoke("web__fetch"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s2.AlwaysAllowed("web__fetch"); ok {
		t.Fatal("a revoked approval still allows")
	}
	var nae *approvals.NotApprovedError
	if err := s2.Revoke("web__fetch"); !errors.As(err, &nae) || len(nae.Known) != 1 || nae.Known[0] != "http_request" {
		t.Fatalf("revoking twice: %v", err)
	}
}
