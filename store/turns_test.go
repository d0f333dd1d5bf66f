package store

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asdine/storm/v3"
)

// A holder that commits transaction after transaction lets a waiting
// handle in between two of them, instead of keeping the file until its
// work ends (bbolt's lock alone is not fair to the one that polls).
func TestLongWorkLetsAWaiterInBetweenTransactions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	worker, err := Open(path, "memory index")
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	other, err := New(path, "tui")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetTimeout(20 * time.Second) // a hang guard, not the measure

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	commits := 0
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := worker.Update(func(n storm.Node) error {
				time.Sleep(5 * time.Millisecond) // a short batch
				return n.Set("work", strconv.Itoa(i), i)
			})
			if err != nil {
				t.Errorf("worker: %v", err)
				return
			}
			commits++
		}
	}()
	time.Sleep(50 * time.Millisecond)
	for i := range 5 {
		if err := other.Update(func(n storm.Node) error { return n.Set("chat", strconv.Itoa(i), i) }); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	if commits < 2 {
		t.Fatalf("the worker committed %d times", commits)
	}
	var n int
	if err := worker.View(func(node storm.Node) error { return node.Get("chat", "4", &n) }); err != nil || n != 4 {
		t.Fatalf("the waiter's writes are not there: %d %v", n, err)
	}
}

// Tickets left by processes that are gone, and tickets older than any
// wait can be, do not hold anyone back.
func TestDeadAndStaleTicketsAreIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	dir := waitDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, "1-"+strconv.Itoa(deadPID(t))+"-aa")
	stale := filepath.Join(dir, "2-"+strconv.Itoa(os.Getpid())+"-bb")
	for _, f := range []string{dead, stale} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * ticketLifetime)
	os.Chtimes(stale, old, old)
	if othersWaiting(path) {
		t.Fatal("a dead or stale ticket counts as a waiter")
	}
	tk := takeTicket(path)
	defer tk.leave()
	if !tk.first() {
		t.Fatal("a dead or stale ticket is ahead in the line")
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatal("the dead process's ticket was not removed")
	}
	// A live ticket ahead of ours does count.
	live := filepath.Join(dir, "3-"+strconv.Itoa(os.Getpid())+"-cc")
	os.WriteFile(live, nil, 0o600)
	if tk.first() {
		t.Fatal("an older live ticket does not hold us back")
	}
	if !othersWaiting(path) {
		t.Fatal("a live ticket does not make the holder let go")
	}
}

// deadPID returns the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("cannot start /bin/true:", err)
	}
	st, _ := p.Wait()
	return st.Pid()
}
