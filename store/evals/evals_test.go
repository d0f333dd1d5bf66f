package evals

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

func newStore(t *testing.T) (*Store, *store.DB) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jarvis.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Queue().Close(context.Background())
		db.Close()
	})
	return New(db), db
}

func sample(id string, started time.Time, model string, cases ...Case) Run {
	r := Run{ID: id, Batch: "b", Started: started, Suite: "smoke", Source: "built-in", Engine: "ollama", Model: model, Agent: "orchestrator", Repeat: 1, Cases: cases}
	for _, c := range cases {
		r.Passed += c.Passes
		r.Total += c.Runs
	}
	return r
}

func TestSaveQueuedListGet(t *testing.T) {
	s, _ := newStore(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := sample("20260301-120000-aaaa", t0, "qwen3", Case{ID: "pct", Category: "single", Passes: 1, Runs: 1})
	newer := sample("20260301-130000-bbbb", t0.Add(time.Hour), "llama3.2", Case{ID: "pct", Category: "single", Passes: 0, Runs: 1, Reason: "called think, expected calculator"})
	if err := s.SaveQueued(old, newer); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != newer.ID || runs[1].ID != old.ID {
		t.Fatalf("want newest first, got %+v", runs)
	}
	if got := runs[0].Cases[0].Reason; got != "called think, expected calculator" {
		t.Errorf("case reason not kept: %q", got)
	}
	if runs, _ := s.List(1); len(runs) != 1 || runs[0].ID != newer.ID {
		t.Errorf("limit 1: %+v", runs)
	}
	// The random end of an id is enough; a part shared by both is not.
	if r, err := s.Get("bbbb"); err != nil || r.Model != "llama3.2" {
		t.Errorf("Get by the id's end: %+v %v", r, err)
	}
	if r, err := s.Get(old.ID); err != nil || r.Model != "qwen3" {
		t.Errorf("Get by id: %+v %v", r, err)
	}
	if _, err := s.Get("20260301"); err == nil || !strings.Contains(err.Error(), "give more of the id") {
		t.Errorf("an ambiguous id must say so: %v", err)
	}
	if _, err := s.Get("zzzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown id: %v", err)
	}
	// Saving again (a replayed journal) overwrites, never duplicates.
	if err := s.SaveQueued(old); err != nil {
		t.Fatal(err)
	}
	s.Flush(context.Background())
	if runs, _ := s.List(0); len(runs) != 2 {
		t.Errorf("a run saved twice is stored twice: %d runs", len(runs))
	}
}

func TestListEmptyDatabase(t *testing.T) {
	s, _ := newStore(t)
	runs, err := s.List(0)
	if err != nil || len(runs) != 0 {
		t.Fatalf("an empty database lists nothing without error: %v %v", runs, err)
	}
	if err := s.SaveQueued(Run{}); err == nil {
		t.Error("a run without an id must be refused")
	}
}

func TestCompareSaysWhichCasesFlipped(t *testing.T) {
	t0 := time.Now()
	a := sample("a", t0, "m",
		Case{ID: "pct", Passes: 1, Runs: 1},
		Case{ID: "nocall", Passes: 0, Runs: 1},
		Case{ID: "flaky", Passes: 3, Runs: 3},
		Case{ID: "gone", Passes: 1, Runs: 1})
	b := sample("b", t0, "m",
		Case{ID: "pct", Passes: 0, Runs: 1},
		Case{ID: "nocall", Passes: 1, Runs: 1},
		Case{ID: "flaky", Passes: 2, Runs: 3},
		Case{ID: "new", Passes: 1, Runs: 1})
	got := map[string]string{}
	var order []string
	for _, f := range Compare(a, b) {
		got[f.ID] = f.Change()
		order = append(order, f.ID)
	}
	want := map[string]string{"pct": "broken", "nocall": "fixed", "flaky": "broken", "gone": "removed", "new": "added"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if strings.Join(order, ",") != "pct,nocall,flaky,gone,new" {
		t.Errorf("order: %v", order)
	}
	if same := Compare(a, a); same[0].Change() != "same" {
		t.Errorf("a run compared with itself: %s", same[0].Change())
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, b := NewID(t0), NewID(t0.Add(time.Second))
	if !(a < b) || !strings.HasPrefix(a, "20260301-120000-") || len(a) != len("20260301-120000-")+4 {
		t.Fatalf("ids %q %q", a, b)
	}
	first, second := NewID(t0), NewID(t0)
	if first == second {
		t.Error("two ids of one second collide")
	}
}
