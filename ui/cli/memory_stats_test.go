package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMemoryStatsShowsStoredChunking: `memory stats` reports the chunk
// sizes the stored documents use, and the default for new texts when it
// differs.
func TestMemoryStatsShowsStoredChunking(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	if _, _, code := mem(t, db, "index", dir); code != ExitOK {
		t.Fatal("index failed")
	}
	out, _, code := mem(t, db, "stats")
	if code != ExitOK || !regexp.MustCompile(`\nChunking:\s+512 words, 64 shared between neighbours: 2 documents, 2 chunks\n`).MatchString(out) ||
		strings.Contains(out, "New texts:") {
		t.Errorf("stats with default chunking: %q", out)
	}

	long := filepath.Join(t.TempDir(), "long.md")
	if err := os.WriteFile(long, []byte(strings.Repeat("One more sentence of plain words here. ", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := mem(t, db, "index", long, "--chunk-size", "16", "--overlap", "2"); code != ExitOK {
		t.Fatal("index with --chunk-size failed")
	}
	out, _, code = mem(t, db, "stats")
	want := regexp.MustCompile(`\nChunking:\s+16 words, 2 shared between neighbours: 1 document, \d+ chunks\n\s+512 words, 64 shared between neighbours: 2 documents, 2 chunks\nNew texts:\s+512 words, 64 shared\n`)
	if code != ExitOK || !want.MatchString(out) {
		t.Errorf("stats with two chunkings: %q", out)
	}
}
