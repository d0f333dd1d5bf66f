package memory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asdine/storm/v3"

	"github.com/jarvis-workbench/jarvis/store"
)

// format1Inputs are the texts stored in testdata/format1.db, a memory
// written by the first index format (format1.go) with posting segments of
// 4 postings and the embeddings of conceptEmbedder (model "concepts"), in
// this order; then the document of source "gone" was forgotten and the
// one of "replaced" stored again with format1Replaced, and the file was
// compacted.
func format1Inputs() []Input {
	var long strings.Builder
	for i := range 20 {
		fmt.Fprintf(&long, "Paragraph %d tells how the parser reads max_file_size and calls ParseDuration. ", i)
		if i%5 == 4 {
			long.WriteString("\n\n")
		}
	}
	ins := []Input{
		{Content: "The naïve café on Łódź street serves crème brûlée.", Source: "cafe", Metadata: map[string]any{"lang": "en"}},
		{Content: long.String(), Source: "docs/long.md", ChunkSize: 12, ChunkOverlap: 3},
		{Content: "This note is forgotten before the upgrade.", Source: "gone"},
		{Content: "...!?", Source: "punctuation"},
		{Content: "The replaced note, first version.", Source: "replaced"},
		{Content: "My car needs a new engine; the truck too."},
	}
	for i := range 12 {
		ins = append(ins, Input{Content: fmt.Sprintf("Note %d: the solar panel of house %d convert sunlight into electricity.", i, i), Source: fmt.Sprintf("solar/%02d", i)})
	}
	return ins
}

const format1Replaced = "The replaced note, second version, mentions the automobile."

// openFormat1 opens a copy of testdata/format1.db.
func openFormat1(t *testing.T, opts Options) (*Store, *store.DB) {
	t.Helper()
	raw, err := os.ReadFile("testdata/format1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jarvis.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return reopen(t, db, opts), db
}

// TestFormat1IsConverted: a memory written by the first index format is
// converted on first use, saying so, and loses nothing: every text, its
// metadata, chunking and embeddings are there, found as before.
func TestFormat1IsConverted(t *testing.T) {
	s, db := openFormat1(t, Options{Embedder: &conceptEmbedder{}, EmbedModel: "concepts"})
	var told []Reindex
	s.OnReindex(func(r Reindex) { told = append(told, r) })
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 2 || told[0].Done || !told[1].Done || !strings.Contains(told[0].Reason, "format 1") || told[0].Chunks != 46 {
		t.Errorf("told %+v, want the start and the end of a conversion from format 1 of 46 chunks", told)
	}
	if st.Documents != 17 || st.Chunks != 46 || st.Vectors != 46 || st.Terms == 0 {
		t.Errorf("stats after the conversion: %+v", st)
	}
	want := map[string]string{}
	for _, in := range format1Inputs() {
		want[in.Source] = in.Content
	}
	delete(want, "gone")
	want["replaced"] = format1Replaced
	docs, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		got, err := s.Get(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != want[d.Source] {
			t.Errorf("document %s (%s): content %q, want %q", d.ID, d.Source, got.Content, want[d.Source])
		}
		delete(want, d.Source)
		switch d.Source {
		case "cafe":
			if d.Metadata["lang"] != "en" {
				t.Errorf("metadata of %s lost: %v", d.Source, d.Metadata)
			}
		case "docs/long.md":
			if d.ChunkSize != 12 || d.ChunkOverlap != 3 || d.Chunks != 30 {
				t.Errorf("chunking of %s: %+v", d.Source, d)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("documents missing after the conversion: %v", want)
	}
	for q, source := range map[string]string{"naive cafe": "cafe", "lodz creme brulee": "cafe", "max_file_size": "docs/long.md", "parse duration": "docs/long.md", "solar panel": "solar/00"} {
		hits := mustSearch(t, s, q, 1)
		if len(hits) == 0 || !strings.HasPrefix(hits[0].Source, strings.TrimSuffix(source, "00")) || hits[0].Lexical == 0 {
			t.Errorf("search %q after the conversion: %+v", q, hits)
		}
	}
	for _, h := range mustSearch(t, s, "forgotten", 5) {
		if h.Lexical > 0 {
			t.Errorf("a forgotten text found after the conversion: %+v", h)
		}
	}
	res, err := s.Search(ctx, "automobile vehicle", 1)
	if err != nil || !res.Semantic || len(res.Hits) == 0 || res.Hits[0].Semantic == nil || !strings.Contains(res.Hits[0].Content, "automobile") && !strings.Contains(res.Hits[0].Content, "car") {
		t.Errorf("semantic search after the conversion: %+v, %v", res, err)
	}
	checkIndex(t, db)
}

// TestFormat1ConversionRunsInSteps: the conversion is bounded steps of
// whole documents, and another process that opens the memory midway
// finishes it.
func TestFormat1ConversionRunsInSteps(t *testing.T) {
	defer func(n int) { rebuildStepBytes = n }(rebuildStepBytes)
	rebuildStepBytes = 200
	s, db := openFormat1(t, Options{})
	// Start it as the first use does, then take two steps by hand.
	err := db.Update(func(n storm.Node) error {
		k := openKV(n)
		st, err := k.stats()
		if err != nil {
			return err
		}
		if st.Format != 1 {
			t.Fatalf("testdata/format1.db is in format %d", st.Format)
		}
		return startRebuild(k, st)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if p := readProgress(t, db); p.state.phase != rebuildConvert {
			t.Fatalf("phase %d, want the conversion still going", p.state.phase)
		}
		if _, err := s.rebuildStep(); err != nil {
			t.Fatal(err)
		}
	}
	db2, err := store.Open(db.Path(), "second")
	if err != nil {
		t.Fatal(err)
	}
	s2 := reopen(t, db2, Options{})
	if hits := mustSearch(t, s2, "naive cafe", 1); len(hits) != 1 || hits[0].Source != "cafe" {
		t.Errorf("after the conversion another process finished: %+v", hits)
	}
	db2.Close()
	checkIndex(t, db)
}
