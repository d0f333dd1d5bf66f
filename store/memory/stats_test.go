package memory

import (
	"slices"
	"strings"
	"testing"
)

// TestStatsReportStoredChunking: Stats reports the chunk sizes the stored
// documents were cut with, not the defaults of the process asking.
func TestStatsReportStoredChunking(t *testing.T) {
	defer func(old int) { statsPage = old }(statsPage)
	statsPage = 2 // several pages

	s, db := openTest(t, Options{ChunkSize: 100, ChunkOverlap: 10})
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Chunking) != 0 || st.DefaultChunkSize != 100 || st.DefaultChunkOverlap != 10 {
		t.Errorf("empty memory: chunking %v, defaults %d/%d", st.Chunking, st.DefaultChunkSize, st.DefaultChunkOverlap)
	}
	for range 3 {
		mustAdd(t, s, Input{Content: "a short note"})
	}
	long := mustAdd(t, s, Input{Content: strings.Repeat(sentence("word", 9)+" ", 8), ChunkSize: 20, ChunkOverlap: 2})
	other := mustAdd(t, s, Input{Content: "another short note", ChunkSize: 50, ChunkOverlap: 0})
	if long.Chunks < 4 {
		t.Fatalf("%d chunks; the test wants more than the default-chunked notes", long.Chunks)
	}

	// Another process, with other defaults, sees what the documents use.
	s2 := reopen(t, db, Options{})
	st, err = s2.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []ChunkingUse{
		{Size: 20, Overlap: 2, Documents: 1, Chunks: long.Chunks},
		{Size: 100, Overlap: 10, Documents: 3, Chunks: 3},
		{Size: 50, Overlap: 0, Documents: 1, Chunks: other.Chunks},
	}
	if !slices.Equal(st.Chunking, want) {
		t.Errorf("chunking = %+v\nwant %+v", st.Chunking, want)
	}
	if st.DefaultChunkSize != DefaultChunkSize || st.DefaultChunkOverlap != DefaultChunkOverlap {
		t.Errorf("defaults = %d/%d, want the second store's own", st.DefaultChunkSize, st.DefaultChunkOverlap)
	}
	if st.Documents != 5 || st.Chunks != 3+long.Chunks+other.Chunks {
		t.Errorf("stats = %+v", st)
	}
}
