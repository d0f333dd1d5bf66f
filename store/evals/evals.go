// Package evals keeps the results of tool-calling evaluations (jarvis eval)
// in the jarvis database, so a person can list past runs and see which
// cases flipped between two of them: after a change of model, agent, or of
// the words a tool is described with.
//
// One Run is one model with one agent on one engine over one suite; an
// invocation that compares several models saves several Runs sharing a
// Batch. A Run holds its cases' outcomes whole (a suite has tens of cases,
// not thousands), so listing and comparing read one record each.
//
// Results are saved through the database's write queue (store.Queue): an
// evaluation that took minutes is not lost because another jarvis held the
// file at the moment it ended.
//
// Layering: store sits below agent, so this package defines its own types;
// app/eval fills them.
package evals

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asdine/storm/v3"
	"github.com/asdine/storm/v3/index"

	"github.com/jarvis-workbench/jarvis/store"
)

// root is the storm bucket holding the runs.
const root = "evals"

// opSave is the kind of a queued save; it is part of the journal format.
const opSave = "evals.save"

func init() {
	store.RegisterOp(opSave, func(n storm.Node, data json.RawMessage) error {
		var runs []Run
		if err := json.Unmarshal(data, &runs); err != nil {
			return err
		}
		node := n.From(root)
		for i := range runs {
			// Saving a run again (a journal replayed after a crash) writes
			// the same record over itself.
			if err := node.Save(&runs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// ErrNotFound is wrapped by the errors of lookups that match no run.
var ErrNotFound = errors.New("evaluation run not found")

// Run is one model, agent and engine over one suite.
type Run struct {
	ID string `json:"id" storm:"id"`
	// Batch ties the runs of one invocation (several models compared).
	Batch   string    `json:"batch"`
	Started time.Time `json:"started"`
	// Seconds is the run's wall time, every case and repetition.
	Seconds float64 `json:"seconds"`
	Suite   string  `json:"suite"`
	// Source is where the suite came from: a file's path, "stdin" or
	// "built-in".
	Source string `json:"source"`
	Engine string `json:"engine"`
	Host   string `json:"host"`
	Model  string `json:"model"`
	Agent  string `json:"agent"`
	// Repeat is how many times each case ran.
	Repeat int `json:"repeat"`
	// Passed and Total count the case runs made (cases times Repeat);
	// NotRun those that could not be made (the server failed, a request
	// did not fit the window), left out of the rate.
	Passed int `json:"passed"`
	Total  int `json:"total"`
	NotRun int `json:"not_run,omitempty"`
	// NoCalls says the model never called a tool though cases needed it
	// ("" when it did): its rate is only that of the no-call cases.
	NoCalls string `json:"no_calls,omitempty"`
	// MedianSeconds is the median wall time of a case run; TokensPerSec
	// the output tokens over the time the model spent writing them.
	MedianSeconds float64 `json:"median_seconds"`
	TokensPerSec  float64 `json:"tokens_per_second"`
	PromptTokens  int     `json:"prompt_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	CostUSD       float64 `json:"cost_usd"`
	// Reworded lists the tools whose descriptions the suite or the
	// config changed, so a comparison says what was being measured, and
	// Wording holds the words themselves, so it says which wording won.
	Reworded []string  `json:"reworded,omitempty"`
	Wording  []Wording `json:"wording,omitempty"`
	// Error says why the run stopped before its end ("" when it ran
	// every case).
	Error string `json:"error,omitempty"`
	Cases []Case `json:"cases"`
}

// Wording is what the model read of a reworded tool: its description and
// its parameters' descriptions, where the suite or the config changed them
// ("" and absent where the tool's own were kept), for the whole suite (Case
// "") or one case.
type Wording struct {
	Tool        string            `json:"tool"`
	Case        string            `json:"case,omitempty"`
	Description string            `json:"description,omitempty"`
	Parameters  map[string]string `json:"parameters,omitempty"`
}

// Same reports whether two wordings give the model the same words.
func (w Wording) Same(o Wording) bool {
	if w.Description != o.Description || len(w.Parameters) != len(o.Parameters) {
		return false
	}
	for k, v := range w.Parameters {
		if o.Parameters[k] != v {
			return false
		}
	}
	return true
}

// Case is one case's outcome over its repetitions.
type Case struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Passes   int    `json:"passes"`
	Runs     int    `json:"runs"`
	NotRun   int    `json:"not_run,omitempty"`
	// Reason is why the first failed repetition failed ("" when all
	// passed).
	Reason string `json:"reason,omitempty"`
	// Calls is what the model called in that repetition (or the last),
	// on one line: calculator(expression="15/100*340").
	Calls   string  `json:"calls,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Passed reports whether every repetition passed.
func (c Case) Passed() bool { return c.Runs > 0 && c.Passes == c.Runs }

// Rate is the share of case runs that passed (0 for a run without cases).
func (r Run) Rate() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Passed) / float64(r.Total)
}

// Store reads and writes runs.
type Store struct{ db *store.DB }

// New returns a store on db.
func New(db *store.DB) *Store { return &Store{db: db} }

// NewID returns a run id: the time it started to the second, then four
// random characters, so ids sort by time and two jarvis processes
// starting together never collide.
func NewID(t time.Time) string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	var b [4]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return t.UTC().Format("20060102-150405") + "-" + string(b[:])
}

// SaveQueued checks runs and queues them to be saved; they land in the
// order given, after every write queued before them.
func (s *Store) SaveQueued(runs ...Run) error {
	if len(runs) == 0 {
		return nil
	}
	for _, r := range runs {
		if r.ID == "" {
			return errors.New("an evaluation run without an id cannot be saved")
		}
	}
	what := "the evaluation run " + runs[0].ID
	if len(runs) > 1 {
		what = fmt.Sprintf("%d evaluation runs (%s, ...)", len(runs), runs[0].ID)
	}
	op, err := store.NewOp(opSave, what, runs)
	if err != nil {
		return err
	}
	s.db.Queue().Enqueue(op)
	return nil
}

// Flush waits until the runs this process queued have landed, or ctx ends.
func (s *Store) Flush(ctx context.Context) error { return s.db.Flush(ctx) }

// List returns the runs, newest first; limit > 0 keeps that many.
func (s *Store) List(limit int) ([]Run, error) {
	var runs []Run
	err := s.db.View(func(n storm.Node) error {
		err := n.From(root).All(&runs)
		if notFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.After(runs[j].Started)
		}
		return runs[i].ID > runs[j].ID
	})
	if limit > 0 && len(runs) > limit {
		runs = runs[:limit]
	}
	return runs, nil
}

// Get returns the run whose id is ref or, failing that, the one run whose
// id contains ref (the random end of an id is enough: "k3xq").
func (s *Store) Get(ref string) (Run, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return Run{}, errors.New("no run id given")
	}
	runs, err := s.List(0)
	if err != nil {
		return Run{}, err
	}
	var matches []Run
	for _, r := range runs {
		if r.ID == ref {
			return r, nil
		}
		if strings.Contains(r.ID, ref) {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 0:
		return Run{}, fmt.Errorf("no evaluation run has the id %q ('jarvis eval history' lists them): %w", ref, ErrNotFound)
	case 1:
		return matches[0], nil
	}
	ids := make([]string, 0, 3)
	for _, m := range matches[:min(len(matches), 3)] {
		ids = append(ids, m.ID)
	}
	more := ""
	if len(matches) > 3 {
		more = fmt.Sprintf(" and %d more", len(matches)-3)
	}
	return Run{}, fmt.Errorf("%q matches %s%s; give more of the id", ref, strings.Join(ids, ", "), more)
}

func notFound(err error) bool {
	return errors.Is(err, storm.ErrNotFound) || errors.Is(err, index.ErrNotFound)
}

// Flip is one case of a comparison between two runs.
type Flip struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	// Before and After are the case in the first and the second run; nil
	// when the run did not have the case.
	Before *Case `json:"before"`
	After  *Case `json:"after"`
}

// Change says how the case moved: "fixed" (failed, now passes), "broken"
// (passed, now fails), "same", "added", "removed", or "not run" when a run
// could not make it (a server failure is not the model breaking it). A
// case repeated several times counts as passing only when every
// repetition passed.
func (f Flip) Change() string {
	switch {
	case f.Before == nil:
		return "added"
	case f.After == nil:
		return "removed"
	case f.Before.Runs == 0 || f.After.Runs == 0:
		return "not run"
	case !f.Before.Passed() && f.After.Passed():
		return "fixed"
	case f.Before.Passed() && !f.After.Passed():
		return "broken"
	}
	return "same"
}

// Compare pairs the cases of two runs by id, in a's order followed by the
// cases only b has.
func Compare(a, b Run) []Flip {
	inB := make(map[string]int, len(b.Cases))
	for i, c := range b.Cases {
		inB[c.ID] = i
	}
	seen := make(map[string]bool, len(a.Cases))
	var out []Flip
	for i := range a.Cases {
		c := &a.Cases[i]
		f := Flip{ID: c.ID, Category: c.Category, Before: c}
		if j, ok := inB[c.ID]; ok {
			f.After = &b.Cases[j]
		}
		seen[c.ID] = true
		out = append(out, f)
	}
	for j := range b.Cases {
		if c := &b.Cases[j]; !seen[c.ID] {
			out = append(out, Flip{ID: c.ID, Category: c.Category, After: c})
		}
	}
	return out
}
