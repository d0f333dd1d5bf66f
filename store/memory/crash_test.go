package memory

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

// crashChildEnv, set to a database path, makes the test binary run
// crashChild instead of the tests.
const crashChildEnv = "JARVIS_MEMORY_CRASH_CHILD"

// crashContent is the text the crash child stores for a source at a
// version: a unique marker word at both ends and corpus text between, long
// enough for several chunks.
func crashContent(src, version int) string {
	c := newCorpus(int64(src*1000+version), 5000, true)
	marker := crashMarker(src, version)
	return marker + " " + c.text(700) + " " + marker
}

func crashMarker(src, version int) string { return fmt.Sprintf("qzmark%dv%d", src, version) }

// crashChild indexes batches forever, printing "begin" with the sources of
// a batch before writing it and "commit" with their versions once the
// transaction has returned, until it is killed. Every third batch also
// re-indexes an earlier source with a new version.
func crashChild() {
	path := os.Getenv(crashChildEnv)
	db, err := store.Open(path, "crash-child")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := New(db, Options{ChunkSize: 120, ChunkOverlap: 16})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	version := map[int]int{}
	next := 0
	for batch := 0; batch < 100_000; batch++ {
		var srcs []int
		for range 4 {
			srcs = append(srcs, next)
			next++
		}
		if batch%3 == 2 {
			srcs = append(srcs, rng.Intn(next-4))
		}
		ins := make([]Input, len(srcs))
		var begin, commit []string
		for i, src := range srcs {
			v := version[src] + 1
			ins[i] = Input{Content: crashContent(src, v), Source: fmt.Sprintf("src-%d", src), Replace: true}
			begin = append(begin, fmt.Sprint(src))
			commit = append(commit, fmt.Sprintf("%d=%d", src, v))
		}
		fmt.Println("begin", strings.Join(begin, " "))
		if _, err := s.AddBatch(context.Background(), ins); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for _, src := range srcs {
			version[src]++
		}
		fmt.Println("commit", strings.Join(commit, " "))
	}
}

// TestCrashMidIndexing kills a process that is indexing (SIGKILL, at a
// random moment after some commits) and checks that the database opens,
// that every committed document is whole and searchable, that a batch in
// flight is either wholly there or wholly absent, and that the index is
// exactly consistent with the stored chunks.
func TestCrashMidIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) { crashRound(t, 5+round*7) })
	}
}

func crashRound(t *testing.T, commits int) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	committed := map[int]int{} // source -> version
	var inFlight []int
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	seen := 0
	for sc.Scan() && time.Now().Before(deadline) {
		f := strings.Fields(sc.Text())
		switch f[0] {
		case "error":
			cmd.Process.Kill()
			t.Fatalf("child: %s", sc.Text())
		case "begin":
			inFlight = inFlight[:0]
			for _, x := range f[1:] {
				var src int
				fmt.Sscan(x, &src)
				inFlight = append(inFlight, src)
			}
		case "commit":
			for _, x := range f[1:] {
				var src, v int
				fmt.Sscanf(x, "%d=%d", &src, &v)
				committed[src] = v
			}
			inFlight = inFlight[:0]
			seen++
		}
		if seen >= commits {
			// Let the next transaction get under way, then kill.
			time.Sleep(time.Duration(rand.Intn(15)) * time.Millisecond)
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Lines written before the kill still count: a commit printed is a
	// commit made.
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[0] == "commit" {
			for _, x := range f[1:] {
				var src, v int
				fmt.Sscanf(x, "%d=%d", &src, &v)
				committed[src] = v
			}
			inFlight = inFlight[:0]
		} else if len(f) > 0 && f[0] == "begin" {
			inFlight = inFlight[:0]
			for _, x := range f[1:] {
				var src int
				fmt.Sscan(x, &src)
				inFlight = append(inFlight, src)
			}
		}
	}
	cmd.Wait()
	if seen < commits {
		t.Fatalf("child made only %d commits", seen)
	}

	db, err := store.Open(path, "test")
	if err != nil {
		t.Fatalf("database does not open after the kill: %v", err)
	}
	defer db.Close()
	s := reopen(t, db, Options{ChunkSize: 120, ChunkOverlap: 16})
	ctx := context.Background()
	// Was the batch in flight committed? All of its documents or none.
	flight := map[int]bool{}
	landed := 0
	for _, src := range inFlight {
		flight[src] = true
		docs, err := s.List(ctx, fmt.Sprintf("src-%d", src))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 1 && docs[0].Hash == hashOf(crashContent(src, committed[src]+1)) {
			landed++
		}
	}
	if landed != 0 && landed != len(inFlight) {
		t.Fatalf("half a batch was committed: %d of %d documents", landed, len(inFlight))
	}
	t.Logf("%d sources committed, batch in flight of %d landed: %v", len(committed), len(inFlight), landed > 0)
	for src, v := range committed {
		if flight[src] && landed > 0 {
			v++
		}
		docs, err := s.List(ctx, fmt.Sprintf("src-%d", src))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 1 {
			t.Fatalf("source %d: %d documents, want 1", src, len(docs))
		}
		doc, err := s.Get(ctx, docs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Content != crashContent(src, v) {
			t.Fatalf("source %d version %d: content differs after the crash", src, v)
		}
		if ids := searchIDs(t, s, crashMarker(src, v), 3); len(ids) == 0 || ids[0] != doc.ID {
			t.Fatalf("source %d: marker search found %v, want %s first", src, ids, doc.ID)
		}
		if v > 1 {
			if ids := searchIDs(t, s, crashMarker(src, v-1), 3); len(ids) != 0 {
				t.Fatalf("source %d: the replaced version is still found", src)
			}
		}
	}
	checkIndex(t, db)
}
