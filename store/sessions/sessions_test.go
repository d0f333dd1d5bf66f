package sessions

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

func openStore(t testing.TB, path string) (*Store, *store.DB) {
	t.Helper()
	db, err := store.Open(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db), db
}

func newStore(t testing.TB) *Store {
	t.Helper()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "jarvis.db"))
	return s
}

// fakeClock returns times one second apart from a fixed start.
func fakeClock(start time.Time) func() time.Time {
	var mu sync.Mutex
	t := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_793_238, time.UTC)

// sample is a conversation with every kind of message and every field set.
func sample() []Message {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []Message{
		{Role: RoleUser, Content: "What is 6*7, and what is in notes.txt?\nBe brief.", CreatedAt: at(1)},
		{
			Role: RoleAssistant, Content: "Let me check both.", Thinking: "Two tools, in parallel.",
			Model: "qwen3:8b", CreatedAt: at(3),
			ToolCalls: []ToolCall{
				{ID: "call_1", Index: 0, Name: "calculator", Arguments: `{"expression":"6*7"}`},
				{ID: "call_2", Index: 1, Name: "file_read", Arguments: `{"path":"notes.txt","max_lines":5}`},
			},
			Usage: &Usage{PromptTokens: 412, OutputTokens: 38, EvalSeconds: 0.95, TokensPerSec: 40, LoadSeconds: 0.1,
				TotalSeconds: 1.2, CostUSD: 0.0004, WallSeconds: 1.3, ThinkingTokens: 9},
		},
		{Role: RoleTool, Content: "42", ToolName: "calculator", ToolCallID: "call_1", CreatedAt: at(4),
			Result: &ToolResult{Success: true, Status: "ok", LatencySeconds: 0.0021, CostUSD: 0}},
		{Role: RoleTool, Content: "permission denied by the person", ToolName: "file_read", ToolCallID: "call_2", CreatedAt: at(5),
			Result: &ToolResult{Success: false, Status: "denied", LatencySeconds: 1.5, CostUSD: 0.001, CostEstimated: true,
				Metadata: map[string]any{"path": "notes.txt", "lines": 3.0}}},
		{Role: RoleNotice, Content: "orchestrator fell back to react", CreatedAt: at(6)},
		{Role: RoleAssistant, Content: "6*7 = 42. I could not read notes.txt.", Model: "qwen3:8b", CreatedAt: at(8),
			Usage:      &Usage{PromptTokens: 520, OutputTokens: 17, EvalSeconds: 0.4, TokensPerSec: 42.5, TotalSeconds: 0.5, CostUSD: 0.0002},
			Incomplete: IncompleteLength, Context: &ContextUse{Window: 8192, PromptTokens: 520}, RunSeconds: 2.25},
		{Role: RoleError, Content: "Ollama is not reachable at http://127.0.0.1:11434.", CreatedAt: at(9)},
	}
}

func TestAppendLoadRoundTrip(t *testing.T) {
	s := newStore(t)
	s.now = fakeClock(t0)
	sess, err := s.Create(Meta{Model: "qwen3:8b", Agent: "orchestrator", Tools: []string{"calculator", "file_read"}})
	if err != nil {
		t.Fatal(err)
	}
	in := sample()
	// Two appends: an exchange is saved as its messages complete.
	if err := s.Append(sess.ID, in[:1]...); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(sess.ID, in[1:]...); err != nil {
		t.Fatal(err)
	}
	got, msgs, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	for i := range want {
		want[i].Seq = i + 1
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Fatalf("messages changed on the way through the database:\n got %+v\nwant %+v", msgs, want)
	}
	if got.Title != "What is 6*7, and what is in notes.txt? Be brief." {
		t.Errorf("title = %q", got.Title)
	}
	if got.Model != "qwen3:8b" || got.Agent != "orchestrator" || !reflect.DeepEqual(got.Tools, []string{"calculator", "file_read"}) {
		t.Errorf("meta = %q %q %v", got.Model, got.Agent, got.Tools)
	}
	if !got.CreatedAt.Equal(t0.Add(time.Second)) || !got.UpdatedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("created %v updated %v", got.CreatedAt, got.UpdatedAt)
	}
	wantTotals := Totals{PromptTokens: 932, OutputTokens: 55, CostUSD: 0.0004 + 0.0002, ToolCostUSD: 0.001,
		ToolCostEstimated: true, Turns: 2, ToolCalls: 2}
	if got.Messages != 7 || !totalsEqual(got.Totals, wantTotals) {
		t.Errorf("messages %d totals %+v, want 7 %+v", got.Messages, got.Totals, wantTotals)
	}
	// Get agrees with Load.
	if g, err := s.Get(sess.ID); err != nil || !reflect.DeepEqual(g, got) {
		t.Errorf("Get = %+v, %v", g, err)
	}
	// ChatMessages drops what the model never saw.
	chat := ChatMessages(msgs)
	if len(chat) != 5 || chat[3].Role != RoleTool || chat[4].Content != want[5].Content {
		t.Errorf("ChatMessages = %+v", chat)
	}
}

func totalsEqual(a, b Totals) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	return a.PromptTokens == b.PromptTokens && a.OutputTokens == b.OutputTokens && near(a.CostUSD, b.CostUSD) &&
		near(a.ToolCostUSD, b.ToolCostUSD) && a.ToolCostEstimated == b.ToolCostEstimated && a.Turns == b.Turns &&
		a.ToolCalls == b.ToolCalls
}

// A react agent's tool results are user messages for the model; they are
// tool calls all the same, counted with the tool messages.
func TestTotalsCountReactObservations(t *testing.T) {
	s := newStore(t)
	sess, _ := s.Create(Meta{Agent: "react"})
	msgs := []Message{
		{Role: RoleUser, Content: "What is 2**10?"},
		{Role: RoleAssistant, Content: "Action: calculator\nAction Input: 2**10"},
		{Role: RoleUser, Content: ObservationPrefix + "1024", ToolName: "calculator", Result: &ToolResult{Success: true, Status: "ok", CostUSD: 0.5}},
		{Role: RoleAssistant, Content: "Final Answer: 1024"},
	}
	if err := s.Append(sess.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(sess.ID)
	if got.Totals.ToolCalls != 1 || got.Totals.Turns != 2 || got.Totals.ToolCostUSD != 0.5 {
		t.Fatalf("totals %+v, want 1 tool call, 2 turns, $0.50 of tools", got.Totals)
	}
	if IsToolResult(msgs[0]) || !IsToolResult(msgs[2]) {
		t.Fatal("IsToolResult mistakes a question for a result or the reverse")
	}
}

func TestAppendSetsMissingTimesAndKeepsTitles(t *testing.T) {
	s := newStore(t)
	s.now = fakeClock(t0)
	named, _ := s.Create(Meta{Title: "  Budget  "})
	if named.Title != "Budget" {
		t.Fatalf("title = %q", named.Title)
	}
	if err := s.Append(named.ID, Message{Role: RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	got, msgs, _ := s.Load(named.ID)
	if got.Title != "Budget" {
		t.Errorf("a given title was replaced by %q", got.Title)
	}
	if !msgs[0].CreatedAt.Equal(got.UpdatedAt) || msgs[0].CreatedAt.IsZero() {
		t.Errorf("message time %v, session updated %v", msgs[0].CreatedAt, got.UpdatedAt)
	}

	// The title comes from the first user message, not from a notice or a
	// later message.
	sess, _ := s.Create(Meta{})
	s.Append(sess.ID, Message{Role: RoleNotice, Content: "model loaded"})
	s.Append(sess.ID, Message{Role: RoleUser, Content: "first"}, Message{Role: RoleUser, Content: "second"})
	if got, _ := s.Get(sess.ID); got.Title != "first" {
		t.Errorf("title = %q, want first", got.Title)
	}
	if err := s.Rename(sess.ID, "  my\n  notes "); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(sess.ID); got.Title != "my notes" {
		t.Errorf("renamed title = %q", got.Title)
	}
	if err := s.Rename(sess.ID, " \n "); err == nil {
		t.Error("an empty title was accepted")
	}
}

func TestTitleFrom(t *testing.T) {
	long := "Please summarise the quarterly report and list every risk that the finance team flagged in it"
	cases := map[string]string{
		"  hello\n\tworld  ":    "hello world",
		strings.Repeat("x", 60): strings.Repeat("x", 60),
		strings.Repeat("x", 61): strings.Repeat("x", 59) + "…",
		long:                    "Please summarise the quarterly report and list every risk…",
		"":                      "",
	}
	for in, want := range cases {
		got := TitleFrom(in)
		if got != want {
			t.Errorf("TitleFrom(%q) = %q, want %q", in, got, want)
		}
		if n := len([]rune(got)); n > TitleMax {
			t.Errorf("TitleFrom(%q) has %d characters", in, n)
		}
	}
}

func TestListOrderAndLast(t *testing.T) {
	s := newStore(t)
	s.now = fakeClock(t0)
	if list, err := s.List(0); err != nil || len(list) != 0 {
		t.Fatalf("empty database: %v %v", list, err)
	}
	if _, ok, err := s.Last(); ok || err != nil {
		t.Fatalf("Last on an empty database: %v %v", ok, err)
	}
	a, _ := s.Create(Meta{Title: "a"})
	b, _ := s.Create(Meta{Title: "b"})
	c, _ := s.Create(Meta{Title: "c"})
	if err := s.Append(a.ID, Message{Role: RoleUser, Content: "back to a"}); err != nil {
		t.Fatal(err)
	}
	// Renaming and changing the model are not activity.
	if err := s.Rename(b.ID, "b2"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(b.ID, Meta{Model: "llama3.2", Agent: "react", Tools: []string{"think"}, NumCtx: 16384}); err != nil {
		t.Fatal(err)
	}
	titles := func(list []Session) string {
		var out []string
		for _, x := range list {
			out = append(out, x.Title)
		}
		return strings.Join(out, ",")
	}
	list, err := s.List(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := titles(list); got != "a,c,b2" {
		t.Errorf("List(0) = %s, want a,c,b2", got)
	}
	if list[2].Model != "llama3.2" || list[2].Agent != "react" || !reflect.DeepEqual(list[2].Tools, []string{"think"}) || list[2].NumCtx != 16384 {
		t.Errorf("SetMeta not stored: %+v", list[2])
	}
	if list, _ := s.List(2); titles(list) != "a,c" {
		t.Errorf("List(2) = %s", titles(list))
	}
	last, ok, err := s.Last()
	if err != nil || !ok || last.ID != a.ID {
		t.Errorf("Last = %s %v %v, want %s", last.ID, ok, err, a.ID)
	}
	// Ids sort in creation order.
	if !(a.ID < b.ID && b.ID < c.ID) || len(a.ID) != 16 {
		t.Errorf("ids %s %s %s are not sortable", a.ID, b.ID, c.ID)
	}
}

func TestIDPrefixes(t *testing.T) {
	s := newStore(t)
	// One clock reading for all: the ids share their time part.
	s.now = func() time.Time { return t0 }
	var ids []string
	for range 3 {
		x, err := s.Create(Meta{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, x.ID)
	}
	if ids[0][:10] != ids[1][:10] {
		t.Fatalf("ids %v should share their time part", ids)
	}
	for _, id := range ids {
		// The shortest prefix that tells this id from the others.
		n := 11
		for ; n < len(id); n++ {
			unique := true
			for _, o := range ids {
				if o != id && strings.HasPrefix(o, id[:n]) {
					unique = false
				}
			}
			if unique {
				break
			}
		}
		got, err := s.Get(id[:n])
		if err != nil || got.ID != id {
			t.Errorf("Get(%q) = %q, %v; want %s", id[:n], got.ID, err, id)
		}
	}
	_, err := s.Get(ids[0][:10])
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), ids[0]) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	_, _, err = s.Load("zzzz")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"zzzz"`) {
		t.Errorf("unknown id: %v", err)
	}
	if err := s.Append("nope", Message{Role: RoleUser}); !errors.Is(err, ErrNotFound) {
		t.Errorf("append to an unknown session: %v", err)
	}
	if _, err := s.Get(" "); err == nil {
		t.Error("an empty id was accepted")
	}
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	keep, _ := s.Create(Meta{Title: "keep"})
	drop, _ := s.Create(Meta{Title: "drop"})
	empty, _ := s.Create(Meta{Title: "empty"})
	for _, id := range []string{keep.ID, drop.ID} {
		if err := s.Append(id, sample()...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(drop.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(empty.ID); err != nil {
		t.Fatalf("deleting a session without messages: %v", err)
	}
	if _, _, err := s.Load(drop.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session still loads: %v", err)
	}
	if err := s.Delete(drop.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	list, _ := s.List(0)
	if len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("List after delete = %+v", list)
	}
	if _, msgs, err := s.Load(keep.ID); err != nil || len(msgs) != len(sample()) {
		t.Errorf("the other session lost messages: %d %v", len(msgs), err)
	}
}

func TestAppendRejectsUnknownRolesWhole(t *testing.T) {
	s := newStore(t)
	sess, _ := s.Create(Meta{})
	err := s.Append(sess.ID, Message{Role: RoleUser, Content: "ok"}, Message{Role: "robot", Content: "no"})
	if err == nil || !strings.Contains(err.Error(), `"robot"`) || !strings.Contains(err.Error(), "assistant") {
		t.Fatalf("error = %v", err)
	}
	if got, msgs, _ := s.Load(sess.ID); got.Messages != 0 || len(msgs) != 0 || got.Title != "" {
		t.Errorf("a rejected append stored something: %+v %v", got, msgs)
	}
}

func TestAppendSanitizesWhatJSONCannotHold(t *testing.T) {
	s := newStore(t)
	sess, _ := s.Create(Meta{})
	m := Message{Role: RoleAssistant, Usage: &Usage{OutputTokens: 3, TokensPerSec: math.Inf(1), CostUSD: math.NaN()}}
	tool := Message{Role: RoleTool, Result: &ToolResult{Status: "ok", LatencySeconds: math.NaN(),
		Metadata: map[string]any{"exit_code": 0.0, "handle": make(chan int)}}}
	if err := s.Append(sess.ID, m, tool); err != nil {
		t.Fatalf("append: %v", err)
	}
	_, msgs, _ := s.Load(sess.ID)
	if u := msgs[0].Usage; u.TokensPerSec != 0 || u.CostUSD != 0 || u.OutputTokens != 3 {
		t.Errorf("usage = %+v", u)
	}
	if r := msgs[1].Result; r.LatencySeconds != 0 || !reflect.DeepEqual(r.Metadata, map[string]any{"exit_code": 0.0}) {
		t.Errorf("result = %+v", r)
	}
	// The caller's values are not changed.
	if !math.IsInf(m.Usage.TokensPerSec, 1) || len(tool.Result.Metadata) != 2 {
		t.Error("Append modified the caller's message")
	}
}

func TestConcurrentAppends(t *testing.T) {
	s := newStore(t)
	sess, _ := s.Create(Meta{})
	const per = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				err := s.Append(sess.ID,
					Message{Role: RoleAssistant, Content: fmt.Sprintf("g%d-%d", g, i), Usage: &Usage{PromptTokens: 1, OutputTokens: 2}},
					Message{Role: RoleTool, Content: fmt.Sprintf("g%d-%d", g, i), Result: &ToolResult{Status: "ok", CostUSD: 0.5}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, msgs, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4*per || got.Messages != 4*per {
		t.Fatalf("%d messages stored (session says %d), want %d", len(msgs), got.Messages, 4*per)
	}
	next := [2]int{}
	for i := 0; i < len(msgs); i += 2 {
		a, b := msgs[i], msgs[i+1]
		if a.Seq != i+1 || b.Seq != i+2 {
			t.Fatalf("seq %d,%d at %d", a.Seq, b.Seq, i)
		}
		// Each append's pair stays together and each goroutine's appends
		// keep their order.
		var g, n int
		fmt.Sscanf(a.Content, "g%d-%d", &g, &n)
		if b.Content != a.Content || n != next[g] {
			t.Fatalf("message %d: %q then %q, expected g%d-%d", i+1, a.Content, b.Content, g, next[g])
		}
		next[g]++
	}
	want := Totals{PromptTokens: 2 * per, OutputTokens: 4 * per, ToolCostUSD: per, Turns: 2 * per, ToolCalls: 2 * per}
	if !totalsEqual(got.Totals, want) {
		t.Errorf("totals %+v, want %+v", got.Totals, want)
	}
}
