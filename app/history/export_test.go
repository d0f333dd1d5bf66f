package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

var testTime = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func TestExportPathResolution(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", data)
	id := "01jpa3k8c0abcdef"

	p, err := ExportPath("", id, testTime)
	want := filepath.Join(data, "jarvis", "exports", "jarvis-01jpa3k8-20261130-100000.md")
	if err != nil || p != want {
		t.Fatalf("no path: %q %v, want %q", p, err, want)
	}
	if info, err := os.Stat(filepath.Dir(p)); err != nil || !info.IsDir() {
		t.Fatalf("the exports directory was not created: %v", err)
	}
	if p, err := ExportPath("~/out.md", id, testTime); err != nil || p != filepath.Join(home, "out.md") {
		t.Fatalf("~/out.md: %q %v", p, err)
	}
	// A directory, existing or written as one, gets the default name.
	if p, err := ExportPath("~", id, testTime); err != nil || p != filepath.Join(home, ExportName(id, testTime)) {
		t.Fatalf("~: %q %v", p, err)
	}
	os.Mkdir(filepath.Join(home, "notes"), 0o755)
	if p, err := ExportPath("~/notes/", id, testTime); err != nil || p != filepath.Join(home, "notes", ExportName(id, testTime)) {
		t.Fatalf("~/notes/: %q %v", p, err)
	}
	// A relative path is the current directory's, made absolute.
	wd, _ := os.Getwd()
	if p, err := ExportPath("s.md", id, testTime); err != nil || p != filepath.Join(wd, "s.md") {
		t.Fatalf("s.md: %q %v", p, err)
	}
	for arg, wantErr := range map[string]string{
		"~/missing/out.md": "there is no directory " + filepath.Join(home, "missing") + "; create it",
		"~bob/out.md":      "only ~ and ~/ are expanded",
		"~/missing/":       "there is no directory",
	} {
		if _, err := ExportPath(arg, id, testTime); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one saying %q", arg, err, wantErr)
		}
	}
	// With XDG_DATA_HOME unset (or relative, which the spec ignores) the
	// data directory is ~/.local/share.
	t.Setenv("XDG_DATA_HOME", "relative/dir")
	if p, err := ExportPath("", id, testTime); err != nil || !strings.HasPrefix(p, filepath.Join(home, ".local", "share", "jarvis", "exports")) {
		t.Fatalf("fallback: %q %v", p, err)
	}
}

// The images directory goes with the export's name, suffix included,
// and a taken images directory moves the export on too.
func TestExportImagesFollowTheName(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "j.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := sessions.New(db)
	sess, _ := st.Create(sessions.Meta{})
	pic := sessions.Image{Name: "cat.png", MIMEType: "image/png", Bytes: 3, Width: 1, Height: 1, Data: []byte("png")}
	if err := st.Append(sess.ID, sessions.Message{Role: sessions.RoleUser, Content: "look", Images: []sessions.Image{pic}}); err != nil {
		t.Fatal(err)
	}
	sess, msgs, _ := st.Load(sess.ID)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.md")
	os.Mkdir(filepath.Join(dir, "s-2-images"), 0o755) // left by something else

	for i, want := range []string{"s", "s-3"} {
		res, err := WriteExport(st, sess, msgs, path)
		if err != nil {
			t.Fatal(err)
		}
		if res.Path != filepath.Join(dir, want+".md") || res.ImageDir != filepath.Join(dir, want+"-images") || res.Images != 1 {
			t.Fatalf("export %d: %+v, want %s.md with %s-images", i+1, res, want, want)
		}
		md, _ := os.ReadFile(res.Path)
		if !strings.Contains(string(md), "(<"+want+"-images/") {
			t.Errorf("export %d does not link its own images:\n%s", i+1, md)
		}
		if i == 1 && res.Asked != path {
			t.Errorf("the second export does not say it took another name: %+v", res)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "s-2-images")); len(entries) != 0 {
		t.Error("an images directory that was there got files")
	}
}
