package ollama

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
)

// Show returns what /api/show says about model. Answers are cached for the
// engine's lifetime ("qwen3" and "qwen3:latest" share an entry); failures
// are not, so a model pulled meanwhile is seen.
func (e *Engine) Show(ctx context.Context, model string) (engine.ModelDetails, error) {
	key := normalizeModel(model)
	e.mu.Lock()
	d, ok := e.shown[key]
	e.mu.Unlock()
	if ok {
		d.Capabilities = slices.Clone(d.Capabilities)
		return d, nil
	}
	sr, err := e.client.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return engine.ModelDetails{}, e.classify(ctx, err, model, "reading the details of "+model)
	}
	d = engine.ModelDetails{
		Name:          model,
		Capabilities:  make([]string, len(sr.Capabilities)),
		ContextLength: contextLength(sr.ModelInfo),
		Family:        sr.Details.Family,
		ParameterSize: sr.Details.ParameterSize,
		Quantization:  sr.Details.QuantizationLevel,
		Template:      sr.Template,
		Parameters:    sr.Parameters,
	}
	for i, c := range sr.Capabilities {
		d.Capabilities[i] = string(c)
	}
	e.mu.Lock()
	e.shown[key] = d
	e.levels[key] = takesLevels(sr)
	e.mu.Unlock()
	d.Capabilities = slices.Clone(d.Capabilities)
	return d, nil
}

// levelParser is the output parser of the models Ollama takes a thinking
// level from (gpt-oss's harmony format); it refuses a level from any other
// model with 400 "think value ... is not supported for this model".
const levelParser = "harmony"

// takesLevels reports whether the server takes a thinking level from the
// model sr shows: its output parser is harmony, as its Modelfile says
// (PARSER harmony), or as the server infers it for a gpt-oss model whose
// template has harmony's tags.
func takesLevels(sr *api.ShowResponse) bool {
	if sr.Parser == levelParser {
		return true
	}
	for _, line := range strings.Split(sr.Modelfile, "\n") {
		if name, arg, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.EqualFold(name, "PARSER") && strings.Trim(arg, `" `) == levelParser {
			return true
		}
	}
	family := strings.ToLower(sr.Details.Family)
	return (family == "gptoss" || family == "gpt-oss") && strings.Contains(sr.Template, "<|start|>") && strings.Contains(sr.Template, "<|end|>")
}

// ThinkFor says what is sent for think to model: a level goes as it is to
// a model that takes levels, and as true (thinking on) to any other, which
// the server would refuse it from; the note then says so. What cannot be
// read leaves think as it is, and the server says what is wrong.
func (e *Engine) ThinkFor(ctx context.Context, model, think string) (string, string) {
	level := strings.ToLower(strings.TrimSpace(think))
	if level != "low" && level != "medium" && level != "high" {
		return think, ""
	}
	if _, err := e.Show(ctx, model); err != nil {
		return think, ""
	}
	e.mu.Lock()
	takes := e.levels[normalizeModel(model)]
	e.mu.Unlock()
	if takes {
		return think, ""
	}
	return "true", fmt.Sprintf("%s takes thinking on or off, not a level: think %q was sent as true (thinking on). Levels are for models that have them, such as gpt-oss", model, level)
}

// contextLength finds the model's own maximum window in model_info, where
// the key is prefixed by the architecture ("qwen3.context_length").
func contextLength(info map[string]any) int {
	if arch, ok := info["general.architecture"].(string); ok {
		if n, ok := number(info[arch+".context_length"]); ok {
			return n
		}
	}
	for k, v := range info {
		if strings.HasSuffix(k, ".context_length") {
			if n, ok := number(v); ok {
				return n
			}
		}
	}
	return 0
}

func number(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), x > 0
	case int:
		return x, x > 0
	case int64:
		return int(x), x > 0
	}
	return 0, false
}

// Loaded lists the models the server holds in memory (/api/ps), with the
// window each was loaded with.
func (e *Engine) Loaded(ctx context.Context) ([]engine.LoadedModel, error) {
	pr, err := e.client.ListRunning(ctx)
	if err != nil {
		return nil, e.classify(ctx, err, "", "listing the loaded models")
	}
	out := make([]engine.LoadedModel, len(pr.Models))
	for i, m := range pr.Models {
		out[i] = engine.LoadedModel{
			Name: m.Name, SizeBytes: m.Size, VRAMBytes: m.SizeVRAM,
			ContextLength: m.ContextLength, ExpiresAt: m.ExpiresAt,
		}
	}
	return out, nil
}

// RenderPrompt asks the server for the prompt it would give the model for
// req (_debug_render_only): the chat template applied to the messages and
// tools, with nothing generated. The field is a debugging aid a server may
// not have; one that ignores it would answer for real, so the request asks
// for a single token at most and a reply without the rendering counts as
// engine.ErrUnsupported (remembered: the engine does not ask again).
func (e *Engine) RenderPrompt(ctx context.Context, req engine.ChatRequest) (string, error) {
	e.mu.Lock()
	unsupported := e.noRender
	e.mu.Unlock()
	if unsupported {
		return "", engine.ErrUnsupported
	}
	msgs, err := toAPIMessages(req.Messages)
	if err != nil {
		return "", err
	}
	// Think is part of what a template renders (a thinking model's prompt
	// differs with it on and off), so it goes as Chat sends it.
	think, err := thinkValue(req.Options.Think)
	if err != nil {
		return "", err
	}
	opts := req.Options
	opts.NumPredict = 1
	stream := false
	areq := &api.ChatRequest{
		Model: req.Model, Messages: msgs, Tools: toAPITools(req.Tools),
		Options: apiOptions(opts), KeepAlive: keepAlive(req.Options), Think: think,
		Stream: &stream, DebugRenderOnly: true, Truncate: &no, Shift: &no,
	}
	var rendered *string
	answered := false
	what := "rendering the prompt of " + req.Model
	tctx, tracker := withTracker(ctx)
	err = e.chat(tctx, areq, func(r api.ChatResponse) error {
		answered = true
		if r.DebugInfo != nil {
			s := r.DebugInfo.RenderedTemplate
			rendered = &s
		}
		return nil
	})
	if err != nil {
		return "", e.classify(ctx, err, req.Model, what)
	}
	if rendered != nil {
		return *rendered, nil
	}
	// Only an answer without the rendering shows the server lacks the
	// feature; no answer at all (cancelled, connection lost) shows nothing.
	if !answered {
		return "", noAnswer(ctx, tracker, what)
	}
	e.mu.Lock()
	e.noRender = true
	e.mu.Unlock()
	return "", engine.ErrUnsupported
}

// noAnswer is the error for a call whose answer never came: the client
// reports a read cut short as success, so the cause is the context's, or
// the connection's.
func noAnswer(ctx context.Context, tr *readTracker, what string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s stopped: %w", what, ctxErr)
	}
	cause := tr.err
	if cause == nil {
		cause = errors.New("the server closed the connection before it finished answering")
	}
	return fmt.Errorf("%s: %w", what, cause)
}

// Pull downloads model, calling progress for every status line the server
// sends (per layer: digest, total and completed bytes). Cancelling ctx
// stops the download; the server keeps what it has for the next try.
func (e *Engine) Pull(ctx context.Context, model string, progress func(engine.PullProgress)) error {
	if strings.TrimSpace(model) == "" {
		return errors.New("no model name given")
	}
	what := "pulling " + model
	succeeded := false
	tctx, tracker := withTracker(ctx)
	err := e.pull(tctx, &api.PullRequest{Model: model}, func(p api.ProgressResponse) error {
		succeeded = p.Status == "success"
		if progress != nil {
			progress(engine.PullProgress{Status: p.Status, Digest: p.Digest, Total: p.Total, Completed: p.Completed})
		}
		return nil
	})
	if err != nil {
		var status api.StatusError
		if errors.As(err, &status) && ctx.Err() == nil {
			// Shown as the server says it: "pull model manifest: file
			// does not exist" is what a misspelt name gets.
			return &engine.ServerError{Status: status.StatusCode, Message: status.ErrorMessage}
		}
		return e.classify(ctx, err, model, what)
	}
	// The client ends a cancelled or cut stream without an error; only
	// the server's "success" says the model is there.
	if !succeeded {
		return noAnswer(ctx, tracker, what)
	}
	e.mu.Lock()
	delete(e.shown, normalizeModel(model))
	e.mu.Unlock()
	return nil
}

// Unload asks the server to free model now (keep_alive 0).
func (e *Engine) Unload(ctx context.Context, model string) error {
	stream := false
	what := "unloading " + model
	done := false
	tctx, tracker := withTracker(ctx)
	err := e.generate(tctx, &api.GenerateRequest{
		Model: model, Stream: &stream, KeepAlive: &api.Duration{Duration: 0},
	}, func(r api.GenerateResponse) error {
		done = r.Done
		return nil
	})
	if err != nil {
		return e.classify(ctx, err, model, what)
	}
	if !done {
		return noAnswer(ctx, tracker, what)
	}
	return nil
}
