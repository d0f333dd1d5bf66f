package files

import (
	"path/filepath"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Tools built with a working directory take relative paths there, reach
// it without asking and ask about the process's own directory as about
// any other; a secret is judged where the path resolves.
func TestAWorkingDirectoryOfTheirOwn(t *testing.T) {
	wd, own := t.TempDir(), t.TempDir()
	write(t, filepath.Join(wd, "a.txt"), "the tools' own")
	write(t, filepath.Join(own, "a.txt"), "the process's")
	write(t, filepath.Join(wd, ".env"), "KEY=1")
	t.Chdir(own)
	tl, _ := NewFileRead(tools.Deps{WorkDir: wd})
	f := tl.(*FileRead)
	if r := read(t, f, tools.Args{"path": "a.txt"}); r.Content != "the tools' own" {
		t.Fatalf("relative: %+v", r)
	}
	if ask, why := f.ConfirmationFor(tools.Args{"path": "a.txt"}); ask {
		t.Fatalf("a file in the working directory asks: %s", why)
	}
	if ask, _ := f.ConfirmationFor(tools.Args{"path": filepath.Join(own, "a.txt")}); !ask {
		t.Fatal("the process's directory is read without asking")
	}
	realWD, _ := filepath.EvalSymlinks(wd)
	if s := f.GrantScope(tools.Args{"path": "a.txt"}); s.Value != realWD {
		t.Fatalf("grant scope %q, want %q", s.Value, realWD)
	}
	if ref := f.Refuse(tools.Args{"path": ".env"}); ref == nil {
		t.Fatal(".env in the working directory is not refused")
	}
	// allowed_dirs given relative are taken in the working directory too.
	r := NewReachIn("[tool.file_read] allowed_dirs", []string{"."}, wd)
	if r.Err() != nil || len(r.Dirs()) != 1 || r.Dirs()[0] != realWD {
		t.Fatalf("dirs %v, err %v", r.Dirs(), r.Err())
	}
}
