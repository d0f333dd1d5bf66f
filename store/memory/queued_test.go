package memory

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

// A text handed over while another process holds the database is stored,
// with the id it was given, once the file is free, and is found then.
func TestQueuedTextLandsWithItsIDAndIsFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	db, err := store.Open(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	holder, _ := store.New(path, "memory compact")
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	added, err := s.AddQueued(ctx, Input{Content: "The cedar birdhouse is painted green.", Source: "note"})
	if err != nil || added.ID == "" || added.Chunks != 1 {
		t.Fatalf("queued: %+v %v", added, err)
	}
	release()
	holder.Close()
	flush, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.Flush(flush); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, "birdhouse", 3)
	if err != nil || len(res.Hits) != 1 || res.Hits[0].DocID != added.ID {
		t.Fatalf("search after the write landed: %+v %v", res, err)
	}
}
