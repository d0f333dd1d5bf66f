package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
)

// echoServer is a kind of model server that answers every chat with the
// question: a new engine, added in one place.
type echoServer struct{ host string }

func (e echoServer) Chat(_ context.Context, req engine.ChatRequest, _ func(engine.Chunk)) (engine.ChatResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	return engine.ChatResponse{Message: engine.Message{Role: engine.RoleAssistant, Content: "echo: " + last.Content}}, nil
}

func (e echoServer) Generate(context.Context, engine.GenerateRequest) (engine.GenerateResponse, error) {
	return engine.GenerateResponse{}, errors.New("echo servers do not generate")
}

func (e echoServer) ListModels(context.Context) ([]engine.ModelInfo, error) {
	return []engine.ModelInfo{{Name: "parrot"}}, nil
}

func (e echoServer) Capabilities(context.Context, string) ([]string, error) {
	return []string{engine.CapCompletion}, nil
}

func (e echoServer) Version(context.Context) (string, error) { return "1.0", nil }
func (e echoServer) Host() string                            { return e.host }

// A new kind of model server is one registration: the configuration takes
// it (--engine, [[endpoints]] engine), the servers are built with it, a
// turn runs on it, and what it cannot do (pull, unload) is its traits'.
func TestANewKindOfServerIsOneRegistration(t *testing.T) {
	engine.Register(engine.Driver{
		Kind: "echo", Label: "echo server", DefaultHost: "http://echo.invalid",
		ParseHost: func(h string) (string, error) { return h, nil }, HostHint: "any address",
		New: func(host, _, _ string) (engine.InferenceEngine, error) { return echoServer{host: host}, nil },
	})
	env := load(t, "engine = \"echo\"\nmodel = \"parrot\"\ntools = []\n\n[[endpoints]]\nname = \"cage\"\nengine = \"echo\"\nhost = \"http://cage.invalid\"\n")
	if env.At.Kind != "echo" || env.At.Driver.Label != "echo server" || env.Engine.Host() != "http://echo.invalid" {
		t.Fatalf("default server %+v", env.At)
	}
	if s, model := env.Lookup("cage/parrot"); s.Name != "cage" || s.Engine.Host() != "http://cage.invalid" || model != "parrot" {
		t.Fatalf("endpoint %+v %s", s, model)
	}
	if env.At.Driver.CanPull || env.At.Driver.TakesKey {
		t.Fatal("the new kind has traits it did not register")
	}
	exec, done, err := env.Executor(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	res, err := RunTurn(context.Background(), env.Turn("simple", env.Model, exec, nil), nil, agent.Input{Text: "hello"})
	if err != nil || !strings.Contains(res.Content, "echo: hello") {
		t.Fatalf("a turn on the new kind: %+v, %v", res, err)
	}
}
