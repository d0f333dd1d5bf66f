package sessions

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

// leaseEnv and leaseIDEnv name the database and the session a
// re-executed test binary holds until it is killed.
const (
	leaseEnv   = "JARVIS_SESSIONS_LEASE_DB"
	leaseIDEnv = "JARVIS_SESSIONS_LEASE_ID"
)

// leaseChild holds a session, says so on stdout, and waits to be killed.
func leaseChild(path, id string) int {
	db, err := store.Open(path, "lease test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := New(db).Hold(id, "the lease test"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
	return 0
}

// One jarvis holds a session at a time; the one turned away is told who
// holds it, and can hold it once it is let go.
func TestASessionIsHeldOnceAndSaysByWhom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	a, _ := openStore(t, path)
	b, _ := openStore(t, path) // another handle: as another process would
	sess, err := a.Create(Meta{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := a.Hold(sess.ID, "the workbench")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Hold(sess.ID, "jarvis ask")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("a second hold gave %v, want a HeldError", err)
	}
	msg := err.Error()
	for _, want := range []string{sess.ID, "open in another jarvis", "the workbench", fmt.Sprintf("pid %d", os.Getpid()), "since "} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	// Another session is not held.
	other, _ := a.Create(Meta{Model: "m"})
	l2, err := b.Hold(other.ID, "jarvis ask")
	if err != nil {
		t.Fatalf("holding another session: %v", err)
	}
	l2.Release()

	lease.Release()
	lease.Release() // twice is fine
	again, err := b.Hold(sess.ID, "jarvis ask")
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	again.Release()
	var none *Lease
	none.Release()

	if _, err := a.Hold("../escape", "x"); err == nil {
		t.Error("a path was taken as a session id")
	}
}

// A jarvis that dies holding a session does not keep it: the operating
// system lets go of its lock, whatever killed it.
func TestACrashedHolderDoesNotKeepTheSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	s, db := openStore(t, path)
	sess, err := s.Create(Meta{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close() // the child opens the file itself
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaseEnv+"="+path, leaseIDEnv+"="+sess.ID)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		cmd.Wait()
		t.Fatalf("the child did not hold the session: %q %s", line, stderr.String())
	}
	_, err = s.Hold(sess.ID, "the workbench")
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.PID != cmd.Process.Pid || held.Holder.What != "the lease test" {
		t.Fatalf("while the child holds it: %v (holder %+v)", err, held)
	}
	cmd.Process.Kill()
	cmd.Wait()
	lease, err := s.Hold(sess.ID, "the workbench")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	lease.Release()
}
