package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// /export in the workbench: no path writes to the exports directory and
// says where in full; ~ is expanded; a taken name is never replaced.
func TestExportCommandNeverReplacesAFile(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", data)
	l := newLive(t, fakeServer(t), filepath.Join(t.TempDir(), "j.db"), false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")

	l.typeLine("/export")
	note := lastNote(l.m)
	dir := filepath.Join(data, "jarvis", "exports")
	if !strings.HasPrefix(note, "Exported the session to "+dir+string(filepath.Separator)+"jarvis-") {
		t.Fatalf("note %q does not name the file in %s", note, dir)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the exports directory, want 1", len(entries))
	}

	mine := filepath.Join(home, "out.md")
	os.WriteFile(mine, []byte("my notes"), 0o644)
	l.typeLine("/export ~/out.md")
	if b, _ := os.ReadFile(mine); string(b) != "my notes" {
		t.Fatalf("an existing file was replaced: %q", b)
	}
	second := filepath.Join(home, "out-2.md")
	if note := lastNote(l.m); note != mine+" already exists, so the session was exported to "+second+"." {
		t.Fatalf("note %q", note)
	}
	if b, err := os.ReadFile(second); err != nil || !strings.Contains(string(b), "What is 15% of 340?") {
		t.Fatalf("the export: %v\n%s", err, b)
	}
	l.typeLine("/export ~/nowhere/out.md")
	if note := lastNote(l.m); !strings.Contains(note, "Export failed: ~/nowhere/out.md: there is no directory") {
		t.Fatalf("note %q", note)
	}
}
