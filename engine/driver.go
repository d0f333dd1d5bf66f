package engine

import (
	"slices"
	"sync"
)

// A driver is a kind of model server jarvis speaks to: each engine package
// registers its own (engine/ollama, engine/openai) when it is linked, and
// the configuration, the doctor, the model commands and the workbench ask
// a server's driver what it can do instead of comparing kind names. A new
// kind of server is a new package that registers a Driver.

// Driver describes a kind of model server.
type Driver struct {
	// Kind is what --engine and an endpoint's engine setting say
	// ("ollama", "openai").
	Kind string
	// Label names the kind in messages ("Ollama", "OpenAI-compatible
	// server"); API names what it speaks ("Ollama's API", "an
	// OpenAI-compatible API").
	Label, API string
	// DefaultHost is the address used when none is given.
	DefaultHost string
	// HostEnv is the environment variable the kind's own tools read the
	// address from ("OLLAMA_HOST"; "" when none).
	HostEnv string
	// ParseHost checks and normalises an address of this kind of server;
	// HostHint says, for a wrong one, what to write instead.
	ParseHost func(host string) (string, error)
	HostHint  string
	// StartHint says how such a server is started ("start Ollama with
	// 'ollama serve' (or open the Ollama app)"); LoadHint, for a server
	// that cannot pull, how it is given a model ("llama-server -m FILE,
	// vllm serve MODEL, or LM Studio's model loader").
	StartHint, LoadHint string
	// New builds the engine for a server at host. key is the API key to
	// send ("" for none), keyFrom where it is configured, for advice when
	// the server refuses it.
	New func(host, key, keyFrom string) (InferenceEngine, error)
	Traits
}

// Traits are what a kind of server can do, which decide what jarvis offers
// and how it words a fix.
type Traits struct {
	// WindowFixedAtLoad: the server fixes the context window when it
	// loads a model (llama-server -c, vllm --max-model-len): a request
	// cannot change it, only restarting the server can.
	WindowFixedAtLoad bool
	// CanPull: the server downloads models on request.
	CanPull bool
	// ManagesMemory: the server lists the models it holds in memory and
	// unloads one on request.
	ManagesMemory bool
	// RendersPrompts: the server can render a prompt with the model's
	// template without answering it (what the Context tab shows).
	RendersPrompts bool
	// TakesKey: the server may want an API key.
	TakesKey bool
}

var (
	driversMu sync.RWMutex
	drivers   []Driver
)

// Register adds a kind of server. Registering a kind twice replaces it.
func Register(d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if i := slices.IndexFunc(drivers, func(x Driver) bool { return x.Kind == d.Kind }); i >= 0 {
		drivers[i] = d
		return
	}
	drivers = append(drivers, d)
}

// DriverFor returns the driver of kind.
func DriverFor(kind string) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	i := slices.IndexFunc(drivers, func(x Driver) bool { return x.Kind == kind })
	if i < 0 {
		return Driver{}, false
	}
	return drivers[i], true
}

// Kinds lists the kinds of server registered, in the order they were.
func Kinds() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	out := make([]string, len(drivers))
	for i, d := range drivers {
		out[i] = d.Kind
	}
	return out
}
