package sessions

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/jarvis-workbench/jarvis/store"
)

// crashEnv names the database a re-executed test binary appends to until
// it is killed.
const crashEnv = "JARVIS_SESSIONS_CRASH_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		os.Exit(crashChild(path))
	}
	if path := os.Getenv(leaseEnv); path != "" {
		os.Exit(leaseChild(path, os.Getenv(leaseIDEnv)))
	}
	os.Exit(m.Run())
}

// crashMessage is the n-th message (from 1) of a session in the crash test;
// every third one is a reply with usage, every third a tool result.
func crashMessage(n int) Message {
	m := Message{Content: fmt.Sprintf("message %d %s", n, strings.Repeat("x", n%97))}
	switch n % 3 {
	case 0:
		m.Role = RoleUser
	case 1:
		m.Role = RoleAssistant
		m.Usage = &Usage{PromptTokens: n, OutputTokens: 2 * n, CostUSD: float64(n) / 1e6}
	case 2:
		m.Role = RoleTool
		m.Result = &ToolResult{Success: true, Status: "ok", CostUSD: float64(n) / 1e5}
	}
	return m
}

// crashChild appends to sessions, one to three messages per Append and a
// new session every 40 messages, and reports each commit on stdout. It
// stops by itself after a bounded number of appends.
func crashChild(path string) int {
	db, err := store.Open(path, "crash test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := New(db)
	out := bufio.NewWriter(os.Stdout)
	var sess Session
	n := 0
	for i := 0; i < 20000; i++ {
		if i%20 == 0 {
			if sess, err = s.Create(Meta{Model: "m"}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			n = 0
		}
		batch := 1 + (i%20)%3
		var msgs []Message
		for range batch {
			n++
			msgs = append(msgs, crashMessage(n))
		}
		if err := s.Append(sess.ID, msgs...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "%s %d\n", sess.ID, n)
		out.Flush()
	}
	return 0
}

// TestKilledWriterLeavesConsistentSessions kills a process with SIGKILL
// while it appends and checks that the database opens with every committed
// message and no half-written append. The kill comes at a different delay
// after a report in each round, so it lands at different points of an
// append: before, between and inside its writes and fsyncs.
func TestKilledWriterLeavesConsistentSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes that write for a while")
	}
	for round := range 5 {
		delay := time.Duration(round)*2500*time.Microsecond + time.Duration(rand.IntN(1000))*time.Microsecond
		t.Run(fmt.Sprintf("kill %s after a commit", delay.Round(100*time.Microsecond)), func(t *testing.T) {
			killAndCheck(t, delay)
		})
	}
}

func killAndCheck(t *testing.T, delay time.Duration) {
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read the child's reports; once it has committed a good number of
	// appends, kill it after the round's delay.
	const kill = 100
	committed := map[string]int{}
	var lastID string
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	reports := 0
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		n, _ := strconv.Atoi(f[1])
		committed[f[0]], lastID = n, f[0]
		if reports++; reports == kill {
			time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		}
	}
	werr := cmd.Wait()
	if reports < kill {
		t.Fatalf("the child stopped after %d appends: %v\n%s", reports, werr, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed by SIGKILL: %v", werr)
	}

	// bbolt's own consistency check first: pages, freelist, buckets.
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("the database does not open after the kill: %v", err)
	}
	err = bdb.View(func(tx *bolt.Tx) error {
		for cerr := range tx.Check() {
			return cerr
		}
		return nil
	})
	bdb.Close()
	if err != nil {
		t.Fatalf("bbolt check: %v", err)
	}

	s, _ := openStore(t, path)
	list, err := s.List(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) < len(committed) {
		t.Fatalf("%d sessions stored, %d reported", len(list), len(committed))
	}
	for _, sess := range list {
		got, msgs, err := s.Load(sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Messages != len(msgs) {
			t.Fatalf("session %s says %d messages, has %d", sess.ID, got.Messages, len(msgs))
		}
		if want, ok := committed[sess.ID]; ok && len(msgs) < want {
			t.Fatalf("session %s lost committed messages: %d stored, %d reported", sess.ID, len(msgs), want)
		}
		// A session may hold one append more than reported (committed, then
		// killed before the report), never part of one.
		var want Totals
		for i, m := range msgs {
			exp := crashMessage(i + 1)
			exp.Seq, exp.CreatedAt = i+1, m.CreatedAt
			if m.Seq != exp.Seq || m.Role != exp.Role || m.Content != exp.Content {
				t.Fatalf("session %s message %d is %q (%s), want %q (%s)", sess.ID, i+1, m.Content, m.Role, exp.Content, exp.Role)
			}
			want.Add(m)
		}
		if !totalsEqual(got.Totals, want) {
			t.Fatalf("session %s totals %+v do not match its messages %+v", sess.ID, got.Totals, want)
		}
		if n := len(msgs); n > 0 && !validBatchEnd(n) {
			t.Fatalf("session %s ends after message %d, inside an append", sess.ID, n)
		}
	}
	if _, msgs, _ := s.Load(lastID); len(msgs) < committed[lastID] {
		t.Fatalf("last reported session lost messages")
	}
}

// validBatchEnd reports whether a session of crashChild can end after n
// messages: its appends carry 1, 2, 3, 1, 2, 3, ... messages.
func validBatchEnd(n int) bool {
	for sum, i := 0, 0; sum <= n; i++ {
		if sum == n {
			return true
		}
		sum += 1 + i%3
	}
	return false
}
