package format

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store/sessions"
)

func TestExportListsTheFilesChangedWithTheirDiffs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msgs := []sessions.Message{
		{Role: sessions.RoleUser, Content: "rename the greeting", CreatedAt: at},
		{Role: sessions.RoleAssistant, CreatedAt: at, ToolCalls: []sessions.ToolCall{{ID: "c1", Name: "file_edit", Arguments: "{}"}}},
	}
	changes := []sessions.Change{{CallID: "c1", Tool: "file_edit", Path: "/w/a.go", Shown: "./a.go", At: at,
		Before: "hi\n", BeforeExists: true, After: "hello\x1b[2J\n", AfterExists: true, UndoneAt: at.Add(time.Minute)}}
	md := SessionMarkdownWith(sessions.Session{ID: "s1", CreatedAt: at, UpdatedAt: at}, msgs, ExportOptions{Changes: changes})
	for _, want := range []string{"## Files changed", "### Turn 1: rename the greeting", "- `./a.go` · +1 −1 lines · file_edit", "· undone",
		"```diff\n--- a/a.go\n+++ b/a.go\n", "-hi\n+hello"} {
		if !strings.Contains(md, want) {
			t.Errorf("export lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "\x1b") {
		t.Fatal("an escape sequence from a file reached the export")
	}
}
