package openai

import "github.com/jarvis-workbench/jarvis/engine"

// DefaultBaseURL is where an OpenAI-compatible server is looked for when no
// host is given: llama.cpp's llama-server on its default port.
const DefaultBaseURL = "http://127.0.0.1:8080/v1"

func init() {
	engine.Register(engine.Driver{
		Kind: "openai", Label: "OpenAI-compatible server", API: "an OpenAI-compatible API", DefaultHost: DefaultBaseURL,
		ParseHost: ParseBaseURL, HostHint: "write the server's base URL, e.g. http://127.0.0.1:8080/v1",
		StartHint: "start the server (for example 'llama-server -m MODEL.gguf --jinja --port 8080', 'vllm serve MODEL', or LM Studio's local server)",
		LoadHint:  "llama-server -m FILE, vllm serve MODEL, or LM Studio's model loader",
		New: func(host, key, keyFrom string) (engine.InferenceEngine, error) {
			if host == "" {
				host = DefaultBaseURL
			}
			return New(host, WithAPIKey(key), WithKeyFrom(keyFrom))
		},
		// These servers load a model with its window (llama-server -c,
		// vllm --max-model-len, LM Studio's context length) and may want
		// a key; they neither download nor unload models on request.
		Traits: engine.Traits{WindowFixedAtLoad: true, TakesKey: true},
	})
}
