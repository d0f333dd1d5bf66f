package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store/memory"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
)

// mem runs `jarvis --db DB memory ARGS...`.
func mem(t *testing.T, db string, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, "", append([]string{"--db", db, "memory"}, args...)...)
}

func memTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"notes/todo.md":        "Renew the passport before June.\n\nBook the dentist.",
		"notes/recipes/pie.md": "Apple pie: apples, butter, flour, sugar. Bake for 45 minutes.",
		"notes/.env":           "TOKEN=secret",
		"notes/photo.jpg":      "\xff\xd8\xff\xe0",
		"notes/.git/config":    "[core]",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "notes")
}

func TestMemoryIndexSearchListForget(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)

	out, errOut, code := mem(t, db, "index", dir)
	if code != ExitOK {
		t.Fatalf("index: %d %q %q", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "Indexed 2 chunks from "+dir || lines[1] != "Files: 2 indexed, 0 unchanged, 2 skipped." {
		t.Errorf("index output: %q", out)
	}
	if !strings.Contains(out, filepath.Join(dir, ".env")+" (sensitive file)") || !strings.Contains(out, "photo.jpg (binary)") {
		t.Errorf("skips not reported: %q", out)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("a progress bar was drawn on a non-terminal: %q", errOut)
	}

	out, _, code = mem(t, db, "index", dir)
	if code != ExitOK || !strings.HasPrefix(out, "Indexed 0 chunks from "+dir+"\nFiles: 0 indexed, 2 unchanged, 2 skipped.") {
		t.Errorf("re-index: %d %q", code, out)
	}

	out, _, code = mem(t, db, "search", "APPLES?", "baking")
	re := regexp.MustCompile(`^1\. \[0\.\d\d\] ` + regexp.QuoteMeta(filepath.Join(dir, "recipes", "pie.md")) + `  chunk 0  id ([0-9a-f]{16})\n   Apple pie: apples, butter, flour, sugar\. Bake for 45 minutes\.\n$`)
	m := re.FindStringSubmatch(out)
	if code != ExitOK || m == nil {
		t.Fatalf("search: %d %q", code, out)
	}
	pieID := m[1]

	out, _, _ = mem(t, db, "search", "passport", "--json", "-k", "3")
	var res memory.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Hits) != 1 || !strings.HasPrefix(res.Hits[0].Content, "Renew the passport") {
		t.Errorf("search --json: %q (%v)", out, err)
	}
	if out, _, code = mem(t, db, "search", "volcano"); code != ExitOK || out != "No relevant results found.\n" {
		t.Errorf("no results: %d %q", code, out)
	}

	out, _, code = mem(t, db, "list")
	if code != ExitOK || !strings.HasPrefix(out, "ID") || strings.Count(out, "\n") != 3 || !strings.Contains(out, pieID) {
		t.Errorf("list: %q", out)
	}
	out, _, _ = mem(t, db, "list", "--json", "--source", filepath.Join(dir, "todo.md"))
	var docs []memory.Document
	if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 1 || docs[0].Chunks != 1 {
		t.Errorf("list --json --source: %q (%v)", out, err)
	}

	out, _, code = mem(t, db, "stats")
	if code != ExitOK || !regexp.MustCompile(`Documents:\s+2\n`).MatchString(out) || !strings.Contains(out, "off (no embedding model") {
		t.Errorf("stats: %q", out)
	}

	out, _, code = mem(t, db, "forget", pieID[:8])
	if code != ExitOK || out != "Forgot "+pieID+" from "+filepath.Join(dir, "recipes", "pie.md")+" (1 chunk).\n" {
		t.Errorf("forget by prefix: %d %q", code, out)
	}
	out, _, code = mem(t, db, "forget", "--source", filepath.Join(dir, "todo.md"))
	if code != ExitOK || out != "Forgot 1 document from "+filepath.Join(dir, "todo.md")+".\n" {
		t.Errorf("forget --source: %d %q", code, out)
	}
	if out, _, _ = mem(t, db, "list"); !strings.HasPrefix(out, "No documents in memory.") {
		t.Errorf("list after forgetting everything: %q", out)
	}
}

func TestMemoryForgetRelativeSource(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	if _, _, code := mem(t, db, "index", filepath.Join(dir, "todo.md")); code != ExitOK {
		t.Fatal("index failed")
	}
	t.Chdir(dir)
	out, _, code := mem(t, db, "forget", "--source", "todo.md")
	if code != ExitOK || !strings.HasPrefix(out, "Forgot 1 document from "+filepath.Join(dir, "todo.md")) {
		t.Errorf("forget with a relative path: %d %q", code, out)
	}
}

func TestMemoryCommandErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"index"}, ExitUsage, "accepts 1 arg"},
		{[]string{"index", filepath.Join(dir, "nope")}, ExitFailed, "path not found: " + filepath.Join(dir, "nope")},
		{[]string{"index", filepath.Join(dir, ".env")}, ExitFailed, "cannot index " + filepath.Join(dir, ".env") + ": sensitive file"},
		{[]string{"index", dir, "--chunk-size", "10", "--overlap", "10"}, ExitUsage, "must be smaller than the chunk size"},
		{[]string{"index", dir, "--chunk-size", "0"}, ExitUsage, "chunk size must be a positive number"},
		{[]string{"index", dir, "--chunk-size", "ten"}, ExitUsage, "invalid argument"},
		{[]string{"search"}, ExitUsage, "requires at least 1 arg"},
		{[]string{"search", "x", "-k", "0"}, ExitUsage, "-k must be at least 1"},
		{[]string{"forget"}, ExitUsage, "give the id of a document to forget, or --source"},
		{[]string{"forget", "abc", "--source", "x"}, ExitUsage, "not both"},
		{[]string{"forget", "0123abcd"}, ExitFailed, `no memory document with id "0123abcd"`},
		{[]string{"forget", "--source", "nowhere"}, ExitFailed, `no documents from source "nowhere"`},
		{[]string{"list", "extra"}, ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		out, errOut, code := mem(t, db, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: code %d out %q err %q, want %d and %q", c.args, code, out, errOut, c.code, c.msg)
		}
	}
}

func TestMemoryIndexChunkFlagsAndJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	out, _, code := mem(t, db, "index", dir, "--chunk-size", "4", "--json")
	var rep memorytools.Report
	if err := json.Unmarshal([]byte(out), &rep); code != ExitOK || err != nil {
		t.Fatalf("index --json: %d %q (%v)", code, out, err)
	}
	// 8 + 11 words at 4 per chunk, no overlap (an eighth of 4 is 0).
	if rep.Chunks != 5 || len(rep.Indexed) != 2 || len(rep.Skipped) != 2 {
		t.Errorf("report = %+v", rep)
	}
}

func TestMemoryCompactGivesSpaceBack(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jarvis.db")
	notes := filepath.Join(dir, "notes")
	os.MkdirAll(notes, 0o755)
	for i := range 40 {
		os.WriteFile(filepath.Join(notes, fmt.Sprintf("n%02d.txt", i)), []byte(strings.Repeat(fmt.Sprintf("note %d about gardens and cedar ", i), 400)), 0o644)
	}
	if _, errOut, code := runCLI(t, "", "memory", "index", notes, "--db", db); code != ExitOK {
		t.Fatalf("index: %s", errOut)
	}
	if _, errOut, code := runCLI(t, "", "memory", "forget", "--source", notes, "--db", db); code != ExitOK {
		t.Fatalf("forget: %s", errOut)
	}
	out, errOut, code := runCLI(t, "", "memory", "compact", "--db", db)
	if code != ExitOK || !strings.Contains(out, "Compacted ") || !strings.Contains(out, "given back") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	info, err := os.Stat(db)
	if err != nil || info.Size() > 512<<10 {
		t.Fatalf("the file is still %d bytes after compaction", info.Size())
	}
}

// The preview shows the lines that match, not the chunk's start; the
// chunk number is the JSON's; --source keeps one file's or one
// directory's hits.
func TestMemorySearchPreviewChunkAndSource(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	root := t.TempDir()
	long := "# Trip\n\n" + strings.Repeat("Filler words about nothing in particular.\n", 30) + "The ferry to Cacilhas leaves every twenty minutes.\n"
	for p, c := range map[string]string{"trips/lisbon.md": long, "trips/porto.md": "The ferry in Porto crosses the Douro.", "work/ferry.md": "Ferry schedules for the office."} {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	if _, errOut, code := mem(t, db, "index", root); code != ExitOK {
		t.Fatalf("index: %q", errOut)
	}
	out, _, code := mem(t, db, "search", "ferry", "--source", filepath.Join(root, "trips", "lisbon.md"))
	if code != ExitOK || !strings.Contains(out, "   The ferry to Cacilhas leaves every twenty minutes.\n") || strings.Contains(out, "Filler") || strings.Count(out, "chunk ") != 1 {
		t.Fatalf("one file: %d\n%s", code, out)
	}
	t.Chdir(root)
	out, _, _ = mem(t, db, "search", "ferry", "--source", "trips", "--json")
	var res memory.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Hits) != 2 {
		t.Fatalf("a directory: %v %s", err, out)
	}
	for _, h := range res.Hits {
		if !strings.HasPrefix(h.Source, filepath.Join(root, "trips")+string(filepath.Separator)) {
			t.Errorf("a hit from %s", h.Source)
		}
	}
	text, _, _ := mem(t, db, "search", "ferry", "--source", "trips")
	for _, h := range res.Hits {
		if !strings.Contains(text, fmt.Sprintf("  chunk %d  id %s", h.Chunk, h.DocID)) {
			t.Errorf("the text does not number chunk %d of %s as the JSON does:\n%s", h.Chunk, h.DocID, text)
		}
	}
}
