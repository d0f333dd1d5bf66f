package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/jarvis-workbench/jarvis/engine"
)

// modelExtras are the fields servers add to a /v1/models entry beyond
// OpenAI's id, created and owned_by. Each names its server.
type modelExtras struct {
	// vLLM: the window it serves the model with (--max-model-len).
	MaxModelLen int `json:"max_model_len"`
	// llama.cpp: the GGUF's own figures.
	Meta *struct {
		NCtxTrain int   `json:"n_ctx_train"`
		NParams   int64 `json:"n_params"`
		Size      int64 `json:"size"`
	} `json:"meta"`
	// LM Studio (its /api/v0/models entries): the model's maximum window,
	// and the window it is loaded with when it is.
	MaxContextLength    int    `json:"max_context_length"`
	LoadedContextLength int    `json:"loaded_context_length"`
	Type                string `json:"type"` // llm, vlm, embeddings
	Arch                string `json:"arch"`
	Quantization        string `json:"quantization"`
	// OpenRouter and other hosted APIs: the window, what a request may
	// set, and what the model reads.
	ContextLength       int      `json:"context_length"`
	SupportedParameters []string `json:"supported_parameters"`
	Architecture        *struct {
		InputModalities []string `json:"input_modalities"`
	} `json:"architecture"`
}

// The owned_by values that name a server, for the extra look-ups only
// that server answers.
const (
	ownerLlamaCpp = "llamacpp"
	ownerVLLM     = "vllm"
	ownerLMStudio = "organization_owner"
	ownerOllama   = "library"
)

// listedModel is one /v1/models entry with its extras.
type listedModel struct {
	oai.Model
	extras modelExtras
}

func (e *Engine) listModels(ctx context.Context, what string) ([]listedModel, error) {
	var resp *http.Response
	page, err := e.models.List(ctx, option.WithResponseInto(&resp))
	if err != nil {
		return nil, e.classify(ctx, err, resp, "", what)
	}
	out := make([]listedModel, len(page.Data))
	for i, m := range page.Data {
		out[i].Model = m
		// The extras are read from the entry's raw JSON; a server that
		// writes one of them in another type only loses that detail.
		_ = json.Unmarshal([]byte(m.RawJSON()), &out[i].extras)
	}
	return out, nil
}

// ListModels lists /v1/models in the server's order. Sizes, parameter
// counts and quantization are filled where the server says them
// (llama.cpp's meta, LM Studio's entries); OpenAI's own entries carry only
// a name and a date.
func (e *Engine) ListModels(ctx context.Context) ([]engine.ModelInfo, error) {
	models, err := e.listModels(ctx, "listing models")
	if err != nil {
		return nil, err
	}
	out := make([]engine.ModelInfo, len(models))
	for i, m := range models {
		info := engine.ModelInfo{Name: m.ID, Family: m.extras.Arch, Quantization: m.extras.Quantization}
		if m.Created > 0 {
			info.ModifiedAt = time.Unix(m.Created, 0).UTC()
		}
		if meta := m.extras.Meta; meta != nil {
			info.SizeBytes = meta.Size
			info.ParameterSize = parameterSize(meta.NParams)
		}
		out[i] = info
	}
	return out, nil
}

// parameterSize writes a parameter count as Ollama does: "8.2B", "600M".
func parameterSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n > 0:
		return fmt.Sprint(n)
	}
	return ""
}

// Capabilities returns what model can do, as the server says it: a hosted
// API's supported_parameters and input modalities, LM Studio's model type,
// llama.cpp's /props (its modalities and chat template's abilities), the
// native /api/show of an Ollama behind /v1. It is nil when the server
// does not say (vLLM, most others): the agent then tries native tool
// calls and images and the server answers. A chat refused because of
// tools is remembered for the engine's lifetime, as the agent then falls
// back to the text protocol.
func (e *Engine) Capabilities(ctx context.Context, model string) ([]string, error) {
	d, err := e.Show(ctx, model)
	if err != nil {
		return nil, err
	}
	return d.Capabilities, nil
}

// Show returns what the server says about model in its /v1/models entry.
// Window is the window the server enforces where it says so: vLLM's
// max_model_len; llama.cpp's runtime n_ctx from /props; LM Studio's
// loaded context length from its /api/v0/models; a hosted API's
// context_length. These servers fix the window when they load a model,
// so it cannot be changed per request. ContextLength is the model's own
// maximum where the server says it (llama.cpp's n_ctx_train, LM Studio's
// max_context_length, a hosted API's context_length): the most a restart
// with a larger window can give. Answers are cached for the engine's
// lifetime; failures are not.
//
// A model the list does not have is a *engine.ModelNotFoundError, except
// on llama.cpp, which serves its one model under any name. A server
// without /v1/models gets the defaults (completion and tools).
func (e *Engine) Show(ctx context.Context, model string) (engine.ModelDetails, error) {
	e.mu.Lock()
	d, ok := e.shown[model]
	e.mu.Unlock()
	if !ok {
		var err error
		if d, err = e.describe(ctx, model); err != nil {
			return engine.ModelDetails{}, err
		}
		e.mu.Lock()
		e.shown[model] = d
		e.mu.Unlock()
	}
	d.Capabilities = slices.Clone(d.Capabilities)
	e.mu.Lock()
	if e.noTools[model] {
		// The server refused tools for it and answered without: it
		// chats, without native tool calls.
		d.Capabilities = slices.DeleteFunc(d.Capabilities, func(c string) bool { return c == engine.CapTools })
		if d.Capabilities == nil {
			d.Capabilities = []string{engine.CapCompletion}
		}
	}
	e.mu.Unlock()
	return d, nil
}

func (e *Engine) describe(ctx context.Context, model string) (engine.ModelDetails, error) {
	// Capabilities stay nil (unknown) unless the server says them.
	d := engine.ModelDetails{Name: model}
	models, err := e.listModels(ctx, "reading the details of "+model)
	if err != nil {
		var se *engine.ServerError
		if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed || se.Status == http.StatusNotImplemented) {
			return d, nil // no /v1/models: nothing is known
		}
		return d, err
	}
	m, ok := findModel(models, model)
	if !ok {
		return d, &engine.ModelNotFoundError{Model: model, Fix: modelFix}
	}
	e.mu.Lock()
	e.owners[model] = m.OwnedBy
	e.mu.Unlock()
	x := m.extras
	if m.OwnedBy == ownerLMStudio && x.MaxContextLength == 0 {
		x = e.lmStudioExtras(ctx, m.ID, x)
	}
	d.Family, d.Quantization = x.Arch, x.Quantization
	if x.Meta != nil {
		d.ParameterSize = parameterSize(x.Meta.NParams)
	}
	d.Window, d.WindowFrom = serverWindow(x)
	d.ContextLength = x.MaxContextLength
	if x.Meta != nil && x.Meta.NCtxTrain > 0 {
		d.ContextLength = x.Meta.NCtxTrain
	}
	if d.ContextLength == 0 && x.ContextLength > 0 {
		d.ContextLength = x.ContextLength // a hosted API's window is the model's
	}
	d.Capabilities = listedCapabilities(x)
	switch m.OwnedBy {
	case ownerLlamaCpp:
		if p, err := e.props(ctx); err == nil {
			if p.DefaultGenerationSettings.NCtx > 0 {
				d.Window, d.WindowFrom = p.DefaultGenerationSettings.NCtx, "llama.cpp's /props n_ctx"
			}
			d.Capabilities = p.capabilities()
		}
	case ownerOllama:
		e.ollamaDetails(ctx, m.ID, &d)
	}
	return d, nil
}

// findModel finds model in the list: by its exact id, then ignoring case,
// then with Ollama's implicit ":latest". llama.cpp answers any name with
// the one model it serves.
func findModel(models []listedModel, model string) (listedModel, bool) {
	for _, m := range models {
		if m.ID == model {
			return m, true
		}
	}
	for _, m := range models {
		if strings.EqualFold(m.ID, model) || strings.EqualFold(m.ID, model+":latest") {
			return m, true
		}
	}
	if len(models) == 1 && models[0].OwnedBy == ownerLlamaCpp {
		return models[0], true
	}
	return listedModel{}, false
}

// llamaProps is the part of llama.cpp's GET /props the engine reads: the
// window it runs with, and (newer builds) what the loaded model and its
// chat template can do.
type llamaProps struct {
	DefaultGenerationSettings struct {
		NCtx int `json:"n_ctx"`
	} `json:"default_generation_settings"`
	BuildInfo  string `json:"build_info"`
	Modalities *struct {
		Vision bool `json:"vision"`
	} `json:"modalities"`
	ChatTemplateCaps *struct {
		SupportsTools bool `json:"supports_tools"`
	} `json:"chat_template_caps"`
}

// props asks llama.cpp for /props, beside /v1 at the server's root.
func (e *Engine) props(ctx context.Context) (llamaProps, error) {
	var p llamaProps
	err := e.getRoot(ctx, "props", &p)
	return p, err
}

// lmStudioExtras reads the model's entry from LM Studio's own
// /api/v0/models, which has the windows its /v1/models leaves out. When
// that fails the /v1 entry's extras stand.
func (e *Engine) lmStudioExtras(ctx context.Context, id string, fallback modelExtras) modelExtras {
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if e.getRoot(ctx, "api/v0/models", &list) != nil {
		return fallback
	}
	for _, raw := range list.Data {
		var entry struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &entry) != nil || entry.ID != id {
			continue
		}
		var x modelExtras
		if json.Unmarshal(raw, &x) == nil {
			return x
		}
	}
	return fallback
}

// getRoot GETs path relative to the server's root (the base URL without
// its /v1) and decodes the JSON answer into v. These are optional extras:
// a server without them answers 404 and the caller carries on.
func (e *Engine) getRoot(ctx context.Context, path string, v any) error {
	var body []byte
	if err := e.client.Get(ctx, "../"+path, nil, &body); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// Version checks the server answers, with one GET /v1/models, and names
// what it is: "llama.cpp b6123-…" (from /props), "vLLM 0.10.1" (from
// /version), "LM Studio", "OpenAI", or "OpenAI-compatible" when the server
// does not say. Nothing listening is a *engine.UnreachableError; a
// refused key is an *AuthError; a server that answers without a model list
// (a wrong base URL, usually) is a *engine.ServerError with its status.
func (e *Engine) Version(ctx context.Context) (string, error) {
	models, err := e.listModels(ctx, "asking the server what it is")
	if err != nil {
		return "", err
	}
	owner := ""
	if len(models) > 0 {
		owner = models[0].OwnedBy
	}
	switch owner {
	case ownerLlamaCpp:
		if p, err := e.props(ctx); err == nil && p.BuildInfo != "" {
			return "llama.cpp " + p.BuildInfo, nil
		}
		return "llama.cpp", nil
	case ownerVLLM:
		var v struct {
			Version string `json:"version"`
		}
		if e.getRoot(ctx, "version", &v) == nil && v.Version != "" {
			return "vLLM " + v.Version, nil
		}
		return "vLLM", nil
	case ownerLMStudio:
		return "LM Studio", nil
	case "openai", "system", "openai-internal":
		return "OpenAI", nil
	}
	return "OpenAI-compatible", nil
}

// markNoTools remembers that the server refused tools for model.
func (e *Engine) markNoTools(model string) {
	if model == "" {
		return
	}
	e.mu.Lock()
	e.noTools[model] = true
	e.mu.Unlock()
}
