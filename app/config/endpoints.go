package config

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	// The kinds of model server jarvis speaks to register their drivers:
	// Ollama's native API, and the OpenAI API that llama.cpp, vLLM, LM
	// Studio, Ollama's /v1 and hosted services offer.
	_ "github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	_ "github.com/jarvis-workbench/jarvis/engine/openai"
)

// DefaultEngine is the kind of the default server when none is set.
const DefaultEngine = "ollama"

// kinds lists the kinds of server for messages: "ollama or openai".
func kinds() string { return strings.Join(engine.Kinds(), " or ") }

// EnvEngine chooses the engine from the environment.
const EnvEngine = "JARVIS_ENGINE"

// Secret is a value that is never shown: printing it with %v or %s, or
// encoding it as JSON, gives "[redacted]". Reveal returns the value, for
// the one place that sends it.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString hides the value from %#v too.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON hides the value from JSON output.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Reveal returns the value itself.
func (s Secret) Reveal() string { return string(s) }

// Endpoint is one named model server ([[endpoints]] in the file). Its
// models are chosen as NAME/MODEL (--model lab/qwen3-32b, /model in the
// workbench).
type Endpoint struct {
	Name   string `toml:"name"`
	Engine string `toml:"engine"`
	Host   string `toml:"host"`
	// APIKey is sent to an openai endpoint as a bearer token; ${VAR}
	// is read from the environment. OPENAI_API_KEY is never sent to an
	// endpoint unless its api_key names it: a key goes only where the
	// configuration says.
	APIKey Secret `toml:"api_key"`
	// Prices are US dollars per million tokens for the endpoint's
	// models ([endpoints.prices."MODEL"]).
	Prices map[string]Price `toml:"prices"`

	// line is of its [[endpoints]] header, keyLine of its api_key.
	line, keyLine int
}

// Line is where the endpoint's entry starts in the config file (0 when
// unknown).
func (e Endpoint) Line() int { return e.line }

// endpointName is what a name may be: it is typed before a slash in model
// names, so it holds no slash or colon.
var endpointName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// EngineName returns the engine kind of the default server: the one set,
// else Ollama.
func (c *Config) EngineName() string {
	if c.Engine == "" {
		return DefaultEngine
	}
	return c.Engine
}

// Driver is the driver of the default server's kind (the zero Driver
// when the kind is unknown: Read reports it).
func (c *Config) Driver() engine.Driver {
	d, _ := engine.DriverFor(c.EngineName())
	return d
}

// applyEngine sets the engine from the environment and the flag, before
// the other variables: OLLAMA_HOST is Ollama's and names no server of
// another kind.
func (c *Config) applyEngine(flag string) {
	c.set("engine", strings.ToLower(strings.TrimSpace(os.Getenv(EnvEngine))), "env "+EnvEngine, &c.Engine)
	c.set("engine", strings.ToLower(strings.TrimSpace(flag)), "flag --engine", &c.Engine)
	c.Engine = strings.ToLower(strings.TrimSpace(c.Engine))
}

// checkEndpoints checks every [[endpoints]] entry, and notes where each
// is in the file.
func checkEndpoints(c *Config, r *report) {
	seen := map[string]int{}
	for i := range c.Endpoints {
		ep := &c.Endpoints[i]
		at := fmt.Sprintf("endpoints[%d]", i)
		ep.line = c.lines[at]
		ep.keyLine = c.lines.near(at + ".api_key")
		ep.Name = strings.TrimSpace(ep.Name)
		ep.Engine = strings.ToLower(strings.TrimSpace(ep.Engine))
		switch {
		case ep.Name == "":
			r.at(at+".name", "every endpoint needs a name", `add one, e.g. name = "lab" (its models are then lab/MODEL)`)
		case !endpointName().MatchString(ep.Name):
			r.at(at+".name", fmt.Sprintf("%q cannot name an endpoint", ep.Name), "use letters, digits, '.', '_' and '-' (no '/' or ':', which separate it from the model)")
		default:
			if first, dup := seen[ep.Name]; dup {
				r.at(at+".name", fmt.Sprintf("the name %q is already used by the endpoint at line %d", ep.Name, first), "give each endpoint its own name")
			} else {
				seen[ep.Name] = ep.line
			}
		}
		drv, known := engine.DriverFor(ep.Engine)
		switch {
		case known:
		case ep.Engine == "":
			r.at(at+".engine", "says no kind of server", "add engine = "+quotedKinds())
		default:
			r.at(at+".engine", fmt.Sprintf("unknown engine %q", ep.Engine), "choose "+kinds())
		}
		switch {
		case strings.TrimSpace(ep.Host) == "":
			r.at(at+".host", "every endpoint needs a host", `add its base URL, e.g. host = "http://gpu-box:8000/v1"`)
		case known:
			if _, err := ParseServerHost(ep.Engine, ep.Host); err != nil {
				r.at(at+".host", hideURL(err.Error(), ep.Host), "")
			}
		}
		if known && !drv.TakesKey && ep.APIKey != "" {
			r.at(at+".api_key", drv.Label+" takes no API key", "remove it; api_key is for servers that want one")
		}
	}
}

// ParseServerHost checks and normalises a server address for an engine
// kind: Ollama's forms ("gpu-box", ":11500") or a base URL for the OpenAI
// API (the /v1 is added to a URL without a path).
func ParseServerHost(kind, host string) (string, error) {
	d, ok := engine.DriverFor(kind)
	if !ok {
		return "", fmt.Errorf("unknown engine %q: choose %s", kind, kinds())
	}
	return d.ParseHost(host)
}

// quotedKinds lists the kinds as a config file writes them: "ollama" or
// "openai".
func quotedKinds() string {
	var q []string
	for _, k := range engine.Kinds() {
		q = append(q, fmt.Sprintf("%q", k))
	}
	return strings.Join(q, " or ")
}

// Endpoint returns the endpoint called name.
func (c *Config) Endpoint(name string) (Endpoint, bool) {
	for _, ep := range c.Endpoints {
		if ep.Name == name {
			return ep, true
		}
	}
	return Endpoint{}, false
}

// SplitModel reads a model reference: "lab/qwen3-32b" is the model
// qwen3-32b on the endpoint lab when an endpoint has that name; anything
// else ("qwen3:8b", "hf.co/org/model") is a model of the default server.
func (c *Config) SplitModel(ref string) (endpoint, model string) {
	if name, rest, ok := strings.Cut(ref, "/"); ok && rest != "" {
		if _, known := c.Endpoint(name); known {
			return name, rest
		}
	}
	return "", ref
}

// JoinModel is SplitModel's inverse: the reference a person types.
func JoinModel(endpoint, model string) string {
	if endpoint == "" {
		return model
	}
	return endpoint + "/" + model
}

// PriceAt returns the price of model on an endpoint ("" for the default
// server): the endpoint's own prices, else the top-level ones.
func (c *Config) PriceAt(endpoint, model string) Price {
	if ep, ok := c.Endpoint(endpoint); ok && endpoint != "" {
		if p, ok := priceIn(ep.Prices, model); ok {
			return p
		}
	}
	return c.PriceFor(model)
}

// priceIn finds model's price in prices; a price for "qwen3" also
// applies to "qwen3:8b".
func priceIn(prices map[string]Price, model string) (Price, bool) {
	if p, ok := prices[model]; ok {
		return p, true
	}
	if base, _, found := strings.Cut(model, ":"); found {
		p, ok := prices[base]
		return p, ok
	}
	return Price{}, false
}

// EnvAPIKey is where the default server's key is read when the file sets
// none.
const EnvAPIKey = openai.EnvAPIKey

// KeyError is an api_key whose ${VAR} is not set. It names the variable,
// never a key.
type KeyError struct {
	Where string // "api_key" or `api_key of endpoint "lab"`
	Var   string
	Path  string
	Line  int
}

func (e *KeyError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	return fmt.Sprintf("the %s (config %s) is ${%s}, but %s is not set in the environment; export %s=..., or write the key in the config", e.Where, loc, e.Var, e.Var, e.Var)
}

var envRef = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandKey replaces each ${VAR} of raw with the variable's value; an
// unset or empty variable is a *KeyError.
func expandKey(raw Secret, where, path string, line int) (string, error) {
	var missing string
	out := envRef().ReplaceAllStringFunc(raw.Reveal(), func(ref string) string {
		name := envRef().FindStringSubmatch(ref)[1]
		v := os.Getenv(name)
		if v == "" && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", &KeyError{Where: where, Var: missing, Path: path, Line: line}
	}
	return strings.TrimSpace(out), nil
}

// APIKeyValue returns the key for the default server: api_key (with ${VAR}
// expanded), else OPENAI_API_KEY; "" when neither is set. Only the openai
// engine sends it.
func (c *Config) APIKeyValue() (string, error) {
	if c.APIKey != "" {
		return expandKey(c.APIKey, "api_key", c.path, c.lines["api_key"])
	}
	return strings.TrimSpace(os.Getenv(EnvAPIKey)), nil
}

// KeyValue returns the endpoint's key (with ${VAR} expanded); "" when it
// has none.
func (c *Config) KeyValue(ep Endpoint) (string, error) {
	if ep.APIKey == "" {
		return "", nil
	}
	return expandKey(ep.APIKey, fmt.Sprintf("api_key of endpoint %q", ep.Name), c.path, ep.keyLine)
}

// keySetting describes a key for `config show` without showing it;
// envFallback is whether OPENAI_API_KEY stands in for a key not set.
func keySetting(raw Secret, envFallback bool) string {
	if raw == "" && envFallback && os.Getenv(EnvAPIKey) != "" {
		return "(set; hidden)"
	}
	return hidden(raw.Reveal())
}

// defaultHost is the default server's address when none is set.
func (c *Config) defaultHost() string {
	return c.Driver().DefaultHost
}
