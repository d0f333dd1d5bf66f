package openaitest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// Script is a flavor, models and rules loaded from a file; Use applies it
// to a server. The file is JSON:
//
//	{
//	  "flavor": "llama.cpp",                   // llama.cpp, vllm, lmstudio or openai
//	  "version": "b6123-0a1b2c3d",             // optional: /props build_info, vLLM's /version
//	  "api_key": "",                           // optional: the bearer key the server requires
//	  "models": [
//	    {"name": "qwen3-8b", "window": 8192, "train_window": 40960}
//	  ],
//	  "rules": [...], "default": {...}         // the scenario: see enginetest.ScriptRules
//	}
//
// Model keys besides those: "no_tools", "type" and "not_loaded" (LM
// Studio), "size", "params", "arch", "quantization",
// "supported_parameters" (a hosted API's entry). Unknown keys are errors.
type Script struct {
	Flavor  Flavor
	Version string
	APIKey  string
	Models  []ModelSpec
	Rules   []*enginetest.Rule
	// Fallback is the default reply (nil: none).
	Fallback *enginetest.Rule
}

type scriptFile struct {
	Flavor  string      `json:"flavor"`
	Version string      `json:"version"`
	APIKey  string      `json:"api_key"`
	Models  []ModelSpec `json:"models"`
	enginetest.ScriptRules
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) { return enginetest.ReadScript(path, ParseScript) }

// ParseScript reads a script from JSON; errors carry line numbers.
func ParseScript(data []byte) (*Script, error) {
	var f scriptFile
	if err := enginetest.DecodeScript(data, &f); err != nil {
		return nil, err
	}
	flavor := Flavor(f.Flavor)
	if !slices.Contains(Flavors, flavor) {
		names := make([]string, len(Flavors))
		for i, fl := range Flavors {
			names[i] = string(fl)
		}
		return nil, fmt.Errorf("flavor must be one of %s, not %q (Ollama's /v1 is served by the Ollama stand-in)", strings.Join(names, ", "), f.Flavor)
	}
	sc := &Script{Flavor: flavor, Version: f.Version, APIKey: f.APIKey}
	for i, m := range f.Models {
		if err := checkModel(m); err != nil {
			return nil, fmt.Errorf("%s: %w", enginetest.EntryName("model", i, m.Name), err)
		}
		sc.Models = append(sc.Models, m)
	}
	var err error
	if sc.Rules, sc.Fallback, err = f.Build(); err != nil {
		return nil, err
	}
	return sc, nil
}

func checkModel(m ModelSpec) error {
	switch {
	case strings.TrimSpace(m.Name) == "":
		return errors.New("a name is required")
	case m.Window < 0 || m.TrainWindow < 0:
		return fmt.Errorf("window and train_window must be positive numbers of tokens, not %d and %d", m.Window, m.TrainWindow)
	case m.Type != "" && !slices.Contains([]string{"llm", "vlm", "embeddings"}, m.Type):
		return fmt.Errorf(`type must be "llm", "vlm" or "embeddings" (LM Studio's kinds), not %q`, m.Type)
	}
	return nil
}

// Use adds a script's models and rules to the server (after any it has)
// and, when the script has them, sets the default reply, the version and
// the key. The script's flavor is the one to create the server with
// (New, Listen).
func (s *Server) Use(sc *Script) {
	for _, m := range sc.Models {
		s.AddModel(m)
	}
	if sc.Version != "" {
		s.SetVersion(sc.Version)
	}
	if sc.APIKey != "" {
		s.RequireKey(sc.APIKey)
	}
	s.Scenario.Use(sc.Rules, sc.Fallback)
}
