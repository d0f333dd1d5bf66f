// Package llm holds the llm tool: it delegates a sub-query (a summary, a
// sub-question, structured output) to the inference engine and reports the
// tokens it used and what they cost.
package llm

import (
	"context"
	"errors"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Price converts a model's token counts into dollars.
type Price func(model string, promptTokens, outputTokens int) float64

// Tool is the llm tool.
type Tool struct {
	engine  engine.InferenceEngine
	model   string
	options engine.Options
	price   Price
}

// New returns the llm tool for engine. A sub-query goes to the model of the
// run that calls the tool (events.RunFrom), so it follows a model chosen
// on the fly or switched in the TUI; model is used only outside a run
// (`jarvis tools run llm`). A nil engine gives a tool that fails with a
// message saying no model server is configured.
func New(eng engine.InferenceEngine, model string, opts engine.Options, price Price) *Tool {
	return &Tool{engine: eng, model: model, options: opts, price: price}
}

var spec = tools.Spec{
	Name:        "llm",
	Description: "Send a sub-query to the language model and return its answer: summarise a text, answer a focused sub-question, or produce structured output.",
	Parameters: tools.Params(
		tools.StringParam("prompt", "The prompt to send to the model", true),
		tools.StringParam("system", "Optional system message for context", false),
	),
	Category:        "inference",
	LatencyEstimate: 2,
	TimeoutSeconds:  300,
}

// Spec returns the llm tool's spec.
func (t *Tool) Spec() tools.Spec { return spec }

// Execute runs the sub-query.
func (t *Tool) Execute(ctx context.Context, args tools.Args) tools.Result {
	prompt := args.String("prompt")
	if prompt == "" {
		return tools.Fail("No prompt provided.")
	}
	if t.engine == nil {
		return tools.Fail("No model server is configured for the llm tool.")
	}
	run := events.RunFrom(ctx)
	model := run.Model
	if model == "" {
		model = t.model
	}
	opts := t.options
	if run.NumCtx > 0 && model == run.Model {
		// The run's window: another num_ctx would make the server reload
		// the model it is running.
		opts.NumCtx = run.NumCtx
	}
	if model == "" {
		return tools.Fail("No model is set for the llm tool; set one with --model or 'model' in the config.")
	}
	resp, err := t.engine.Generate(ctx, engine.GenerateRequest{Model: model, Prompt: prompt, System: args.String("system"), Options: opts})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return tools.Fail("The sub-query was stopped before the model answered.")
		}
		return tools.Fail("Error: %v", err)
	}
	r := tools.OK(resp.Content)
	r.Usage = map[string]any{
		"prompt_tokens":     resp.Usage.PromptTokens,
		"completion_tokens": resp.Usage.OutputTokens,
		"total_tokens":      resp.Usage.PromptTokens + resp.Usage.OutputTokens,
		"tokens_per_second": resp.Usage.TokensPerSec,
	}
	if resp.Model != "" {
		model = resp.Model
	}
	if t.price != nil {
		r.CostUSD = t.price(model, resp.Usage.PromptTokens, resp.Usage.OutputTokens)
	}
	return r.WithMeta("model", model)
}
