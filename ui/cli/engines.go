package cli

import (
	"slices"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/tui"
)

// server is one model server jarvis is configured for: the default one
// (name "", engine and host from --engine, --host and the config) or a
// named endpoint ([[endpoints]]), whose models are NAME/MODEL.
type server struct {
	name string
	kind string
	// engine is never nil: a server that cannot be used (its api_key's
	// variable is not set) has an engine that answers every call with
	// the reason.
	engine engine.InferenceEngine
	err    error
	// line is where an endpoint's entry starts in the config file.
	line int
}

// ref is the name a person types for model on this server.
func (s *server) ref(model string) string { return config.JoinModel(s.name, model) }

// label names the server in messages: "the server", "endpoint lab".
func (s *server) label() string {
	if s.name == "" {
		return "the server"
	}
	return "endpoint " + s.name
}

// kindName is how messages name the kind of server.
func kindName(kind string) string {
	if kind == config.EngineOpenAI {
		return "OpenAI-compatible server"
	}
	return "Ollama server"
}

// fromWire is the command line's view of a configured server.
func fromWire(s *app.Server) *server {
	return &server{name: s.Name, kind: s.Kind, engine: s.Engine, err: s.Err, line: s.Line}
}

// lookup finds the server a model reference names ("lab/qwen3-32b", or a
// bare name for the default server) and the model's name there.
func (env *environment) lookup(ref string) (*server, string) {
	s, model := env.w.Lookup(ref)
	return env.serverOf(s), model
}

// serverOf is the command line's view of one of the environment's servers.
func (env *environment) serverOf(s *app.Server) *server {
	if i := slices.Index(env.w.Named, s); i >= 0 {
		return env.named[i]
	}
	return env.def
}

// servers lists the default server, then the endpoints.
func (env *environment) servers() []*server { return append([]*server{env.def}, env.named...) }

// tuiEndpoints are the endpoints as the workbench takes them.
func (env *environment) tuiEndpoints() []tui.Endpoint {
	out := make([]tui.Endpoint, len(env.named))
	for i, s := range env.named {
		out[i] = tui.Endpoint{Name: s.name, Kind: s.kind, Engine: s.engine, Err: s.err}
	}
	return out
}
