package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/internal/testfs"
	"github.com/jarvis-workbench/jarvis/tools"
)

func read(t *testing.T, f *FileRead, args tools.Args) tools.Result {
	t.Helper()
	return f.Execute(context.Background(), args)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFileReadReadsWithMetadata(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.md")
	write(t, p, "line 1\nline 2\nline 3\n")
	t.Chdir(dir) // the working directory is read without asking
	f, _ := NewFileReadIn(nil)
	r := read(t, f, tools.Args{"path": p})
	if !r.Success || r.Content != "line 1\nline 2\nline 3\n" {
		t.Fatalf("got %+v", r)
	}
	real, _ := filepath.EvalSymlinks(p)
	if r.Metadata["path"] != real || r.Metadata["size_bytes"] != 21 {
		t.Fatalf("metadata = %v", r.Metadata)
	}
	r = read(t, f, tools.Args{"path": p, "max_lines": 2.0})
	if r.Content != "line 1\nline 2" || r.Metadata["truncated"] != true || r.Metadata["total_lines"] != 3 {
		t.Fatalf("max_lines: %q %v", r.Content, r.Metadata)
	}
	if r = read(t, f, tools.Args{"path": p, "max_lines": 0.0}); r.Content != "line 1\nline 2\nline 3\n" {
		t.Fatalf("max_lines 0 must return everything: %q", r.Content)
	}
	if r = read(t, f, tools.Args{"path": p, "max_lines": 10.0}); r.Metadata["truncated"] != nil {
		t.Fatalf("not truncated when shorter: %v", r.Metadata)
	}
}

func TestFileReadRelativeAndHomePaths(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "hello")
	t.Chdir(dir)
	f, _ := NewFileReadIn(nil)
	if r := read(t, f, tools.Args{"path": "a.txt"}); r.Content != "hello" {
		t.Fatalf("relative: %+v", r)
	}
	t.Setenv("HOME", dir)
	if r := read(t, f, tools.Args{"path": "~/a.txt"}); r.Content != "hello" {
		t.Fatalf("home: %+v", r)
	}
}

func TestFileReadChecksInOrder(t *testing.T) {
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	outside := filepath.Join(dir, "outside")
	write(t, filepath.Join(allowed, "ok.txt"), "fine")
	write(t, filepath.Join(outside, "secret.txt"), "private")
	write(t, filepath.Join(allowed, "big.txt"), strings.Repeat("x", MaxFileSize+1))
	write(t, filepath.Join(allowed, "bin.dat"), "abc\x00def")
	write(t, filepath.Join(allowed, "latin1.txt"), "caf\xe9")
	write(t, filepath.Join(outside, ".env"), "TOKEN=1")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(allowed, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, ".env"), filepath.Join(allowed, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(allowed, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := NewFileReadIn([]string{allowed})
	if err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(allowed, name) }
	outsideAllowed := func(p string) string {
		return "Access denied: " + p + " is outside the allowed directories (" + allowed + "). Only the user can change that: " +
			"they may add its directory to [tool.file_read] allowed_dirs in the config file."
	}
	cases := []struct {
		path, want string
	}{
		{"", "No path provided."},
		{"  ", "No path provided."},
		{in(".env"), "Access denied: " + in(".env") + " is a sensitive file."},
		{filepath.Join(outside, ".env"), "Access denied: " + filepath.Join(outside, ".env") + " is a sensitive file."},
		{in("missing.txt"), "File not found: " + in("missing.txt")},
		{in("sub"), "Not a file: " + in("sub")},
		{filepath.Join(outside, "secret.txt"), outsideAllowed(filepath.Join(outside, "secret.txt"))},
		{in("escape.txt"), outsideAllowed(in("escape.txt"))},
		{in("innocent.txt"), "Access denied: " + in("innocent.txt") + " is a sensitive file."},
		{in("../outside/secret.txt"), outsideAllowed(in("../outside/secret.txt"))},
		{in("big.txt"), fmt.Sprintf("File too large to return whole: %d bytes (file_read returns at most 1048576). Read a part of it: give start_line and max_lines (for example start_line 1 and max_lines 200).", MaxFileSize+1)},
		{in("bin.dat"), "Cannot read " + in("bin.dat") + ": it is not a UTF-8 text file (binary content)."},
		{in("latin1.txt"), "Cannot read " + in("latin1.txt") + ": it is not a UTF-8 text file (binary content)."},
	}
	for _, c := range cases {
		r := read(t, f, tools.Args{"path": c.path})
		if r.Success || r.Content != c.want {
			t.Errorf("path %q:\n got %q\nwant %q", c.path, r.Content, c.want)
		}
	}
	if r := read(t, f, tools.Args{"path": in("ok.txt")}); !r.Success || r.Content != "fine" {
		t.Errorf("allowed file: %+v", r)
	}
}

func TestFileReadSensitiveNames(t *testing.T) {
	secrets := NewSecrets()
	for _, name := range []string{".env", ".env.local", "prod.env", ".secret", "app.secrets", "credentials.json", "credentials",
		"cert.pem", "server.key", "store.p12", "store.pfx", "keystore.jks", "id_rsa", "id_ed25519", ".htpasswd", ".pgpass", ".netrc",
		"/home/u/.ssh/config", "/home/u/.aws/config", "ID_RSA"} {
		if secrets.File(name) == "" {
			t.Errorf("%q should be sensitive", name)
		}
	}
	for _, name := range []string{"README.md", "env.go", "environment.txt", "keys.md", "id_rsa.pub.txt.md", "monkey.go"} {
		if why := secrets.File(name); why != "" {
			t.Errorf("%q should not be sensitive (%s)", name, why)
		}
	}
}

func TestFileReadNeverOpensFIFOOrDevice(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	testfs.Mkfifo(t, fifo)
	f, _ := NewFileReadIn([]string{dir, "/dev"})
	done := make(chan tools.Result, 1)
	go func() { done <- read(t, f, tools.Args{"path": fifo}) }()
	select {
	case r := <-done:
		if r.Content != "Not a file: "+fifo {
			t.Fatalf("fifo: %q", r.Content)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	if r := read(t, f, tools.Args{"path": "/dev/zero"}); r.Content != "Not a file: /dev/zero" {
		t.Fatalf("device: %q", r.Content)
	}
}

func TestFileReadRejectsMissingAllowedDir(t *testing.T) {
	if _, err := NewFileReadIn([]string{"/definitely/not/here"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v", err)
	}
}

func TestFileReadAllowedDirThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	realDir := filepath.Join(dir, "real")
	write(t, filepath.Join(realDir, "a.txt"), "via link")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(realDir, link); err != nil {
		t.Fatal(err)
	}
	f, err := NewFileReadIn([]string{link})
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, f, tools.Args{"path": filepath.Join(link, "a.txt")}); r.Content != "via link" {
		t.Fatalf("got %+v", r)
	}
	if r := read(t, f, tools.Args{"path": filepath.Join(realDir, "a.txt")}); r.Content != "via link" {
		t.Fatalf("got %+v", r)
	}
}

func TestFileReadBadMaxLines(t *testing.T) {
	f, _ := NewFileReadIn(nil)
	r := read(t, f, tools.Args{"path": "x", "max_lines": 2.5})
	if r.Success || !strings.Contains(r.Content, "whole number") {
		t.Fatalf("got %q", r.Content)
	}
}

func TestMisconfiguredAllowedDirFailsAtCallNotAtBuild(t *testing.T) {
	tool, err := NewFileRead(tools.Deps{Settings: map[string]tools.Settings{"file_read": {AllowedDirs: []string{"/definitely/not/here"}}}})
	if err != nil {
		t.Fatalf("the factory must build the tool: %v", err)
	}
	r := tool.Execute(context.Background(), tools.Args{"path": "/etc/hostname"})
	if r.Success || !strings.Contains(r.Content, "misconfigured") || !strings.Contains(r.Content, "/definitely/not/here") {
		t.Fatalf("got %+v", r)
	}
}

// A long file is read in parts: start_line and max_lines pick a range,
// and a start past the end says how long the file is.
func TestFileReadLineRange(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("log.txt", []byte("one\ntwo\nthree\nfour\nfive\n"), 0o644)
	f, err := NewFileRead(tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Execute(context.Background(), tools.Args{"path": "log.txt", "start_line": float64(2), "max_lines": float64(2)})
	if !r.Success || r.Content != "two\nthree" || r.Metadata["total_lines"] != 5 || r.Metadata["end_line"] != 3 {
		t.Fatalf("range: %+v", r)
	}
	r = f.Execute(context.Background(), tools.Args{"path": "log.txt", "start_line": float64(4)})
	if !r.Success || r.Content != "four\nfive" {
		t.Fatalf("from line 4: %q", r.Content)
	}
	r = f.Execute(context.Background(), tools.Args{"path": "log.txt", "start_line": float64(9)})
	if r.Success || !strings.Contains(r.Content, "has 5 lines") {
		t.Fatalf("past the end: %+v", r)
	}
}

// A line range of a file larger than 1 MiB is read: the limit is on what
// is returned, not on the file.
func TestFileReadReadsALineRangeOfALargeFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; b.Len() <= 3*MaxFileSize; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 60))
	}
	total := strings.Count(b.String(), "\n")
	write(t, filepath.Join(dir, "big.log"), b.String())
	long := strings.Repeat("y", 100_000) // longer than the reading buffer
	write(t, filepath.Join(dir, "long.log"), "a\n"+long+"\nb\n"+strings.Repeat("z\n", MaxFileSize))
	f, _ := NewFileReadIn([]string{dir})
	path := filepath.Join(dir, "big.log")

	r := read(t, f, tools.Args{"path": path, "start_line": 40000, "max_lines": 2})
	want := fmt.Sprintf("line 40000 %s\nline 40001 %s", strings.Repeat("x", 60), strings.Repeat("x", 60))
	if !r.Success || r.Content != want || r.Metadata["total_lines"] != total || r.Metadata["end_line"] != 40001 {
		t.Fatalf("range: %v %q %v", r.Success, cut(r.Content), r.Metadata)
	}
	if r := read(t, f, tools.Args{"path": filepath.Join(dir, "long.log"), "start_line": 2, "max_lines": 2}); !r.Success || r.Content != long+"\nb" {
		t.Fatalf("a line longer than the buffer: %v %q", r.Success, cut(r.Content))
	}
	r = read(t, f, tools.Args{"path": path, "start_line": 2})
	if r.Success || !strings.Contains(r.Content, "hold more than 1048576 bytes, the most file_read returns; ask for fewer lines") {
		t.Fatalf("to the end: %q", cut(r.Content))
	}
	r = read(t, f, tools.Args{"path": path, "start_line": total + 1, "max_lines": 5})
	if r.Success || r.Content != fmt.Sprintf("start_line %d is past the end of %s, which has %d lines.", total+1, path, total) {
		t.Fatalf("past the end: %q", r.Content)
	}
}

func cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
