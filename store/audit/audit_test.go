package audit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/audit"
)

func openDB(t *testing.T, path, who string) *store.DB {
	t.Helper()
	db, err := store.Open(path, who)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRecordAndFilter(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "j.db"), "test")
	log := audit.New(db)
	old := time.Now().Add(-2 * time.Hour).UTC()
	log.Record(audit.Entry{Time: old, Tool: "http_request", Decision: "allowed", By: "--yes", Source: "ask",
		Args: map[string]any{"url": "https://example.com"}})
	log.Record(audit.Entry{Tool: "web__fetch", Via: "mcp_adapter", Decision: "denied", By: "person", Source: "tui",
		Reason: "not that site", Session: "s1"})
	log.Record(audit.Entry{Tool: "code_interpreter", Decision: "edited", By: "person", Source: "tui",
		Args: map[string]any{"code": "print(2)"}, AskedArgs: map[string]any{"code": "print(1)"}})

	ctx := context.Background()
	all, err := log.List(ctx, audit.Filter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("List = %d entries, %v", len(all), err)
	}
	if all[0].Tool != "http_request" || all[2].Tool != "code_interpreter" {
		t.Errorf("not oldest first: %s … %s", all[0].Tool, all[2].Tool)
	}
	if all[2].AskedArgs["code"] != "print(1)" || all[2].Args["code"] != "print(2)" {
		t.Errorf("edited entry = %+v", all[2])
	}
	recent, _ := log.List(ctx, audit.Filter{Since: time.Now().Add(-time.Hour)})
	if len(recent) != 2 {
		t.Errorf("since an hour ago: %d entries, want 2", len(recent))
	}
	via, _ := log.List(ctx, audit.Filter{Tool: "mcp_adapter"})
	if len(via) != 1 || via[0].Reason != "not that site" || via[0].Session != "s1" {
		t.Errorf("by the tool called: %+v", via)
	}
	last, _ := log.List(ctx, audit.Filter{Limit: 1})
	if len(last) != 1 || last[0].Tool != "code_interpreter" {
		t.Errorf("limit 1 = %+v, want the newest", last)
	}
}

// While another process holds the file, Record returns at once and the
// entry lands once the file is free.
func TestRecordWaitsForABusyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	holder := openDB(t, path, "memory index")
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.New(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log := audit.New(db)
	done := make(chan struct{})
	go func() {
		log.Record(audit.Entry{Tool: "channel_send", Decision: "allowed", By: "person", Source: "tui"})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Record waited for the file")
	}
	release()
	holder.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := audit.New(openDB(t, path, "reader")).List(ctx, audit.Filter{})
	if err != nil || len(got) != 1 || got[0].Tool != "channel_send" {
		t.Fatalf("after the file was free: %+v, %v", got, err)
	}
}
