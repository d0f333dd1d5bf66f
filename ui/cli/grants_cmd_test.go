package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/tools"
)

// An outside read approved "always" covers its directory only, in a
// headless run too: another file there is read unasked, a file elsewhere
// is refused (nobody to ask), and the audit names the grant.
func TestAlwaysGrantCoversItsDirectoryHeadless(t *testing.T) {
	t.Chdir(t.TempDir())
	granted, other := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(granted, "a.txt"), filepath.Join(granted, "b.txt"), filepath.Join(other, "c.txt")} {
		if err := os.WriteFile(p, []byte("notes of "+filepath.Base(p)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	real, _ := filepath.EvalSymlinks(granted)
	db := filepath.Join(t.TempDir(), "j.db")
	h, err := store.Open(db, "tui")
	if err != nil {
		t.Fatal(err)
	}
	if err := approvals.New(h).AllowAlways(tools.Grant{Tool: "file_read", Scope: tools.Scope{Kind: tools.ScopeDir, Value: real, Words: "reads in " + real}}); err != nil {
		t.Fatal(err)
	}
	h.Close()

	out, errOut, code := runCLI(t, "", "tools", "run", "file_read", `{"path":"`+filepath.Join(granted, "b.txt")+`"}`, "--db", db)
	if code != ExitOK || out != "notes of b.txt\n" {
		t.Fatalf("a read in the granted directory: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "", "tools", "run", "file_read", `{"path":"`+filepath.Join(other, "c.txt")+`"}`, "--db", db); code != ExitFailed || !strings.Contains(errOut, "requires confirmation") {
		t.Fatalf("a read elsewhere: exit %d %q", code, errOut)
	}
	entries := readAudit(t, db)
	if len(entries) != 2 || entries[0].By != "always-approval" || !strings.Contains(entries[0].Grant, "always: file_read: reads in "+real) || entries[1].Decision != "denied" {
		t.Fatalf("audited %+v", entries)
	}
	out, _, _ = runCLI(t, "", "approvals", "list", "--json", "--db", db)
	var rows []struct {
		Tool, Grant string
		Honoured    bool
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Grant != "dir:"+real || !rows[0].Honoured {
		t.Fatalf("list --json = %s (%v)", out, err)
	}
	if out, _, code := runCLI(t, "", "approvals", "revoke", "file_read", "dir:"+real, "--db", db); code != ExitOK || !strings.Contains(out, "Revoked file_read") {
		t.Fatalf("revoke: %d %q", code, out)
	}
}

// allowed_dirs is a hard limit: --yes does not read past it, and the
// refusal names the setting to change; inside, reads run unasked.
func TestAllowedDirsIsAHardLimitUnderYes(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(allowed, "in.txt"), []byte("inside"), 0o600)
	os.WriteFile(filepath.Join(outside, "out.txt"), []byte("outside"), 0o600)
	t.Chdir(outside) // the working directory is not listed: outside too
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[tool.file_read]\nallowed_dirs = [\""+allowed+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "j.db")
	if out, errOut, code := runCLI(t, "", "tools", "run", "file_read", `{"path":"`+filepath.Join(allowed, "in.txt")+`"}`, "--config", cfg, "--db", db); code != ExitOK || out != "inside\n" {
		t.Fatalf("inside: exit %d %q %q", code, out, errOut)
	}
	for _, p := range []string{filepath.Join(outside, "out.txt"), "out.txt"} {
		out, errOut, code := runCLI(t, "", "tools", "run", "file_read", `{"path":"`+p+`"}`, "--yes", "--config", cfg, "--db", db)
		if code != ExitFailed || strings.Contains(out, "outside") || !strings.Contains(errOut, "[tool.file_read] allowed_dirs") {
			t.Fatalf("%s with --yes: exit %d %q %q", p, code, out, errOut)
		}
	}
	if entries := readAudit(t, db); len(entries) != 2 || entries[0].By != "config" || entries[0].Decision != "denied" {
		t.Fatalf("the refusals are not audited: %+v", entries)
	}
}
