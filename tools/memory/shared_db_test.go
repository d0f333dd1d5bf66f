package memory

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	memstore "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// indexChildEnv makes the test binary a second jarvis process that indexes
// a tree into a database: "DB|DIR".
const indexChildEnv = "JARVIS_TEST_INDEX_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(indexChildEnv); spec != "" {
		os.Exit(indexChild(spec))
	}
	os.Exit(m.Run())
}

// indexChild indexes DIR into DB, saying "started" when its first batch
// is committed, "batch MS" after each batch with how long it took, and
// "done" at the end.
func indexChild(spec string) int {
	dbPath, dir, _ := strings.Cut(spec, "|")
	db, err := store.New(dbPath, "memory index")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer db.Close()
	s, err := memstore.New(db, memstore.Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	said := false
	last := time.Now()
	_, err = IndexPath(context.Background(), s, dir, IndexOptions{Progress: func(p Progress) {
		if p.Files == 0 {
			last = time.Now() // the tree is listed: the first batch starts
			return
		}
		if !said {
			said = true
			fmt.Println("started")
		}
		fmt.Println("batch", time.Since(last).Milliseconds())
		last = time.Now()
	}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("done")
	return 0
}

// textTree writes files of English-like text, totalling about size bytes.
func textTree(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	// A vocabulary of made-up words, as varied as real text's.
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	words := make([]string, 20000)
	for i := range words {
		w := make([]byte, 3+rng.Intn(8))
		for j := range w {
			w[j] = letters[int(rng.ExpFloat64()*5)%len(letters)]
		}
		words[i] = string(w)
	}
	var b strings.Builder
	for f, written := 0, 0; written < size; f++ {
		b.Reset()
		for b.Len() < 64<<10 {
			for range 12 {
				b.WriteString(words[rng.Intn(len(words))])
				b.WriteByte(' ')
			}
			b.WriteString(fmt.Sprintf("n%d.\n", rng.Intn(100000)))
		}
		path := filepath.Join(dir, fmt.Sprintf("d%02d", f%16), fmt.Sprintf("f%04d.txt", f))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		written += b.Len()
	}
	return dir
}

// saveDuringIndex starts another process indexing a tree of size bytes
// into a database, saves one chat message every 100 ms from this one until
// the index ends, and returns how long each save waited for the file, the
// longest batch the index took, and the session's id.
func saveDuringIndex(t testing.TB, size int) (waits []time.Duration, longest time.Duration, db *store.DB, sessionID string, saved int) {
	t.Helper()
	dir := textTree(t, size)
	dbPath := filepath.Join(t.TempDir(), "jarvis.db")
	db, err := store.New(dbPath, "tui")
	if err != nil {
		t.Fatal(err)
	}
	ss := sessions.New(db)
	sess, err := ss.Create(sessions.Meta{Model: "qwen3:8b"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), indexChildEnv+"="+dbPath+"|"+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; l != "started" {
		child.Wait()
		t.Fatalf("the indexing process said %q", l)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case l := <-lines:
			if ms, ok := strings.CutPrefix(l, "batch "); ok {
				n, _ := strconv.Atoi(ms)
				longest = max(longest, time.Duration(n)*time.Millisecond)
				continue
			}
			if l != "done" {
				t.Fatalf("the indexing process said %q", l)
			}
			done = true
		case <-tick.C:
			saved++
			start := time.Now()
			err := ss.Append(sess.ID, sessions.Message{Role: sessions.RoleUser, Content: fmt.Sprintf("message %d", saved)})
			if err != nil {
				t.Fatalf("save %d failed: %v", saved, err)
			}
			waits = append(waits, time.Since(start))
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("the indexing process: %v", err)
	}
	return waits, longest, db, sess.ID, saved
}

// A long index in one process and a chat saving a message every 100 ms in
// another: every message is in the database afterwards, and no save waits
// more than a second. A save waits for at most the batch in progress and
// its own write; on a machine so loaded that one batch of the index takes
// longer than that (batches aim at a quarter of a second, measured on the
// machine), the bound is two batches. BenchmarkSaveWhileIndexing measures
// the waits.
func TestChatSavesWhileAnotherProcessIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes several megabytes in another process")
	}
	// The index must outlast a few saves: a machine that indexes the
	// text faster than that gets four times as much, up to twice.
	waits, longest, db, id, saved := saveDuringIndex(t, 6<<20)
	for size := 24 << 20; saved < 5 && size <= 96<<20; size *= 4 {
		db.Close()
		waits, longest, db, id, saved = saveDuringIndex(t, size)
	}
	defer db.Close()
	if saved < 5 {
		t.Fatalf("the index ended after %d saves: too short to show anything", saved)
	}
	_, msgs, err := sessions.New(db).Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != saved {
		t.Fatalf("%d messages saved, %d in the database", saved, len(msgs))
	}
	for i, m := range msgs {
		if m.Content != fmt.Sprintf("message %d", i+1) {
			t.Fatalf("message %d is %q", i+1, m.Content)
		}
	}
	bound := max(time.Second, 2*longest)
	if worst := slices.Max(waits); worst > bound {
		t.Fatalf("a save waited %s for the indexing process, whose longest batch took %s (waits: %v)", worst, longest, waits)
	}
}

// BenchmarkSaveWhileIndexing reports how long a chat's save waits for the
// database while another process indexes (p50, p99 and the worst, in ms).
func BenchmarkSaveWhileIndexing(b *testing.B) {
	var all []time.Duration
	for range b.N {
		waits, _, db, _, _ := saveDuringIndex(b, 12<<20)
		db.Close()
		all = append(all, waits...)
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(int(p*float64(len(all))), len(all)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(float64(len(all)), "saves")
}
