package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// A session with one recorded edit of a real file: changes lists it with
// its diff, undo puts the file back (and refuses over the person's own
// edit), and the JSON says the same.
func TestChangesAndUndoHeadless(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "j.db")
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(dbPath, "test")
	if err != nil {
		t.Fatal(err)
	}
	st := sessions.New(db)
	sess, _ := st.CreateQueued(sessions.Meta{Model: "m"})
	st.AppendQueued(sess.ID, sessions.Message{Role: sessions.RoleUser, Content: "change main.go"},
		sessions.Message{Role: sessions.RoleAssistant, ToolCalls: []sessions.ToolCall{{ID: "c1", Name: "file_edit", Arguments: "{}"}}})
	st.RecordChangeQueued(sess.ID, sessions.Change{CallID: "c1", Tool: "file_edit", Path: file, Shown: "./main.go",
		Before: "a\n", BeforeExists: true, After: "b\n", AfterExists: true, Mode: 0o644})
	if err := st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out, errOut, code := runCLI(t, "", "changes", "--db", dbPath)
	if code != ExitOK || !strings.Contains(out, "Turn 1: change main.go") || !strings.Contains(out, "+1 −1 ./main.go · file_edit") ||
		!strings.Contains(out, "    -a") || !strings.Contains(out, "    +b") {
		t.Fatalf("changes: exit %d %q %q", code, out, errOut)
	}
	out, _, _ = runCLI(t, "", "changes", "--json", "--session", sess.ID[:10], "--db", dbPath)
	var listed struct {
		Session string       `json:"session"`
		Changes []changeJSON `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Changes) != 1 || listed.Changes[0].Turn != 1 || listed.Changes[0].Added != 1 {
		t.Fatalf("changes --json: %v %s", err, out)
	}

	os.WriteFile(file, []byte("mine\n"), 0o644)
	_, errOut, code = runCLI(t, "", "undo", "--db", dbPath)
	if code != ExitFailed || !strings.Contains(errOut, "./main.go changed since") {
		t.Fatalf("undo over an edit: exit %d %q", code, errOut)
	}
	os.WriteFile(file, []byte("b\n"), 0o644)
	out, errOut, code = runCLI(t, "", "undo", "--db", dbPath)
	if b, _ := os.ReadFile(file); code != ExitOK || string(b) != "a\n" || !strings.Contains(out, "Restored ./main.go") {
		t.Fatalf("undo: exit %d %q %q, file %q", code, out, errOut, b)
	}
	out, _, code = runCLI(t, "", "undo", "--json", "--db", dbPath)
	if code != ExitFailed || !strings.Contains(out, `"error": "nothing to undo"`) {
		t.Fatalf("undo --json with nothing left: exit %d %s", code, out)
	}
	out, _, _ = runCLI(t, "", "changes", "--stat", "--db", dbPath)
	if !strings.Contains(out, "· undone") || strings.Contains(out, "    +b") {
		t.Fatalf("changes --stat after undo: %q", out)
	}
}
