package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/jarvis-workbench/jarvis/engine"
)

// What the engine learns about a model's window and abilities beyond
// /v1/models, and the check that no answer comes from a cut prompt.
//
// These servers fix the window when they load a model, and some cut a
// prompt that does not fit from the front without a word (Ollama's /v1,
// LM Studio's truncation policies). The window is read where the server
// says it (see Show); an Ollama behind /v1 is asked through its native
// API on the same host (/api/show for the model's maximum and
// capabilities, /api/ps for the window it loaded the model with). And a
// reply whose reported prompt fills the window is a cut: Chat returns a
// *engine.ContextOverflowError with the sizes, never the answer alone.

// serverWindow is the window a /v1/models entry says the server runs the
// model with, and where it says so.
func serverWindow(x modelExtras) (int, string) {
	switch {
	case x.LoadedContextLength > 0:
		return x.LoadedContextLength, "LM Studio's loaded_context_length"
	case x.MaxModelLen > 0:
		return x.MaxModelLen, "vLLM's max_model_len"
	case x.ContextLength > 0:
		return x.ContextLength, "the API's context_length"
	}
	return 0, ""
}

// listedCapabilities are the capabilities a /v1/models entry (or LM
// Studio's own) says, nil when it says none.
func listedCapabilities(x modelExtras) []string {
	switch {
	case x.Type == "embeddings" || x.Type == "embedding":
		return []string{engine.CapEmbedding}
	case x.Type == "llm":
		// LM Studio takes tools with any model (in its own format when
		// the model has none).
		return []string{engine.CapCompletion, engine.CapTools}
	case x.Type == "vlm":
		return []string{engine.CapCompletion, engine.CapTools, engine.CapVision}
	case len(x.SupportedParameters) > 0:
		caps := []string{engine.CapCompletion}
		if slices.Contains(x.SupportedParameters, "tools") {
			caps = append(caps, engine.CapTools)
		}
		if slices.Contains(x.SupportedParameters, "reasoning") || slices.Contains(x.SupportedParameters, "include_reasoning") {
			caps = append(caps, engine.CapThinking)
		}
		if x.Architecture != nil && slices.Contains(x.Architecture.InputModalities, "image") {
			caps = append(caps, engine.CapVision)
		}
		return caps
	}
	return nil
}

// capabilities are what llama.cpp's /props says of the loaded model, nil
// when it says nothing (older builds).
func (p llamaProps) capabilities() []string {
	if p.Modalities == nil && p.ChatTemplateCaps == nil {
		return nil
	}
	caps := []string{engine.CapCompletion}
	if p.ChatTemplateCaps != nil && p.ChatTemplateCaps.SupportsTools {
		caps = append(caps, engine.CapTools)
	}
	if p.Modalities != nil && p.Modalities.Vision {
		caps = append(caps, engine.CapVision)
	}
	return caps
}

// ollamaShow is the part of Ollama's native /api/show the engine reads.
type ollamaShow struct {
	Capabilities []string       `json:"capabilities"`
	ModelInfo    map[string]any `json:"model_info"`
	Details      struct {
		Family string `json:"family"`
	} `json:"details"`
}

// ollamaPS is the part of Ollama's native /api/ps the engine reads.
type ollamaPS struct {
	Models []struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		ContextLength int    `json:"context_length"`
	} `json:"models"`
}

// ollamaDetails fills d from the native API of the Ollama serving /v1:
// its capabilities and maximum from /api/show, and the window it loaded
// the model with from /api/ps. When the native API does not answer, d
// keeps what /v1/models said (nothing about either).
func (e *Engine) ollamaDetails(ctx context.Context, model string, d *engine.ModelDetails) {
	var show ollamaShow
	err := e.client.Post(ctx, "../api/show", map[string]string{"model": model}, &show)
	if isMissing(err) {
		// A proxy or a look-alike: no native API to ask, now or later.
		e.noNative.Store(true)
		return
	}
	if err == nil {
		d.Capabilities = show.Capabilities
		if d.Family == "" {
			d.Family = show.Details.Family
		}
		for k, v := range show.ModelInfo {
			if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 {
				d.ContextLength = int(n)
			}
		}
	}
	d.Window, d.WindowFrom = e.ollamaLoaded(ctx, model)
}

// ollamaLoaded is the window an Ollama behind /v1 loaded model with (0
// when it is not loaded: its next request loads it with the server's
// default, which the API does not say).
func (e *Engine) ollamaLoaded(ctx context.Context, model string) (int, string) {
	var ps ollamaPS
	if e.noNative.Load() || e.getRoot(ctx, "api/ps", &ps) != nil {
		return 0, ""
	}
	for _, m := range ps.Models {
		if (engine.SameModel(m.Name, model) || engine.SameModel(m.Model, model)) && m.ContextLength > 0 {
			return m.ContextLength, "Ollama's /api/ps: the window it loaded the model with"
		}
	}
	return 0, ""
}

// windowNow is the window the server runs model with now, as far as it
// says: what Show found, read again from the server that can change it
// without a restart (an Ollama loading the model on demand, LM Studio's
// loader). A window learnt here is kept in Show's cache.
func (e *Engine) windowNow(ctx context.Context, model string, d engine.ModelDetails, owner string) int {
	w, from := d.Window, d.WindowFrom
	switch owner {
	case ownerOllama:
		w, from = e.ollamaLoaded(ctx, model)
	case ownerLMStudio:
		if x := e.lmStudioExtras(ctx, model, modelExtras{}); x.LoadedContextLength > 0 {
			w, from = x.LoadedContextLength, "LM Studio's loaded_context_length"
		}
	}
	if w > 0 && w != d.Window {
		e.mu.Lock()
		if cached, ok := e.shown[model]; ok {
			cached.Window, cached.WindowFrom = w, from
			e.shown[model] = cached
		}
		e.mu.Unlock()
	}
	return w
}

// checkCut turns a reply whose reported prompt fills the server's window
// into an error: a server that cut the conversation to fit answered a
// part of it, and the answer must not pass for one to the whole. The
// reply stays in resp.
func (e *Engine) checkCut(ctx context.Context, model string, resp engine.ChatResponse) error {
	u := resp.Usage
	if u.Estimated || u.PromptTokens <= 0 {
		return nil
	}
	e.mu.Lock()
	d, ok := e.shown[model]
	owner := e.owners[model]
	e.mu.Unlock()
	if !ok {
		return nil // nothing known of the model: nothing to compare with
	}
	w := d.Window
	if w == 0 || u.PromptTokens >= w || owner == ownerOllama {
		w = e.windowNow(ctx, model, d, owner)
	}
	if w == 0 || u.PromptTokens < w {
		return nil
	}
	return &engine.ContextOverflowError{Model: model, Window: w, PromptTokens: u.PromptTokens, Fix: windowFix,
		Detail: fmt.Sprintf("the server counted a prompt of %s tokens, its whole %s-token window for %s: it cut the conversation to fit, so the reply answers only part of it and is not taken as the answer.",
			engine.GroupDigits(u.PromptTokens), engine.GroupDigits(w), model)}
}

// checkChatModel refuses a chat to a model the server lists as an
// embedding model. What cannot be read lets the chat go: the server then
// says what is wrong.
func (e *Engine) checkChatModel(ctx context.Context, model string) error {
	if d, err := e.Show(ctx, model); err == nil && engine.EmbeddingOnly(d.Capabilities) {
		return &engine.NotAChatModelError{Model: model}
	}
	return nil
}

// isMissing reports whether err is a server saying it has no such
// endpoint.
func isMissing(err error) bool {
	var apiErr *oai.Error
	return errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusNotFound || apiErr.StatusCode == http.StatusMethodNotAllowed || apiErr.StatusCode == http.StatusNotImplemented)
}
