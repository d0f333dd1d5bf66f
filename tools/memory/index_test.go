package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/internal/testfs"
	"github.com/jarvis-workbench/jarvis/tools"
)

// tree builds a directory with one of everything IndexPath must handle.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "notes.md"), "# Notes\n\nThe quarterly report is due on Friday.\n")
	writeFile(t, filepath.Join(root, "sub", "ideas.txt"), "Build a birdhouse from cedar.\n\nPaint it green.")
	writeFile(t, filepath.Join(root, "sub", "deeper", "code.go"), "package main\n\nfunc main() { println(\"hello gopher\") }\n")
	writeFile(t, filepath.Join(root, "logo.png"), "\x89PNG\r\n\x1a\n")
	writeFile(t, filepath.Join(root, "data.bin2"), "text then \x00 a NUL byte")
	writeFile(t, filepath.Join(root, "latin1.txt"), "caf\xe9 au lait")
	writeFile(t, filepath.Join(root, ".env"), "SECRET=hunter2")
	writeFile(t, filepath.Join(root, "server.key"), "-----BEGIN PRIVATE KEY-----")
	writeFile(t, filepath.Join(root, ".ssh", "config"), "Host example")
	writeFile(t, filepath.Join(root, "empty.txt"), "")
	writeFile(t, filepath.Join(root, "big.log"), strings.Repeat("log line\n", DefaultMaxFileBytes/9+10))
	writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main")
	writeFile(t, filepath.Join(root, "node_modules", "pkg", "index.js"), "module.exports = 1")
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "link-to-sub")); err != nil {
		t.Fatal(err)
	}
	testfs.Mkfifo(t, filepath.Join(root, "pipe"))
	return root
}

func reasons(rep Report, root string) map[string]string {
	out := map[string]string{}
	for _, s := range rep.Skipped {
		rel, _ := filepath.Rel(root, s.Path)
		out[rel] = s.Reason
	}
	return out
}

func TestIndexPathTree(t *testing.T) {
	s := newStore(t)
	root := tree(t)
	var progress []Progress
	rep, err := IndexPath(ctx, s, root, IndexOptions{Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Indexed) != 4 || rep.Chunks != 4 || rep.File {
		t.Fatalf("indexed %v (%d chunks)", rep.Indexed, rep.Chunks)
	}
	if len(rep.Converted) != 1 || rep.Converted[0] != filepath.Join(root, "latin1.txt") {
		t.Errorf("converted = %v", rep.Converted)
	}
	got := reasons(rep, root)
	want := map[string]string{
		"logo.png":    "binary",
		"data.bin2":   "binary",
		".env":        "sensitive file",
		"server.key":  "sensitive file",
		".ssh":        "sensitive directory",
		"empty.txt":   "empty",
		"big.log":     "too large",
		"link-to-sub": "symbolic link to a directory (not followed)",
		"pipe":        "not a regular file",
	}
	for path, reason := range want {
		if !strings.HasPrefix(got[path], reason) {
			t.Errorf("%s: skipped as %q, want %q", path, got[path], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("skipped %v", got)
	}
	for _, p := range append(rep.Indexed, rep.Unchanged...) {
		if strings.Contains(p, ".git") || strings.Contains(p, "node_modules") {
			t.Errorf("indexed %s inside a skipped directory", p)
		}
	}
	if last := progress[len(progress)-1]; last.Files != last.TotalFiles || last.Bytes != last.TotalBytes || last.Chunks != 4 {
		t.Errorf("final progress = %+v", last)
	}
	hits, _ := s.Search(ctx, "birdhouse", 5)
	if len(hits.Hits) != 1 || hits.Hits[0].Source != filepath.Join(root, "sub", "ideas.txt") {
		t.Errorf("search after indexing: %+v", hits)
	}

	// Again: everything unchanged. Then change one file.
	rep, err = IndexPath(ctx, s, root, IndexOptions{})
	if err != nil || len(rep.Indexed) != 0 || len(rep.Unchanged) != 4 || rep.Chunks != 0 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
	writeFile(t, filepath.Join(root, "notes.md"), "# Notes\n\nThe report moved to Monday.\n")
	rep, err = IndexPath(ctx, s, root, IndexOptions{})
	if err != nil || len(rep.Indexed) != 1 || len(rep.Unchanged) != 3 {
		t.Fatalf("after a change: %+v, %v", rep, err)
	}
	if r, _ := s.Search(ctx, "Friday", 5); len(r.Hits) != 0 {
		t.Error("the old version of a changed file is still found")
	}
	if r, _ := s.Search(ctx, "Monday", 5); len(r.Hits) != 1 {
		t.Error("the new version of a changed file is not found")
	}
	st, _ := s.Stats(ctx)
	if st.Documents != 4 {
		t.Errorf("%d documents, want 4", st.Documents)
	}
}

func TestIndexToolOutput(t *testing.T) {
	s := newStore(t)
	root := tree(t)
	t.Chdir(root)
	idx := NewIndex(s, tools.Deps{}, Options{})
	r := run(t, idx, tools.Args{"path": root})
	lines := strings.Split(r.Content, "\n")
	if !r.Success || lines[0] != "Indexed 4 chunks from "+root || lines[1] != "Files: 4 indexed, 0 unchanged, 9 skipped." || lines[2] != "Skipped:" {
		t.Fatalf("result = %q", r.Content)
	}
	if !strings.Contains(r.Content, "\n  "+filepath.Join(root, ".env")+" (sensitive file)") {
		t.Errorf("skipped list lacks .env: %q", r.Content)
	}
	if !strings.Contains(r.Content, "\nNot UTF-8, read as Windows-1252 (Latin-1):\n  "+filepath.Join(root, "latin1.txt")) {
		t.Errorf("the converted file is not reported: %q", r.Content)
	}
	if r.Metadata["chunks"] != 4 || r.Metadata["files_skipped"] != 9 || r.Metadata["files_converted"] != 1 {
		t.Errorf("metadata = %v", r.Metadata)
	}

	file := filepath.Join(root, "notes.md")
	r = run(t, idx, tools.Args{"path": file})
	if !r.Success || r.Content != "Indexed 0 chunks from "+file+"\nThe file is unchanged since it was last indexed." {
		t.Errorf("unchanged file: %q", r.Content)
	}
	r = run(t, idx, tools.Args{"path": file, "chunk_size": 4.0})
	if !r.Success || !strings.HasPrefix(r.Content, "Indexed 3 chunks from "+file) {
		t.Errorf("smaller chunks: %q", r.Content)
	}
	for _, c := range []struct {
		args tools.Args
		want string
	}{
		{tools.Args{"path": filepath.Join(root, ".env")}, "Cannot index " + filepath.Join(root, ".env") + ": sensitive file."},
		{tools.Args{"path": filepath.Join(root, "logo.png")}, "Cannot index " + filepath.Join(root, "logo.png") + ": binary."},
		{tools.Args{"path": filepath.Join(root, "missing")}, "Path not found: " + filepath.Join(root, "missing")},
		{tools.Args{"path": ""}, "No path provided."},
		{tools.Args{"path": root, "chunk_size": 10.0, "chunk_overlap": 10.0}, "Invalid arguments: chunk overlap (10 words) must be smaller than the chunk size (10 words)."},
		{tools.Args{"path": root, "chunk_size": -1.0}, "Invalid arguments: chunk size must be a positive number of words, got -1."},
	} {
		if r := run(t, idx, c.args); r.Success || r.Content != c.want {
			t.Errorf("memory_index(%v) = %q, want %q", c.args, r.Content, c.want)
		}
	}
}

func TestIndexPathCancelled(t *testing.T) {
	s := newStore(t)
	root := tree(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := IndexPath(cctx, s, root, IndexOptions{}); err == nil {
		t.Error("a cancelled index reported success")
	}
}

func TestIndexPathForgetsDeletedFiles(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "keep.txt"), "kept text about otters")
	writeFile(t, filepath.Join(root, "gone", "old.txt"), "old text about beavers")
	writeFile(t, root+"-sibling/other.txt", "a sibling directory sharing the prefix")
	if _, err := IndexPath(ctx, s, root+"-sibling", IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := IndexPath(ctx, s, root, IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	rep, err := IndexPath(ctx, s, root, IndexOptions{})
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0] != filepath.Join(root, "gone", "old.txt") {
		t.Fatalf("removed = %v, %v", rep.Removed, err)
	}
	if !strings.Contains(FormatReport(rep, root, 0), "Files: 0 indexed, 1 unchanged, 0 skipped, 1 removed (deleted since they were indexed).") {
		t.Errorf("report = %q", FormatReport(rep, root, 0))
	}
	if r, _ := s.Search(ctx, "beavers", 5); len(r.Hits) != 0 {
		t.Error("a deleted file is still found")
	}
	if r, _ := s.Search(ctx, "sibling", 5); len(r.Hits) != 1 {
		t.Error("a file of a sibling directory with the same prefix was forgotten")
	}
}

func TestIndexPathThroughSymlinkedRoot(t *testing.T) {
	s := newStore(t)
	real := t.TempDir()
	writeFile(t, filepath.Join(real, "a.txt"), "linked notes about herons")
	link := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	rep, err := IndexPath(ctx, s, link, IndexOptions{})
	if err != nil || len(rep.Indexed) != 1 || rep.Indexed[0] != filepath.Join(real, "a.txt") {
		t.Fatalf("report = %+v, %v", rep, err)
	}
}
