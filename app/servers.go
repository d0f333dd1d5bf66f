package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
)

// Server is one model server jarvis is configured for: the default one
// (Name "", engine and host from --engine, --host and the config) or a
// named endpoint ([[endpoints]]), whose models are NAME/MODEL. Every front
// end knows servers by this one type; what a kind of server can do is its
// Driver's.
type Server struct {
	Name   string
	Kind   string
	Driver engine.Driver
	// Engine is never nil: a server that cannot be used (its api_key's
	// variable is not set) has an engine that answers every call with
	// the reason, which Err holds.
	Engine engine.InferenceEngine
	Err    error
	// Line is where an endpoint's entry starts in the config file.
	Line int
}

// Ref is the name a person types for model on this server (NAME/MODEL on
// an endpoint).
func (s *Server) Ref(model string) string { return config.JoinModel(s.Name, model) }

// Label names the server in messages: "the server", "endpoint lab".
func (s *Server) Label() string {
	if s.Name == "" {
		return "the server"
	}
	return "endpoint " + s.Name
}

// NewEngine builds the engine that speaks to a server of kind at host
// (the kind's default address when empty), with key for a server that
// takes one ("" sends none); keyFrom says where that key is configured,
// for the advice when the server refuses it ("" names api_key and
// OPENAI_API_KEY).
func NewEngine(kind, host, key, keyFrom string) (engine.InferenceEngine, error) {
	if kind == "" {
		kind = config.DefaultEngine
	}
	d, ok := engine.DriverFor(kind)
	if !ok {
		return nil, fmt.Errorf("this jarvis cannot talk to %q servers (it knows: %s)", kind, strings.Join(engine.Kinds(), ", "))
	}
	if strings.TrimSpace(host) == "" {
		host = d.DefaultHost
	}
	return d.New(host, key, keyFrom)
}

// driverOf is the driver of kind (the default kind when empty).
func driverOf(kind string) engine.Driver {
	if kind == "" {
		kind = config.DefaultEngine
	}
	d, _ := engine.DriverFor(kind)
	return d
}

// BuildServers builds the default server and every endpoint. A wrong
// default host is an error; an endpoint's key whose variable is not set
// makes that endpoint unusable (and says so when it is used), since the
// others may be all a command needs.
func BuildServers(cfg *config.Config) (*Server, []*Server, error) {
	kind := cfg.EngineName()
	key := ""
	if driverOf(kind).TakesKey {
		k, err := cfg.APIKeyValue()
		if err != nil {
			return nil, nil, err
		}
		key = k
	}
	eng, err := NewEngine(kind, cfg.Host, key, "")
	if err != nil {
		return nil, nil, err
	}
	def := &Server{Kind: kind, Driver: driverOf(kind), Engine: eng}
	var named []*Server
	for _, ep := range cfg.Endpoints {
		s := &Server{Name: ep.Name, Kind: ep.Engine, Driver: driverOf(ep.Engine), Line: ep.Line()}
		key, err := cfg.KeyValue(ep)
		if err == nil {
			s.Engine, err = NewEngine(ep.Engine, ep.Host, key, endpointKeyFrom(cfg, ep))
		}
		if err != nil {
			var ke *config.KeyError
			if !errors.As(err, &ke) {
				err = fmt.Errorf("endpoint %s: %w", ep.Name, err)
			}
			s.Err = err
			s.Engine = &unusableServer{host: ep.Host, err: err}
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

// NoModelError says no model is set and the server offers none that can
// chat: Listed models, none of them a chat model. The front end words the
// fix (a download where the server can pull, else starting the server with
// a model).
type NoModelError struct {
	Host    string
	Listed  int
	CanPull bool
}

func (e *NoModelError) Error() string {
	fix := "start the server with a chat model (llama-server -m FILE, vllm serve MODEL, or load one in LM Studio), then run again"
	if e.CanPull {
		fix = "download one (jarvis models pull qwen3, or /pull qwen3 in the workbench), then run again"
	}
	if e.Listed == 0 {
		return fmt.Sprintf("no model is set and the server at %s has none; %s", e.Host, fix)
	}
	return fmt.Sprintf("no model is set and none of the server's %s can chat (embedding models, say); %s", models(e.Listed), fix)
}

// PickModel asks a server of kind which model to use when none is set:
// the first that can chat and call tools, else the first that can chat
// (an embedding model cannot answer at all). None is a *NoModelError.
func PickModel(ctx context.Context, eng engine.InferenceEngine, kind string) (string, error) {
	models, err := eng.ListModels(ctx)
	if err != nil {
		return "", err
	}
	none := &NoModelError{Host: eng.Host(), Listed: len(models), CanPull: driverOf(kind).CanPull}
	if len(models) == 0 {
		return "", none
	}
	var chat string
	for _, m := range models {
		caps, err := eng.Capabilities(ctx, m.Name)
		if err != nil || caps != nil && !slices.Contains(caps, engine.CapCompletion) {
			continue // a server that does not say (nil) may well chat
		}
		if slices.Contains(caps, engine.CapTools) {
			chat = m.Name
			break
		}
		if chat == "" {
			chat = m.Name
		}
	}
	if chat == "" {
		return "", none
	}
	return chat, nil
}

// Price adapts the configured prices of a server's models (endpoint ""
// for the default server) to the agents' and tools' signature.
func Price(cfg *config.Config, endpoint string) func(model string, in, out int) float64 {
	return func(model string, in, out int) float64 { return cfg.PriceAt(endpoint, model).Cost(in, out) }
}

// models counts a server's models in words ("1 model", "3 models"); app
// sits below the front ends, so it does not borrow their formatting.
func models(n int) string {
	if n == 1 {
		return "1 model"
	}
	return fmt.Sprintf("%d models", n)
}
