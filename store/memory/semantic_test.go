package memory

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// conceptEmbedder embeds text as counts of concepts, so that words sharing
// no letters can be close in meaning: car and automobile are both vehicles.
type conceptEmbedder struct {
	calls atomic.Int32
	fail  atomic.Bool
}

var concepts = []map[string]bool{
	{"car": true, "automobile": true, "truck": true, "vehicle": true, "engine": true},
	{"apple": true, "bread": true, "cheese": true, "food": true},
	{"rain": true, "sun": true, "weather": true, "cloud": true},
}

func (e *conceptEmbedder) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	e.calls.Add(1)
	if e.fail.Load() {
		return nil, errors.New("connection refused")
	}
	out := make([][]float32, len(inputs))
	for i, in := range inputs {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.1 // no text is the zero vector
		for _, w := range strings.Fields(strings.ToLower(strings.Trim(in, ".!?"))) {
			for c, words := range concepts {
				if words[strings.Trim(w, ".,!?")] {
					v[c]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestSemanticFindsMeaningWithoutSharedWords(t *testing.T) {
	emb := &conceptEmbedder{}
	s, db := openTest(t, Options{Embedder: emb, EmbedModel: "concepts"})
	car := mustAdd(t, s, Input{Content: "My car needs a new engine."}).ID
	mustAdd(t, s, Input{Content: "Fresh bread and cheese for lunch."})
	mustAdd(t, s, Input{Content: "Rain and cloud all week."})
	res, err := s.Search(ctx, "automobile", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Semantic || len(res.Hits) == 0 || res.Hits[0].DocID != car {
		t.Fatalf("semantic search for a synonym: %+v", res)
	}
	h := res.Hits[0]
	if h.Lexical != 0 || h.Semantic == nil || *h.Semantic < 0.9 || h.Score <= 0 || h.Score > 1 {
		t.Errorf("hit scores: %+v (semantic %v)", h, h.Semantic)
	}
	st, _ := s.Stats(ctx)
	if st.Vectors != 3 || st.EmbedModel != "concepts" {
		t.Errorf("stats = %+v", st)
	}
	checkIndex(t, db)
}

func TestSemanticBlendsWithBM25(t *testing.T) {
	emb := &conceptEmbedder{}
	s, _ := openTest(t, Options{Embedder: emb, EmbedModel: "concepts", SemanticWeight: 0.5})
	// Both mention "engine" once; only the first is about vehicles.
	vehicle := mustAdd(t, s, Input{Content: "The truck engine roared."}).ID
	mustAdd(t, s, Input{Content: "The search engine indexed bread recipes."})
	hits := mustSearch(t, s, "car engine", 2)
	if len(hits) != 2 || hits[0].DocID != vehicle {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		want := 0.5*h.Lexical + 0.5*max(0, *h.Semantic)
		if d := h.Score - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("score %v, want the blend %v", h.Score, want)
		}
	}
}

func TestSemanticFailureFallsBackToBM25(t *testing.T) {
	emb := &conceptEmbedder{}
	emb.fail.Store(true)
	s, _ := openTest(t, Options{Embedder: emb, EmbedModel: "concepts"})
	a, err := s.Add(ctx, Input{Content: "The truck engine roared."})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.EmbedError, "connection refused") {
		t.Errorf("EmbedError = %q", a.EmbedError)
	}
	res, err := s.Search(ctx, "engine", 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Semantic || !strings.Contains(res.Warning, "connection refused") || len(res.Hits) != 1 {
		t.Errorf("results = %+v", res)
	}
	// Stored without a vector: once the server is back, the chunk keeps
	// its BM25 score rather than being buried.
	emb.fail.Store(false)
	res, _ = s.Search(ctx, "engine", 3)
	if !res.Semantic || len(res.Hits) != 1 || res.Hits[0].Semantic != nil || res.Hits[0].Score != res.Hits[0].Lexical {
		t.Errorf("results = %+v", res)
	}
}

func TestNoEmbedderMeansNoCalls(t *testing.T) {
	emb := &conceptEmbedder{}
	s, _ := openTest(t, Options{Embedder: emb}) // no model: BM25 alone
	mustAdd(t, s, Input{Content: "plain text"})
	res, _ := s.Search(ctx, "plain", 1)
	if emb.calls.Load() != 0 || res.Semantic || res.Warning != "" {
		t.Errorf("calls %d, results %+v", emb.calls.Load(), res)
	}
}
