package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// recordAppended runs an agent on eng and returns what it appended, as a
// session would store it.
func recordAppended(t *testing.T, name string, eng engine.InferenceEngine, ctx context.Context) ([]Appended, error) {
	t.Helper()
	var mu sync.Mutex
	var got []Appended
	a, err := New(name, Config{Engine: eng, Model: "m", Executor: executor(t, nil, nil), MaxTurns: 5,
		Price:     func(_ string, in, out int) float64 { return float64(in+out) / 1000 },
		OnMessage: func(a Appended) { mu.Lock(); got = append(got, a); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Answer(ctx, &Conversation{}, Input{Text: "q"})
	mu.Lock()
	defer mu.Unlock()
	return got, err
}

// lastReply is the last assistant message appended.
func lastReply(t *testing.T, got []Appended) Appended {
	t.Helper()
	for i := len(got) - 1; i >= 0; i-- {
		if got[i].Message.Role == engine.RoleAssistant {
			return got[i]
		}
	}
	t.Fatalf("no assistant message among %+v", got)
	return Appended{}
}

// The reply a session stores carries the usage as the run measured and
// priced it, so a reopened session has its cost.
func TestAppendedReplyCarriesItsCost(t *testing.T) {
	for _, name := range []string{Simple, Orchestrator, ReAct} {
		eng := &fakeEngine{reply: func(engine.ChatRequest, int) (engine.ChatResponse, []string, error) {
			return text("Final Answer: 4"), nil, nil
		}}
		got, err := recordAppended(t, name, eng, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r := lastReply(t, got)
		if r.Usage == nil || r.Usage.CostUSD != 0.015 || r.Usage.WallSeconds <= 0 {
			t.Errorf("%s: stored usage %+v, want the priced one (cost 0.015, wall time)", name, r.Usage)
		}
		if r.Incomplete != "" {
			t.Errorf("%s: a whole reply is marked %q", name, r.Incomplete)
		}
	}
}

// A reply cut by the length limit, a lost stream, a content filter or
// an error says so on its message.
func TestAppendedReplySaysWhyItStoppedEarly(t *testing.T) {
	cases := []struct {
		name  string
		agent string
		reply func() (engine.ChatResponse, []string, error)
		want  string
	}{
		{"length", Orchestrator, func() (engine.ChatResponse, []string, error) {
			r := text("The list: one, two, thr")
			r.DoneReason = "length"
			return r, nil, nil
		}, IncompleteLength},
		{"length in react", ReAct, func() (engine.ChatResponse, []string, error) {
			r := text("Final Answer: one, two, thr")
			r.DoneReason = "length"
			return r, nil, nil
		}, IncompleteLength},
		{"content filter", Orchestrator, func() (engine.ChatResponse, []string, error) {
			r := text("I will not")
			r.DoneReason = "content_filter"
			return r, nil, nil
		}, IncompleteRefused},
		{"lost", Orchestrator, func() (engine.ChatResponse, []string, error) {
			return text(""), []string{"The answer ", "is"}, &engine.StreamError{Received: 13, Err: errors.New("EOF")}
		}, IncompleteLost},
		{"server error", ReAct, func() (engine.ChatResponse, []string, error) {
			return text(""), []string{"Thought: hm"}, &engine.ServerError{Message: "runner crashed"}
		}, IncompleteError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := &fakeEngine{reply: func(engine.ChatRequest, int) (engine.ChatResponse, []string, error) { return c.reply() }}
			got, _ := recordAppended(t, c.agent, eng, context.Background())
			if r := lastReply(t, got); r.Incomplete != c.want {
				t.Errorf("reply %q marked %q, want %q", r.Message.Content, r.Incomplete, c.want)
			}
			for _, a := range got {
				if a.Message.Role != engine.RoleAssistant && a.Incomplete != "" {
					t.Errorf("a %s message is marked %q", a.Message.Role, a.Incomplete)
				}
			}
		})
	}
}

// cancellingEngine streams a few tokens and is cancelled mid-reply.
type cancellingEngine struct {
	fakeEngine
	cancel context.CancelFunc
}

func (c *cancellingEngine) Chat(ctx context.Context, req engine.ChatRequest, onChunk func(engine.Chunk)) (engine.ChatResponse, error) {
	resp := text("Half an ans")
	onChunk(engine.Chunk{Content: resp.Message.Content})
	c.cancel()
	<-ctx.Done()
	return resp, ctx.Err()
}

func TestAppendedReplyCancelledMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got, err := recordAppended(t, Orchestrator, &cancellingEngine{cancel: cancel}, ctx)
	if err == nil {
		t.Fatal("a cancelled run reports no error")
	}
	r := lastReply(t, got)
	if r.Message.Content != "Half an ans" || r.Incomplete != IncompleteCancelled {
		t.Fatalf("kept %q marked %q, want the partial reply marked cancelled", r.Message.Content, r.Incomplete)
	}
}

// A reply a content filter stopped says so as it happens, as one cut by
// the length limit does.
func TestContentFilterIsNoticed(t *testing.T) {
	rec := &events.Recorder{}
	eng := &fakeEngine{reply: func(engine.ChatRequest, int) (engine.ChatResponse, []string, error) {
		r := text("I will not")
		r.DoneReason = "content_filter"
		return r, nil, nil
	}}
	res, err := newAgent(t, Simple, eng, nil, rec).Run(context.Background(), &Conversation{}, "q")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Events() {
		if e.Type == events.Notice && strings.Contains(e.Text, "content filter") {
			return
		}
	}
	t.Fatalf("no notice for a filtered reply: %+v", res)
}
