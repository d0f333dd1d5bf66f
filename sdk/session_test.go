package sdk_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/sdk"
	"github.com/jarvis-workbench/jarvis/tools"
)

// A Session is a conversation: the second question is asked after the
// first and its answer.
func TestSessionAsksTurnAfterTurn(t *testing.T) {
	f := newFixture(t, "")
	f.srv.On(et.UserSays("Lisbon")).Reply(et.Text("Lisbon it is."))
	f.srv.On(et.UserSays("weather")).Reply(et.Text("Mild in May."))
	j := f.open(t)
	defer j.Close()
	s := j.NewSession(sdk.AskOptions{Tools: []string{}})
	defer s.Close()
	ctx := context.Background()
	if res, err := s.Ask(ctx, "Plan a trip to Lisbon"); err != nil || res.Content != "Lisbon it is." {
		t.Fatalf("first: %+v %v", res, err)
	}
	res, err := s.Ask(ctx, "And the weather?")
	if err != nil || res.Content != "Mild in May." {
		t.Fatalf("second: %+v %v", res, err)
	}
	chats := f.srv.Chats()
	var sent []string
	for _, m := range chats[len(chats)-1].Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+": "+m.Content)
		}
	}
	want := []string{"user: Plan a trip to Lisbon", "assistant: Lisbon it is.", "user: And the weather?"}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the second question was sent with:\n%s", strings.Join(sent, "\n"))
	}
	if n := len(s.Messages()); n != 4 {
		t.Fatalf("%d messages in the session", n)
	}
	s.Close()
	if _, err := s.Ask(ctx, "more?"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("asked after Close: %v", err)
	}
}

// depsTool records what its factory was given.
type depsTool struct{ name string }

func (d depsTool) Spec() tools.Spec {
	return tools.Spec{Name: d.name, Description: "Says what it was given.", Category: "custom", Parameters: tools.Params()}
}

func (depsTool) Execute(context.Context, tools.Args) tools.Result { return tools.OK("ok") }

var (
	seenMu sync.Mutex
	seen   []tools.Deps
)

func init() {
	if err := sdk.Register("deps_probe", func(d tools.Deps) (tools.Tool, error) {
		seenMu.Lock()
		seen = append(seen, d)
		seenMu.Unlock()
		return depsTool{"deps_probe"}, nil
	}); err != nil {
		panic(err)
	}
}

// A registered tool gets what the built-in tools get: the engine and
// model for its sub-queries, the memory store, the settings and the run's
// event bus.
func TestRegisteredToolGetsWhatTheBuiltinsGet(t *testing.T) {
	f := newFixture(t, "[tool.deps_probe]\ntimeout = 5\n")
	f.srv.On(et.UserSays("hello")).Reply(et.Text("Hello."))
	j := f.open(t)
	defer j.Close()
	var got []events.Event
	_, err := j.Ask(context.Background(), "hello", sdk.AskOptions{Tools: []string{"deps_probe"}, OnEvent: func(e events.Event) { got = append(got, e) }})
	if err != nil {
		t.Fatal(err)
	}
	seenMu.Lock()
	d := seen[len(seen)-1]
	seenMu.Unlock()
	if d.Engine == nil || d.Engine.Host() != f.srv.URL || d.Model != "qwen3" || d.Memory == nil || d.Bus == nil || d.For("deps_probe").TimeoutSeconds == nil {
		t.Fatalf("deps %+v", d)
	}
	d.Bus.Publish(events.Event{Type: events.Notice, Text: "from the tool"})
	if last := got[len(got)-1]; last.Text != "from the tool" {
		t.Fatalf("the tool's event did not reach OnEvent: %+v", last)
	}
}

// Register refuses at once a tool whose spec is not named as registered.
func TestRegisterRefusesAMisnamedSpecAtOnce(t *testing.T) {
	err := sdk.Register("probe_two", func(tools.Deps) (tools.Tool, error) { return depsTool{"probe_2"}, nil })
	if err == nil || !strings.Contains(err.Error(), `registered as "probe_two", but its spec is named "probe_2"`) {
		t.Fatalf("Register = %v", err)
	}
}
