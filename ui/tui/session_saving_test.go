package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// While another process holds the database, a finished exchange is not
// lost and not an error: the status bar says it is being saved; quitting
// waits for it with a count; once the file is free every message lands,
// and an export has the exchange.
func TestMessagesWaitForABusyDatabaseAndQuitWaitsForThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	holder, err := store.Open(path, "memory index")
	if err != nil {
		t.Fatal(err)
	}
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.New(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := NewSessionStore(sessions.New(db))

	m := newTestModel(t, 110, 30)
	m.opts.Sessions, m.opts.Saves = ss, db.Queue()
	states := make(chan saveStateMsg, 64)
	m.send = func(msg tea.Msg) {
		if st, ok := msg.(saveStateMsg); ok {
			states <- st
		}
	}
	m.watchSaves()

	id, err := ss.Create(SessionMeta{Model: "qwen3:8b", Agent: "orchestrator"})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []engine.Message{
		{Role: engine.RoleUser, Content: "What is 15% of 340?"},
		{Role: engine.RoleAssistant, Content: "51"},
	} {
		if err := ss.Append(id, history.Stored(agent.Appended{Message: msg})); err != nil {
			t.Fatalf("a save failed instead of waiting: %v", err)
		}
	}
	// Apply states until the queue says it waits for the file.
	deadline := time.After(10 * time.Second)
	for !m.saves.Waiting {
		select {
		case st := <-states:
			m.Update(st)
		case <-deadline:
			t.Fatal("the queue never said it was waiting")
		}
	}
	if s := screen(t, m); !strings.Contains(s, "saving 3 writes…") || !strings.Contains(s, "memory index") {
		t.Fatalf("the status bar does not say what is being saved and why:\n%s", s)
	}
	// Quitting waits, and says so.
	if cmd := m.quit(); quits(cmd) {
		t.Fatal("quit did not wait for the pending writes")
	}
	if s := screen(t, m); !strings.Contains(s, "quitting when saved") {
		t.Fatalf("quitting does not say it waits:\n%s", s)
	}
	release()
	holder.Close()
	for {
		select {
		case st := <-states:
			_, cmd := m.Update(st)
			if st.Pending == 0 {
				if !quits(cmd) {
					t.Fatal("the queue emptied but quitting did not end")
				}
				out := filepath.Join(t.TempDir(), "export.md")
				_, err := ss.Export(id, out)
				b, _ := os.ReadFile(out)
				md := string(b)
				if err != nil || !strings.Contains(md, "What is 15% of 340?") || !strings.Contains(md, "51") {
					t.Fatalf("export after the wait: %v\n%s", err, md)
				}
				return
			}
		case <-deadline:
			t.Fatal("the writes never landed")
		}
	}
}

// Asking to quit again while waiting leaves at once; the writes stay in
// the journal (Close says where) for the next start.
func TestQuittingAgainLeavesAndKeepsTheWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	holder, _ := store.Open(path, "memory index")
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := store.New(path, "tui")
	defer db.Close()
	ss := NewSessionStore(sessions.New(db))
	m := newTestModel(t, 110, 30)
	m.opts.Sessions, m.opts.Saves = ss, db.Queue()
	id, _ := ss.Create(SessionMeta{Model: "qwen3:8b"})
	ss.Append(id, history.Stored(agent.Appended{Message: engine.Message{Role: engine.RoleUser, Content: "hi"}}))
	if quits(m.quit()) {
		t.Fatal("quit did not wait")
	}
	if !quits(press(m, "ctrl+c")) {
		t.Fatal("ctrl+c while waiting did not leave")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err = db.Queue().Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "2 writes") || !strings.Contains(err.Error(), ".pending") {
		t.Fatalf("close: %v", err)
	}
	// The queue's last attempt still lands once the file is free (and
	// leaves nothing behind in the test's directory).
	release()
	holder.Close()
	wait, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if err := db.Flush(wait); err != nil {
		t.Fatal(err)
	}
}
