package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	memstore "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
)

var ctx = context.Background()

func newStore(t *testing.T) *memstore.Store {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := memstore.New(db, memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, tool tools.Tool, args tools.Args) tools.Result {
	t.Helper()
	return tool.Execute(ctx, args)
}

// seed stores three notes: two about tea (one with a source), one not.
func seed(t *testing.T, s *memstore.Store) {
	t.Helper()
	for _, in := range []memstore.Input{
		{Content: "Green tea is steamed or pan-fired.", Source: "tea.md"},
		{Content: "Black tea, black tea and more black tea: fully oxidised."},
		{Content: "Coffee beans are roasted."},
	} {
		if _, err := s.Add(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemoryStoreFormat(t *testing.T) {
	s := newStore(t)
	r := run(t, NewStore(s), tools.Args{"content": "The wifi password is on the fridge.", "source": "home", "metadata": map[string]any{"room": "kitchen"}})
	if !r.Success || !regexp.MustCompile(`^Stored as [0-9a-f]{16}$`).MatchString(r.Content) {
		t.Fatalf("result = %+v", r)
	}
	id := strings.TrimPrefix(r.Content, "Stored as ")
	doc, err := s.Get(ctx, id)
	if err != nil || doc.Source != "home" || doc.Metadata["room"] != "kitchen" || doc.Content != "The wifi password is on the fridge." {
		t.Errorf("stored document = %+v, %v", doc, err)
	}
	if r := run(t, NewStore(s), tools.Args{"content": strings.Repeat("x", MaxContentSize+1)}); r.Success || !strings.HasPrefix(r.Content, "Content too large: 1048577 bytes (max 1048576).") {
		t.Errorf("oversized content: %q", r.Content)
	}
	for _, bad := range []tools.Args{{}, {"content": "  "}, {"content": "x", "metadata": "not an object"}} {
		if r := run(t, NewStore(s), bad); r.Success {
			t.Errorf("memory_store(%v) succeeded", bad)
		}
	}
}

func TestRetrievalFormat(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	r := run(t, NewRetrieval(s), tools.Args{"query": "tea"})
	want := "Black tea, black tea and more black tea: fully oxidised.\n\n[Source: tea.md] Green tea is steamed or pan-fired."
	if !r.Success || r.Content != want {
		t.Errorf("content = %q\nwant %q", r.Content, want)
	}
	if r.Metadata["num_results"] != 2 {
		t.Errorf("metadata = %v", r.Metadata)
	}
	r = run(t, NewRetrieval(s), tools.Args{"query": "volcano"})
	if !r.Success || r.Content != "No relevant results found." || r.Metadata["num_results"] != 0 {
		t.Errorf("empty result = %+v", r)
	}
	r = run(t, NewRetrieval(s), tools.Args{"query": "tea", "top_k": 1})
	if strings.Count(r.Content, "tea") == 0 || strings.Contains(r.Content, "\n\n") {
		t.Errorf("top_k 1 = %q", r.Content)
	}
}

var scoreRe = `\[(0|1)\.\d\d\]`

func TestRetrieveFormat(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	r := run(t, NewRetrieve(s), tools.Args{"query": "black tea", "top_k": 5})
	re := regexp.MustCompile(`^` + scoreRe + ` Black tea, black tea and more black tea: fully oxidised\.\n---\n` + scoreRe + ` Green tea is steamed or pan-fired\.$`)
	if !r.Success || !re.MatchString(r.Content) {
		t.Errorf("content = %q", r.Content)
	}
}

func TestSearchFormat(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	r := run(t, NewSearch(s), tools.Args{"query": "Tea?"})
	re := regexp.MustCompile(`^1\. ` + scoreRe + ` Black tea, black tea and more black tea: fully oxidised\.\n2\. ` + scoreRe + ` \(source: tea\.md\) Green tea is steamed or pan-fired\.$`)
	if !r.Success || !re.MatchString(r.Content) {
		t.Errorf("content = %q", r.Content)
	}
	// Scores are the store's, with two decimals.
	res, _ := s.Search(ctx, "Tea?", 5)
	if want := fmt.Sprintf("1. [%.2f]", res.Hits[0].Score); !strings.HasPrefix(r.Content, want) {
		t.Errorf("content %q does not start with %q", r.Content, want)
	}
}

func TestSearchArguments(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	for _, c := range []struct {
		args tools.Args
		want string
	}{
		{tools.Args{}, "No query provided."},
		{tools.Args{"query": "  "}, "No query provided."},
		{tools.Args{"query": "tea", "top_k": 0.0}, "Invalid arguments: top_k must be at least 1, got 0."},
		{tools.Args{"query": "tea", "top_k": 2.5}, "Invalid arguments: parameter 'top_k' must be a whole number, got 2.5."},
	} {
		for _, tool := range []tools.Tool{NewRetrieval(s), NewRetrieve(s), NewSearch(s)} {
			if r := run(t, tool, c.args); r.Success || r.Content != c.want {
				t.Errorf("%s(%v) = %q, want %q", tool.Spec().Name, c.args, r.Content, c.want)
			}
		}
	}
	if r := run(t, NewSearch(s), tools.Args{"query": "tea", "top_k": 1000.0}); !r.Success {
		t.Errorf("a large top_k should be capped, not refused: %q", r.Content)
	}
}

func TestToolsWithoutMemory(t *testing.T) {
	idx := NewIndex(nil, tools.Deps{}, Options{})
	for _, tool := range []tools.Tool{NewRetrieval(nil), NewStore(nil), NewRetrieve(nil), NewSearch(nil), idx} {
		r := run(t, tool, tools.Args{"query": "x", "content": "x", "path": "."})
		if r.Success || !strings.HasPrefix(r.Content, "Memory is not available") {
			t.Errorf("%s without memory: %+v", tool.Spec().Name, r)
		}
		if tool.Spec().Category != "memory" || tool.Spec().Parameters == nil {
			t.Errorf("%s spec: %+v", tool.Spec().Name, tool.Spec())
		}
	}
}

func TestRegister(t *testing.T) {
	r := tools.NewRegistry()
	if err := Register(r, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"memory_index", "memory_retrieve", "memory_search", "memory_store", "retrieval"}
	if got := r.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names = %v", got)
	}
	list, err := r.BuildAll(tools.Deps{})
	if err != nil || len(list) != 5 {
		t.Fatalf("BuildAll: %d, %v", len(list), err)
	}
	for _, tool := range list {
		if _, err := tools.NewExecutor([]tools.Tool{tool}, tools.ExecutorOptions{}); err != nil {
			t.Errorf("%s: %v", tool.Spec().Name, err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
