package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
)

func TestSecondHandleWaitsThenSaysWhoHoldsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "jarvis.db")
	a, err := Open(path, "indexing memory")
	if err != nil {
		t.Fatal(err)
	}
	release, err := a.Hold()
	if err != nil {
		t.Fatal(err)
	}
	// The holder's note, as another process would have written it.
	if err := os.WriteFile(path+".lock", []byte("4242\nindexing memory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(path, "cli")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 1200 * time.Millisecond
	b.SetTimeout(timeout)
	var toldPID int
	var toldWhat string
	b.OnWait(func(pid int, what string) { toldPID, toldWhat = pid, what })
	start := time.Now()
	err = b.View(func(storm.Node) error { return nil })
	var locked *LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("err = %v, want a LockedError", err)
	}
	if waited := time.Since(start); waited < timeout || waited > timeout+5*time.Second {
		t.Fatalf("waited %s for a %s timeout", waited, timeout)
	}
	if toldPID != 4242 || toldWhat != "indexing memory" {
		t.Fatalf("the wait hook was told %d %q", toldPID, toldWhat)
	}
	if locked.PID != 4242 || locked.What != "indexing memory" || !strings.Contains(err.Error(), "pid 4242, indexing memory") || !strings.Contains(err.Error(), "--db") {
		t.Fatalf("error does not say who holds the file or what to do: %v", err)
	}
	release()
	// Released after the idle period: the second handle gets the file.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := b.Update(func(n storm.Node) error { return n.Set("k", "v", "x") }); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("second handle never got the file: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Close()
	var got string
	if err := a.View(func(n storm.Node) error { return n.Get("k", "v", &got) }); err != nil || got != "x" {
		t.Fatalf("first handle reads %q, %v", got, err)
	}
	a.Close()
}

func TestFailedUpdateLeavesNothing(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "j.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := errors.New("boom")
	err = db.Update(func(n storm.Node) error {
		if err := n.Set("k", "half", "written"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	var v string
	if err := db.View(func(n storm.Node) error { return n.Get("k", "half", &v) }); !errors.Is(err, storm.ErrNotFound) {
		t.Fatalf("a failed update left %q (err %v)", v, err)
	}
	// A panic inside a transaction is an error, not a crash, and rolls back.
	err = db.Update(func(n storm.Node) error {
		n.Set("k", "p", "x")
		panic("bad")
	})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("panic: err = %v", err)
	}
	if err := db.View(func(n storm.Node) error { return n.Get("k", "p", &v) }); !errors.Is(err, storm.ErrNotFound) {
		t.Fatalf("a panicking update left %q", v)
	}
}

func TestNewDoesNotTouchTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep", "j.db")
	if _, err := New(path, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatal("New created the directory")
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("JARVIS_DB", "")
	t.Setenv("XDG_DATA_HOME", "/data")
	if got := DefaultPath(); got != "/data/jarvis/jarvis.db" {
		t.Fatal(got)
	}
	t.Setenv("JARVIS_DB", "/x/y.db")
	if got := DefaultPath(); got != "/x/y.db" {
		t.Fatal(got)
	}
}

func TestHomeIsExpandedInPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	db, err := New("~/data/j.db", "x")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "data", "j.db"); db.Path() != want {
		t.Fatalf("path = %s, want %s", db.Path(), want)
	}
}

// Compact gives back the pages a large delete freed, keeps every record,
// and another handle on the same file goes on with the new file.
func TestCompactShrinksTheFileAndKeepsTheData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	db, err := Open(path, "memory compact")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	big := strings.Repeat("x", 4096)
	if err := db.Update(func(n storm.Node) error {
		for i := range 2000 {
			if err := n.Set("junk", i, big); err != nil {
				return err
			}
		}
		return n.Set("keep", "k", "kept")
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(n storm.Node) error { return n.Drop("junk") }); err != nil {
		t.Fatal(err)
	}
	other, _ := New(path, "tui")
	defer other.Close()
	var v string
	if err := other.View(func(n storm.Node) error { return n.Get("keep", "k", &v) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	res, err := db.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if res.After >= res.Before/2 {
		t.Fatalf("compacted %d -> %d bytes", res.Before, res.After)
	}
	v = ""
	if err := other.View(func(n storm.Node) error { return n.Get("keep", "k", &v) }); err != nil || v != "kept" {
		t.Fatalf("after compaction: %q %v", v, err)
	}
}
