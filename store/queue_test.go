package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
)

// The test kinds: "test.put" appends its value to a list under its name;
// "test.fail" always fails (a write that can never land).
func init() {
	RegisterOp("test.put", func(n storm.Node, data json.RawMessage) error {
		var p testPut
		if err := json.Unmarshal(data, &p); err != nil {
			return err
		}
		var list []int
		if err := n.Get("test", p.List, &list); err != nil && !errors.Is(err, storm.ErrNotFound) {
			return err
		}
		return n.Set("test", p.List, append(list, p.Value))
	})
	RegisterOp("test.fail", func(storm.Node, json.RawMessage) error { return errors.New("the disk is full") })
}

type testPut struct {
	List  string `json:"list"`
	Value int    `json:"value"`
}

func put(t *testing.T, list string, v int) Op {
	t.Helper()
	op, err := NewOp("test.put", fmt.Sprintf("value %d", v), testPut{List: list, Value: v})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func readList(t *testing.T, db *DB, list string) []int {
	t.Helper()
	var got []int
	if err := db.View(func(n storm.Node) error { return n.Get("test", list, &got) }); err != nil && !errors.Is(err, storm.ErrNotFound) {
		t.Fatal(err)
	}
	return got
}

func wantList(t *testing.T, got []int, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d values landed, want %d: %v", len(got), n, got)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("values out of order or repeated: %v", got)
		}
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Writes handed over while another process holds the file wait, in order,
// in a journal, and all land once the file is free; the journal is gone
// afterwards.
func TestQueuedWritesWaitForTheFileAndLandInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	holder, err := Open(path, "memory index")
	if err != nil {
		t.Fatal(err)
	}
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	db, err := New(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := db.Queue()
	var mu sync.Mutex
	var states []QueueState
	q.OnChange(func(s QueueState) { mu.Lock(); states = append(states, s); mu.Unlock() })
	for i := range 20 {
		q.Enqueue(put(t, "chat", i))
	}
	// The first write cannot get the file: the queue says it is waiting,
	// and the writes are in the journal.
	deadline := time.Now().Add(10 * time.Second)
	for !q.State().Waiting {
		if time.Now().After(deadline) {
			t.Fatal("the queue never said it was waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
	journal, err := readJournal(q.journalPath())
	if err != nil || len(journal) != 20 {
		t.Fatalf("journal holds %d ops (%v), want 20", len(journal), err)
	}
	if st := q.State(); st.Pending != 20 {
		t.Fatalf("pending = %d", st.Pending)
	}
	release()
	holder.Close()
	if err := q.Flush(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	wantList(t, readList(t, db, "chat"), 20)
	if _, err := os.Stat(q.journalPath()); !os.IsNotExist(err) {
		t.Fatal("the journal stayed after every write landed")
	}
	// The last state told (it may follow Flush by a moment) is "nothing
	// pending".
	var last QueueState
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		last = states[len(states)-1]
		mu.Unlock()
		if last.Pending == 0 && !last.Waiting {
			return
		}
	}
	t.Fatalf("last state %+v", last)
}

// A process that has to stop with writes pending says how many and where
// they are kept; the next process imports them, in order, exactly once.
func TestPendingWritesSurviveTheProcessAndAreImportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	holder, err := Open(path, "memory index")
	if err != nil {
		t.Fatal(err)
	}
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := New(path, "tui")
	// Short waits, so that the queue's last attempt ends soon after Close:
	// in a real stop the process ends with it; here it must not go on
	// writing beside the "next process" below.
	first.SetTimeout(200 * time.Millisecond)
	q := first.Queue()
	for i := range 5 {
		q.Enqueue(put(t, "chat", i))
	}
	err = q.Close(ctxFor(t, 1500*time.Millisecond))
	var pending *PendingError
	if !errors.As(err, &pending) || pending.Pending != 5 || !strings.Contains(err.Error(), pending.Journal) {
		t.Fatalf("close: %v", err)
	}
	select {
	case <-q.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the queue went on after Close")
	}
	first.Close()
	release()
	holder.Close()

	// The journal's name carries this process's pid; a new handle in the
	// same process stands for the next start only if the journal looks
	// like another process's. Rename it as a dead process's would be.
	orphan := filepath.Join(filepath.Dir(pending.Journal), fmt.Sprintf("%d-1.jsonl", deadPID(t)))
	if err := os.Rename(pending.Journal, orphan); err != nil {
		t.Fatal(err)
	}
	// One write of the journal landed before the crash (its key is
	// recorded): it must not land twice.
	ops, _ := readJournal(orphan)
	pre, _ := New(path, "pre")
	if err := pre.Update(func(n storm.Node) error {
		if err := n.Set(appliedBucket, ops[0].Key, time.Now().Unix()); err != nil {
			return err
		}
		return n.Set("test", "chat", []int{0})
	}); err != nil {
		t.Fatal(err)
	}
	pre.Close()

	next, _ := New(path, "tui")
	defer next.Close()
	nq := next.Queue()
	nq.Enqueue(put(t, "chat", 5)) // after the imported ones
	if err := nq.Flush(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	wantList(t, readList(t, next, "chat"), 6)
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatal("the imported journal was not removed")
	}
}

// A live process's journal is its own: another process does not import it.
func TestALiveProcessJournalIsLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	dir := path + ".pending"
	os.MkdirAll(dir, 0o700)
	other := filepath.Join(dir, fmt.Sprintf("%d-1.jsonl", os.Getppid()))
	op := put(t, "chat", 0)
	b, _ := json.Marshal(op)
	os.WriteFile(other, append(b, '\n'), 0o600)
	db, _ := New(path, "tui")
	defer db.Close()
	if err := db.Queue().Flush(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := readList(t, db, "chat"); len(got) != 0 {
		t.Fatalf("imported a live process's journal: %v", got)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("a live process's journal was removed")
	}
}

// A write that fails for a reason other than the lock is not retried for
// ever and not thrown away: it is kept in the recovery directory, the
// error says where, and the writes after it still land.
func TestAWriteThatCannotLandIsKeptAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	db, _ := New(path, "tui")
	defer db.Close()
	q := db.Queue()
	errs := make(chan error, 4)
	q.OnChange(func(s QueueState) {
		if s.Err != nil {
			errs <- s.Err
		}
	})
	bad, _ := NewOp("test.fail", "a message of session X", map[string]int{"n": 1})
	q.Enqueue(bad, put(t, "chat", 0))
	if err := q.Flush(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	wantList(t, readList(t, db, "chat"), 1)
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "a message of session X") || !strings.Contains(err.Error(), "the disk is full") || !strings.Contains(err.Error(), ".recovery") {
			t.Fatalf("error does not say what, why and where: %v", err)
		}
		files, _ := filepath.Glob(path + ".recovery/failed-*.json")
		if len(files) != 1 {
			t.Fatalf("recovery files: %v", files)
		}
	default:
		t.Fatal("the failure was not reported")
	}
}
