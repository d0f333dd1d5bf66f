package ollamatest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// Script is a set of models and rules loaded from a file; Use applies it to
// a server. The file is JSON:
//
//	{
//	  "version": "0.17.4",                       // optional: /api/version
//	  "default_context_length": 4096,            // optional: window without num_ctx
//	  "keep_alive": "5m",                        // optional: how long models stay loaded
//	  "no_render": false,                        // optional: true ignores _debug_render_only
//	  "models": [                                // what /api/tags and /api/show know
//	    {"name": "qwen3:8b", "capabilities": ["completion", "tools", "thinking"],
//	     "size": 5225388164, "family": "qwen3", "parameter_size": "8.2B",
//	     "quantization": "Q4_K_M", "context_length": 40960}
//	  ],
//	  "pullable": [                              // obtainable with /api/pull
//	    {"name": "llama3.2:1b", "layers": [1321082688, 7711], "interval": "20ms"}
//	  ],
//	  "rules": [...], "default": {...}           // the scenario: see enginetest.ScriptRules
//	}
//
// Model keys besides those above: "embedding_length", "modified_at",
// "template" ("json", "names", a template Ollama ships such as
// "command-r", or Go template text; see Render), "renderer" and "parser"
// (Ollama's built-in ones, as a Modelfile's RENDERER and PARSER),
// "parameters" (an object; num_ctx and num_predict there are the model's
// defaults), "no_render", "load_time" (Go duration) and "prompt_rate"
// (tokens per second). A "pullable" entry takes the same keys plus
// "layers" (sizes in bytes), "steps", "interval" (Go duration) and
// "error" (see PullSpec). Unknown keys are errors, so a typo does not
// silently change a demo.
type Script struct {
	Version string
	// DefaultContextLength, KeepAlive and NoRender are the server-wide
	// settings (see SetDefaultContextLength, SetKeepAlive and
	// SetRenderSupport); zero values leave the server's as they are.
	DefaultContextLength int
	KeepAlive            *time.Duration
	NoRender             bool
	Models               []ModelSpec
	Pullable             []PullableModel
	Rules                []*enginetest.Rule
	// Fallback is the default reply (nil: none).
	Fallback *enginetest.Rule
}

// PullableModel is a model a script makes available to /api/pull.
type PullableModel struct {
	Model ModelSpec
	Pull  PullSpec
}

// Use adds a script's models and rules to the server (after any it has)
// and, when the script has them, sets the default reply, the version and
// the server-wide settings.
func (s *Server) Use(sc *Script) {
	for _, m := range sc.Models {
		s.AddModel(m)
	}
	for _, p := range sc.Pullable {
		s.Pullable(p.Model, p.Pull)
	}
	if sc.DefaultContextLength > 0 {
		s.SetDefaultContextLength(sc.DefaultContextLength)
	}
	if sc.KeepAlive != nil {
		s.SetKeepAlive(*sc.KeepAlive)
	}
	if sc.NoRender {
		s.SetRenderSupport(false)
	}
	if sc.Version != "" {
		s.SetVersion(sc.Version)
	}
	s.Scenario.Use(sc.Rules, sc.Fallback)
}

// ListenAndServe runs a server with script on addr until ctx ends, calling
// ready with its URL once it accepts connections (ready may be nil).
func ListenAndServe(ctx context.Context, addr string, script *Script, ready func(url string)) error {
	s, err := Listen(addr, script)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(s.URL)
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) { return enginetest.ReadScript(path, ParseScript) }

type scriptFile struct {
	Version              string         `json:"version"`
	DefaultContextLength int            `json:"default_context_length"`
	KeepAlive            *string        `json:"keep_alive"`
	NoRender             bool           `json:"no_render"`
	Models               []modelFile    `json:"models"`
	Pullable             []pullableFile `json:"pullable"`
	enginetest.ScriptRules
}

// modelFile is a ModelSpec with its durations written as Go durations.
type modelFile struct {
	ModelSpec
	LoadTime *enginetest.Duration `json:"load_time"`
}

func (mf modelFile) spec() (ModelSpec, error) {
	m := mf.ModelSpec
	if strings.TrimSpace(m.Name) == "" {
		return m, errors.New("a name is required")
	}
	if m.ContextLength < 0 {
		return m, fmt.Errorf("context_length must be a positive number of tokens, not %d", m.ContextLength)
	}
	if m.PromptRate < 0 {
		return m, fmt.Errorf("prompt_rate must be a positive number of tokens per second, not %g", m.PromptRate)
	}
	if mf.LoadTime != nil {
		m.LoadTime = time.Duration(*mf.LoadTime)
	}
	// Parse the template now, so a broken one is an error of the file.
	if _, err := completeSpec(m, time.Time{}); err != nil {
		return m, err
	}
	return m, nil
}

type pullableFile struct {
	modelFile
	PullSpec
	Interval *enginetest.Duration `json:"interval"`
}

// parseKeepAlive reads keep_alive as the real server's environment
// variable: a Go duration, or a number of seconds; negative is forever.
func parseKeepAlive(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return 0, fmt.Errorf("keep_alive %q is not a duration (use a form such as \"5m\" or \"-1\" for forever)", s)
}

// ParseScript reads a script from JSON; errors carry line numbers.
func ParseScript(data []byte) (*Script, error) {
	var f scriptFile
	if err := enginetest.DecodeScript(data, &f); err != nil {
		return nil, err
	}
	sc := &Script{Version: f.Version, DefaultContextLength: f.DefaultContextLength, NoRender: f.NoRender}
	if f.DefaultContextLength < 0 {
		return nil, fmt.Errorf("default_context_length must be a positive number of tokens, not %d", f.DefaultContextLength)
	}
	if f.KeepAlive != nil {
		d, err := parseKeepAlive(*f.KeepAlive)
		if err != nil {
			return nil, err
		}
		sc.KeepAlive = &d
	}
	for i, mf := range f.Models {
		m, err := mf.spec()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", enginetest.EntryName("model", i, mf.Name), err)
		}
		sc.Models = append(sc.Models, m)
	}
	for i, pf := range f.Pullable {
		m, err := pf.spec()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", enginetest.EntryName("pullable model", i, pf.Name), err)
		}
		p := pf.PullSpec
		if pf.Interval != nil {
			p.Interval = time.Duration(*pf.Interval)
		}
		for _, l := range p.Layers {
			if l <= 0 {
				return nil, fmt.Errorf("%s: layer sizes must be positive numbers of bytes, not %d", enginetest.EntryName("pullable model", i, pf.Name), l)
			}
		}
		if p.Steps < 0 {
			return nil, fmt.Errorf("%s: steps must be positive, not %d", enginetest.EntryName("pullable model", i, pf.Name), p.Steps)
		}
		sc.Pullable = append(sc.Pullable, PullableModel{Model: m, Pull: p})
	}
	var err error
	if sc.Rules, sc.Fallback, err = f.Build(); err != nil {
		return nil, err
	}
	return sc, nil
}
