package ollama

import "github.com/jarvis-workbench/jarvis/engine"

func init() {
	engine.Register(engine.Driver{
		Kind: "ollama", Label: "Ollama", API: "Ollama's API", DefaultHost: engine.DefaultHost, HostEnv: "OLLAMA_HOST",
		ParseHost: ParseHost, HostHint: "write the Ollama server's address, e.g. http://127.0.0.1:11434, gpu-box or :11500",
		StartHint: "start Ollama with 'ollama serve' (or open the Ollama app)",
		New:       func(host, _, _ string) (engine.InferenceEngine, error) { return New(host) },
		// Ollama takes the window with each request (num_ctx), downloads
		// and unloads models, and renders a prompt without answering it
		// (_debug_render_only).
		Traits: engine.Traits{CanPull: true, ManagesMemory: true, RendersPrompts: true},
	})
}
