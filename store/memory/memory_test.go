package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

var ctx = context.Background()

func mustAdd(t *testing.T, s *Store, in Input) Added {
	t.Helper()
	a, err := s.Add(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustSearch(t *testing.T, s *Store, q string, k int) []Hit {
	t.Helper()
	res, err := s.Search(ctx, q, k)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res.Hits
}

// TestBM25Ranking checks the order and the scores on a corpus small enough
// to compute by hand. After analysis (stems; stop words are indexed too):
//
//	A  solar panel convert sunlight into electr                  dl 6
//	B  solar power solar panel solar farm and solar invert       dl 9
//	C  wind turbin convert wind into electr                      dl 6
//	D  the histori of the bicycl                                 dl 5
//
// N = 4, avgdl = 6.5; "solar" and "electr" each have df 2, so idf = ln 2
// for both. A term with frequency tf in a chunk of length dl scores
// idf * 2.2 tf / (tf + 1.2 (0.25 + 0.75 dl/avgdl)); the best possible
// score for the query is 2 * 2.2 * ln2.
func TestBM25Ranking(t *testing.T) {
	s, db := openTest(t, Options{})
	ids := map[string]string{}
	for name, text := range map[string]string{
		"A": "Solar panels convert sunlight into electricity.",
		"B": "Solar power: solar panels, solar farms and solar inverters.",
		"C": "Wind turbines convert wind into electricity.",
		"D": "The history of the bicycle.",
	} {
		ids[mustAdd(t, s, Input{Content: text, Source: name}).ID] = name
	}
	hits := mustSearch(t, s, "solar electricity", 10)
	var order []string
	for _, h := range hits {
		order = append(order, ids[h.DocID])
	}
	if !slices.Equal(order, []string{"A", "B", "C"}) {
		t.Fatalf("order = %v, want [A B C] (D shares no term)", order)
	}
	ln2, best := math.Ln2, 2*2.2*math.Ln2
	term := func(tf, dl float64) float64 { return ln2 * 2.2 * tf / (tf + 1.2*(0.25+0.75*dl/6.5)) }
	want := []float64{2 * term(1, 6) / best, term(4, 9) / best, term(1, 6) / best}
	for i, h := range hits {
		if math.Abs(h.Score-want[i]) > 1e-6 || h.Score != h.Lexical {
			t.Errorf("%s: score %.6f, want %.6f", order[i], h.Score, want[i])
		}
	}
	if hits[0].Source != "A" || hits[0].Content != "Solar panels convert sunlight into electricity." || hits[0].Chunk != 0 {
		t.Errorf("hit = %+v", hits[0])
	}
	checkIndex(t, db)
}

func TestBM25Properties(t *testing.T) {
	s, _ := openTest(t, Options{})
	filler := " lorem ipsum dolor amet consectetur adipiscing elit sed eiusmod tempor"
	short := mustAdd(t, s, Input{Content: "kiwi banana"}).ID
	long := mustAdd(t, s, Input{Content: "kiwi banana" + filler + filler}).ID
	if h := mustSearch(t, s, "kiwi", 2); h[0].DocID != short || h[1].DocID != long {
		t.Errorf("the shorter chunk should rank first for the same term frequency")
	}
	many := mustAdd(t, s, Input{Content: "mango mango mango papaya" + filler}).ID
	once := mustAdd(t, s, Input{Content: "mango papaya" + filler}).ID
	if h := mustSearch(t, s, "mango", 2); h[0].DocID != many || h[1].DocID != once {
		t.Errorf("more occurrences should rank first")
	}
	// A rare term outweighs a common one (idf).
	rare := mustAdd(t, s, Input{Content: "durian" + filler}).ID
	if h := mustSearch(t, s, "durian lorem", 1); h[0].DocID != rare {
		t.Errorf("the chunk with the rare term should rank first")
	}
	// Scores are on the 0..1 scale.
	for _, h := range mustSearch(t, s, "kiwi banana mango papaya durian lorem", 10) {
		if h.Score <= 0 || h.Score >= 1 {
			t.Errorf("score %v outside (0, 1)", h.Score)
		}
	}
}

func TestSearchIgnoresCaseStemsAndPunctuation(t *testing.T) {
	s, _ := openTest(t, Options{})
	id := mustAdd(t, s, Input{Content: "The runners were running quickly through the Park."}).ID
	mustAdd(t, s, Input{Content: "Something else entirely about cooking pasta."})
	for _, q := range []string{
		"run", "RUNS", "Runner", "park", "PARKS",
		`"running"`, "'runner'", "running!!!", "(run) AND \"park\"?", "run-park", "run*", "run:park",
		`NEAR(run`, `run'); DROP TABLE memory; --`, "“quickly”", "run\x00park", "   run   ",
	} {
		hits := mustSearch(t, s, q, 5)
		if len(hits) != 1 || hits[0].DocID != id {
			t.Errorf("query %q found %d hits, want the runners' text", q, len(hits))
		}
	}
	for _, q := range []string{"", `"`, "''", "***", "?!"} {
		if hits := mustSearch(t, s, q, 5); len(hits) != 0 {
			t.Errorf("query %q without index terms found %d hits", q, len(hits))
		}
	}
	// A query of stop words alone still searches for them, all of them.
	if hits := mustSearch(t, s, "through the", 5); len(hits) != 1 || hits[0].DocID != id {
		t.Errorf("query of stop words found %d hits, want the text with \"through the\"", len(hits))
	}
}

func TestSearchUnicode(t *testing.T) {
	s, _ := openTest(t, Options{})
	de := mustAdd(t, s, Input{Content: "Der Ärger über die Größe des Cafés."}).ID
	ja := mustAdd(t, s, Input{Content: "東京タワーは東京の名所です。"}).ID
	for q, want := range map[string]string{"ÄRGER": de, "größe": de, "cafe\u0301s": de, "東京": ja} {
		if hits := mustSearch(t, s, q, 1); len(hits) != 1 || hits[0].DocID != want {
			t.Errorf("query %q: %v", q, hits)
		}
	}
}

func TestReindexReplacesChunks(t *testing.T) {
	s, db := openTest(t, Options{ChunkSize: 20, ChunkOverlap: 4})
	v1 := strings.Repeat(sentence("alpha", 9)+" ", 6)
	v2 := strings.Repeat(sentence("beta", 9)+" ", 4)
	a1 := mustAdd(t, s, Input{Content: v1, Source: "/notes.md", Replace: true})
	if a1.Chunks < 3 {
		t.Fatalf("%d chunks; the test wants several", a1.Chunks)
	}
	mustAdd(t, s, Input{Content: "unrelated gamma text", Source: "/other.md", Replace: true})
	a2 := mustAdd(t, s, Input{Content: v2, Source: "/notes.md", Replace: true})
	if a2.Replaced != 1 || a2.Unchanged || a2.ID == a1.ID {
		t.Fatalf("re-index of a changed file: %+v", a2)
	}
	if hits := mustSearch(t, s, "alpha3", 5); len(hits) != 0 {
		t.Errorf("old chunks still found: %v", hits)
	}
	if hits := mustSearch(t, s, "beta3", 50); len(hits) != a2.Chunks {
		t.Errorf("found %d new chunks, want %d", len(hits), a2.Chunks)
	}
	docs, _ := s.List(ctx, "/notes.md")
	if len(docs) != 1 || docs[0].ID != a2.ID {
		t.Errorf("documents of the source: %v", docs)
	}
	// The same content again: nothing written.
	st1, _ := s.Stats(ctx)
	a3 := mustAdd(t, s, Input{Content: v2, Source: "/notes.md", Replace: true})
	if !a3.Unchanged || a3.ID != a2.ID || a3.Chunks != a2.Chunks {
		t.Errorf("unchanged file: %+v", a3)
	}
	// Other chunking re-indexes even with the same content.
	a4 := mustAdd(t, s, Input{Content: v2, Source: "/notes.md", Replace: true, ChunkSize: 50, ChunkOverlap: 0})
	if a4.Unchanged || a4.Replaced != 1 {
		t.Errorf("new chunking: %+v", a4)
	}
	st2, _ := s.Stats(ctx)
	if st2.Documents != st1.Documents || st2.Documents != 2 {
		t.Errorf("documents %d then %d, want 2", st1.Documents, st2.Documents)
	}
	checkIndex(t, db)
}

func TestSameSourceTwiceInOneBatch(t *testing.T) {
	s, db := openTest(t, Options{})
	out, err := s.AddBatch(ctx, []Input{
		{Content: "first version kumquat", Source: "f", Replace: true},
		{Content: "second version loquat", Source: "f", Replace: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out[1].Replaced != 1 {
		t.Errorf("second input should replace the first: %+v", out)
	}
	if h := mustSearch(t, s, "kumquat", 5); len(h) != 0 {
		t.Error("the replaced text is still found")
	}
	checkIndex(t, db)
}

// TestATransactionOfTwoDicts writes a batch analysed with one dict while
// the text it replaces is analysed with another (the first having filled
// up in between): a term both texts hold must still be one term of the
// transaction, its postings and dead count together.
func TestATransactionOfTwoDicts(t *testing.T) {
	s, db := openTest(t, Options{})
	mustAdd(t, s, Input{Content: "shared quince words of the first version", Source: "f", Replace: true})
	b, err := s.Prepare(ctx, []Input{{Content: "shared quince words, second version, with medlar", Source: "f", Replace: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.an.wait(0); err != nil {
		t.Fatal(err)
	}
	old := s.an.dict
	s.an.vocabMu.Lock()
	s.an.dict, s.an.idle = newDict(0), nil
	s.an.vocabMu.Unlock()
	if _, err := b.Write(); err != nil {
		t.Fatal(err)
	}
	if s.an.dict == old {
		t.Fatal("the test did not give the writer a second dict")
	}
	for _, q := range []string{"quince", "medlar"} {
		if h := mustSearch(t, s, q, 5); len(h) != 1 {
			t.Errorf("%q: %d hits, want the second version only", q, len(h))
		}
	}
	checkIndex(t, db)
}

// TestSegments makes merges run in tiny steps, so that additions and
// deletions interleave with merges in progress, and forgotten texts leave
// postings to drop and dead counts to keep, then checks the index against
// the texts.
func TestSegments(t *testing.T) {
	tinyMerges(t)
	s, db := openTest(t, Options{})
	var ids []string
	for i := range 60 {
		ids = append(ids, mustAdd(t, s, Input{Content: fmt.Sprintf("common shared unique%d", i), Source: fmt.Sprint("s", i%7)}).ID)
	}
	for i := 10; i < 40; i++ {
		if i%3 != 0 {
			if err := s.Delete(ctx, ids[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := s.DeleteSource(ctx, "s3"); err != nil || n == 0 {
		t.Fatalf("DeleteSource: %d, %v", n, err)
	}
	mustAdd(t, s, Input{Content: "common again", Source: "s1", Replace: true})
	docs, _ := s.List(ctx, "")
	withCommon := 0
	for _, d := range docs {
		if d.Source != "s1" {
			withCommon++
		}
	}
	if hits := mustSearch(t, s, "common", 100); len(hits) != withCommon+1 {
		t.Errorf("common found in %d chunks, want %d", len(hits), withCommon+1)
	}
	checkIndex(t, db)
}

func TestForget(t *testing.T) {
	s, db := openTest(t, Options{})
	a := mustAdd(t, s, Input{Content: "remember the quince", Source: "fruit"})
	b := mustAdd(t, s, Input{Content: "remember the medlar", Source: "fruit"})
	c := mustAdd(t, s, Input{Content: "remember the sloe", Source: "berries"})
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if h := mustSearch(t, s, "quince", 5); len(h) != 0 {
		t.Error("a forgotten text is still found")
	}
	if n, err := s.DeleteSource(ctx, "fruit"); n != 1 || err != nil {
		t.Errorf("DeleteSource = %d, %v", n, err)
	}
	if n, err := s.DeleteSource(ctx, "fruit"); n != 0 || err != nil {
		t.Errorf("DeleteSource again = %d, %v", n, err)
	}
	ids := searchIDs(t, s, "remember", 5)
	if !slices.Equal(ids, []string{c.ID}) {
		t.Errorf("remaining = %v, want only %s (not %s)", ids, c.ID, b.ID)
	}
	st, _ := s.Stats(ctx)
	if st.Documents != 1 || st.Chunks != 1 {
		t.Errorf("stats = %+v", st)
	}
	checkIndex(t, db)
}

func TestResolve(t *testing.T) {
	s, _ := openTest(t, Options{})
	byFirst := map[byte][]string{}
	var ambiguous byte
	for i := 0; ambiguous == 0; i++ { // 17 ids always share a first hex digit
		id := mustAdd(t, s, Input{Content: fmt.Sprint("note ", i)}).ID
		byFirst[id[0]] = append(byFirst[id[0]], id)
		if len(byFirst[id[0]]) == 2 {
			ambiguous = id[0]
		}
	}
	id := byFirst[ambiguous][0]
	if got, err := s.Resolve(ctx, id); got != id || err != nil {
		t.Errorf("Resolve(full id) = %q, %v", got, err)
	}
	if got, err := s.Resolve(ctx, id[:12]); got != id || err != nil {
		t.Errorf("Resolve(prefix) = %q, %v", got, err)
	}
	var amb *AmbiguousError
	if _, err := s.Resolve(ctx, string(ambiguous)); !errors.As(err, &amb) || len(amb.Matches) < 2 {
		t.Errorf("Resolve(shared prefix) = %v, want AmbiguousError", err)
	}
	for _, bad := range []string{"", "zz", "0123456789abcdef0"} {
		if _, err := s.Resolve(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestGetRebuildsContent(t *testing.T) {
	s, _ := openTest(t, Options{ChunkSize: 7, ChunkOverlap: 3})
	content := "  Leading space.\n\nFirst paragraph has words; more words here!\nA line.\n\n\tTabbed 東京タワー。 Last words?  \n"
	a := mustAdd(t, s, Input{Content: content, Source: "x", Metadata: map[string]any{"k": "v", "n": 2.0}})
	if a.Chunks < 3 {
		t.Fatalf("%d chunks; the test wants several", a.Chunks)
	}
	doc, err := s.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Content != content {
		t.Errorf("content = %q\nwant %q", doc.Content, content)
	}
	if doc.Source != "x" || doc.Metadata["k"] != "v" || doc.Metadata["n"] != 2.0 || doc.Bytes != len(content) || doc.ChunkSize != 7 || doc.Created.IsZero() {
		t.Errorf("document = %+v", doc)
	}
}

func TestInvalidInput(t *testing.T) {
	s, _ := openTest(t, Options{})
	for _, in := range []Input{
		{Content: ""}, {Content: " \n\t"}, {Content: "nul\x00byte"}, {Content: "bad \xff utf8"},
		{Content: "ok", ChunkSize: 10, ChunkOverlap: 10},
		{Content: "ok", Metadata: map[string]any{"f": func() {}}},
		{Content: "ok", Source: strings.Repeat("s", maxSourceBytes+1)},
	} {
		if _, err := s.Add(ctx, in); err == nil {
			t.Errorf("Add(%q) succeeded", in.Content)
		}
	}
	st, _ := s.Stats(ctx)
	if st.Documents != 0 {
		t.Errorf("a failed add left %d documents", st.Documents)
	}
	if _, err := New(nil, Options{ChunkSize: 5, ChunkOverlap: 9}); err == nil {
		t.Error("New accepted an overlap larger than the chunk size")
	}
}

// TestTwoStoresShareTheFile is two processes' view: writes through one
// are seen by the other's next search (the generation counter).
func TestTwoStoresShareTheFile(t *testing.T) {
	s1, db1 := openTest(t, Options{})
	db2, err := store.Open(db1.Path(), "second")
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	s2 := reopen(t, db2, Options{})
	mustAdd(t, s1, Input{Content: "persimmon one"})
	if h := mustSearch(t, s2, "persimmon", 5); len(h) != 1 {
		t.Fatalf("second store sees %d hits", len(h))
	}
	mustAdd(t, s2, Input{Content: "persimmon two, persimmon"})
	if h := mustSearch(t, s1, "persimmon", 5); len(h) != 2 {
		t.Fatalf("first store sees %d hits after the second wrote", len(h))
	}
}

func TestRebuildAfterAnalyzerChange(t *testing.T) {
	s, db := openTest(t, Options{})
	mustAdd(t, s, Input{Content: "The runners were running", Source: "a"})
	mustAdd(t, s, Input{Content: "Elderberry wine", Source: "b"})
	// Pretend the index was written by other analysis rules, with postings
	// that no longer match.
	err := db.Update(func(n storm.Node) error {
		k := openKV(n)
		st, err := k.stats()
		if err != nil {
			return err
		}
		putStale(t, n)
		if st, err = k.stats(); err != nil {
			return err
		}
		st.Analyzer = analyzerVersion + 1
		return k.put(bucketMeta, statsKey, st.encode())
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, db, Options{})
	if h := mustSearch(t, s, "run", 5); len(h) != 1 {
		t.Errorf("after the rebuild: %d hits", len(h))
	}
	if h := mustSearch(t, s, "stale", 5); len(h) != 0 {
		t.Error("a stale posting survived the rebuild")
	}
	checkIndex(t, db)
}

func TestConcurrentUse(t *testing.T) {
	s, db := openTest(t, Options{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				if _, err := s.Add(ctx, Input{Content: fmt.Sprintf("shared word%d writer%d", i, w), Source: fmt.Sprint(w)}); err != nil {
					t.Error(err)
				}
				if _, err := s.Search(ctx, "shared writer1", 3); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if h := mustSearch(t, s, "shared", 100); len(h) != 45 {
		t.Errorf("%d hits, want 45", len(h))
	}
	checkIndex(t, db)
}

// TestContentHashIsTheTextsSHA256 holds the buffered hash to the plain
// one at the buffer's edges: a stored document's hash is how an unchanged
// file is recognised.
func TestContentHashIsTheTextsSHA256(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 17} {
		text := strings.Repeat("ab€", n)[:n]
		if got, want := contentHash(text), hashOf(text); got != want {
			t.Errorf("%d bytes: %s, want %s", n, got, want)
		}
	}
}
