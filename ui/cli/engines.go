package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	"github.com/jarvis-workbench/jarvis/ui/config"
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

// newEngine builds the engine that speaks to a server of kind at host,
// with key for an openai server ("" sends none); keyFrom says where that
// key is configured, for the advice when the server refuses it ("" names
// api_key and OPENAI_API_KEY).
func newEngine(kind, host, key, keyFrom string) (engine.InferenceEngine, error) {
	switch kind {
	case config.EngineOllama, "":
		return ollama.New(host)
	case config.EngineOpenAI:
		if strings.TrimSpace(host) == "" {
			host = config.DefaultOpenAIHost
		}
		return openai.New(host, openai.WithAPIKey(key), openai.WithKeyFrom(keyFrom))
	}
	return nil, fmt.Errorf("this jarvis cannot talk to %q servers (it knows: %s)", kind, strings.Join(config.Engines, ", "))
}

// buildServers builds the default server and every endpoint. A wrong
// default host is an error; an endpoint's key whose variable is not set
// makes that endpoint unusable (and says so when it is used), since the
// others may be all this command needs.
func buildServers(cfg *config.Config) (*server, []*server, error) {
	kind := cfg.EngineName()
	key := ""
	if kind == config.EngineOpenAI {
		k, err := cfg.APIKeyValue()
		if err != nil {
			return nil, nil, err
		}
		key = k
	}
	eng, err := newEngine(kind, cfg.Host, key, "")
	if err != nil {
		return nil, nil, err
	}
	def := &server{kind: kind, engine: eng}
	var named []*server
	for _, ep := range cfg.Endpoints {
		s := &server{name: ep.Name, kind: ep.Engine, line: ep.Line()}
		key, err := cfg.KeyValue(ep)
		if err == nil {
			s.engine, err = newEngine(ep.Engine, ep.Host, key, endpointKeyFrom(cfg, ep))
		}
		if err != nil {
			var ke *config.KeyError
			if !errors.As(err, &ke) {
				err = fmt.Errorf("endpoint %s: %w", ep.Name, err)
			}
			s.err = err
			s.engine = &unusableServer{host: ep.Host, err: err}
		}
		named = append(named, s)
	}
	return def, named, nil
}

// endpointKeyFrom says where an endpoint's key is set.
func endpointKeyFrom(cfg *config.Config, ep config.Endpoint) string {
	where := fmt.Sprintf("api_key of endpoint %s in the config", ep.Name)
	if cfg.Path() != "" && ep.Line() > 0 {
		where = fmt.Sprintf("api_key of endpoint %s (config %s:%d)", ep.Name, cfg.Path(), ep.Line())
	}
	return where
}

// unusableServer is the engine of a server that cannot be used: every
// call returns why.
type unusableServer struct {
	host string
	err  error
}

func (u *unusableServer) Chat(context.Context, engine.ChatRequest, func(engine.Chunk)) (engine.ChatResponse, error) {
	return engine.ChatResponse{}, u.err
}

func (u *unusableServer) Generate(context.Context, engine.GenerateRequest) (engine.GenerateResponse, error) {
	return engine.GenerateResponse{}, u.err
}

func (u *unusableServer) ListModels(context.Context) ([]engine.ModelInfo, error) { return nil, u.err }

func (u *unusableServer) Capabilities(context.Context, string) ([]string, error) { return nil, u.err }

func (u *unusableServer) Version(context.Context) (string, error) { return "", u.err }

func (u *unusableServer) Host() string { return u.host }

// servers lists the default server, then the endpoints.
func (env *environment) servers() []*server { return append([]*server{env.def}, env.named...) }

// lookup finds the server a model reference names ("lab/qwen3-32b", or a
// bare name for the default server) and the model's name there.
func (env *environment) lookup(ref string) (*server, string) {
	name, model := env.cfg.SplitModel(ref)
	for _, s := range env.named {
		if s.name == name {
			return s, model
		}
	}
	return env.def, model
}

// tuiEndpoints are the endpoints as the workbench takes them.
func (env *environment) tuiEndpoints() []tui.Endpoint {
	out := make([]tui.Endpoint, len(env.named))
	for i, s := range env.named {
		out[i] = tui.Endpoint{Name: s.name, Kind: s.kind, Engine: s.engine, Err: s.err}
	}
	return out
}
