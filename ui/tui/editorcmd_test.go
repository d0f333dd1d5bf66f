package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An editor that is not installed is named before the workbench is
// suspended for it: the shell would say "not found" on a screen about to
// be drawn over.
func TestAnEditorNotInstalledSaysWhichCommandWasNotFound(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "nano-not-installed --wait")
	m := newTestModel(t, 100, 30)
	m.transcript.add(&userItem{text: "What is 2+2?", seq: 1})
	if cmd := m.edit(); cmd != nil {
		t.Fatal("the missing editor was run")
	}
	note := lastNote(m)
	for _, want := range []string{`"nano-not-installed" was not found`, "$EDITOR", "The question is unchanged."} {
		if !strings.Contains(note, want) {
			t.Errorf("the note %q lacks %q", note, want)
		}
	}

	// $VISUAL wins, and a path names the file that is not there.
	t.Setenv("VISUAL", filepath.Join(t.TempDir(), "bin", "myedit"))
	ed, _ := findEditor()
	if err := ed.missing(); err == nil || !strings.Contains(err.Error(), "$VISUAL") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing() = %v", err)
	}
	// One that is installed is not missing.
	t.Setenv("VISUAL", "sh -c true")
	if ed, _ := findEditor(); ed.missing() != nil {
		t.Errorf("sh reported missing: %v", ed.missing())
	}
}

// What only the shell can resolve (an assignment, a variable) runs, and
// its "command not found" (exit 127) is said with the variable's command.
func TestAnEditorTheShellCannotFindIsSaidSo(t *testing.T) {
	ed := externalEditor{command: "LANG=C nano-not-installed", from: "EDITOR"}
	if ed.missing() != nil || ed.program() != "" {
		t.Fatalf("an assignment was looked up: program %q", ed.program())
	}
	path := filepath.Join(t.TempDir(), "q.md")
	os.WriteFile(path, []byte("x"), 0o600)
	cmd := ed.cmd(path)
	cmd.Stderr = nil
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 {
		t.Fatalf("the shell ended with %v, want exit status 127", err)
	}
	if got := ed.failed(err); !strings.Contains(got, "found no command") || !strings.Contains(got, "LANG=C nano-not-installed") || !strings.Contains(got, "$EDITOR") {
		t.Errorf("failed() = %q", got)
	}
}
