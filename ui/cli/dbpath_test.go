package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database named with --db that does not exist is refused by the
// commands that only read, and created, with a word, by those that write.
func TestNamedDatabaseIsCreatedOnlyByCommandsThatWrite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"memory", "list"}, {"memory", "search", "x"}, {"memory", "stats"}, {"audit"}, {"approvals", "list"},
		{"scheduler", "list"}, {"eval", "history"}, {"sessions", "list"},
	} {
		_, errOut, code := runCLI(t, "", append(args, "--db", db)...)
		if code != ExitUsage || !strings.Contains(errOut, "there is no database at "+db+" (flag --db)") {
			t.Errorf("%v: exit %d err %q", args, code, errOut)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created the database", args)
		}
	}
	out, _, code := runCLI(t, "", "doctor", "--db", db)
	if !strings.Contains(out, db+" does not exist yet") || code != ExitOK && !strings.Contains(out, "✗ server") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("doctor created the database")
	}
	notes := filepath.Join(t.TempDir(), "notes.md")
	os.WriteFile(notes, []byte("Lisbon in May is warm."), 0o600)
	_, errOut, code := runCLI(t, "", "memory", "index", notes, "--db", db)
	if code != ExitOK || !strings.Contains(errOut, "jarvis: created the database "+db+" (flag --db)") {
		t.Fatalf("memory index: exit %d err %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "memory", "list", "--db", db)
	if code != ExitOK || strings.Contains(errOut, "created") {
		t.Fatalf("memory list on the created file: exit %d err %q", code, errOut)
	}
}
