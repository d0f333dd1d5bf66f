package agent

import (
	"context"

	"github.com/jarvis-workbench/jarvis/engine"
)

// What a tool costs depends on the model's chat template: one template
// prints each tool's whole JSON schema, another only its name. When the
// server can render a prompt without answering it, the cost of a tool is
// what it adds to the rendered prompt, which is what the model reads. The
// view measures that once per model and tool (a render with no tools,
// then one per tool) and counts those figures from then on instead of its
// estimate of the JSON.

// MeasureToolCosts renders the model's prompt without tools and with each
// of defs alone, and from then on counts each tool as what it adds to the
// rendering. It returns those costs (uncalibrated estimates), by name.
// engine.ErrUnsupported means the server cannot render; the view then
// keeps estimating the JSON.
func (v *ModelView) MeasureToolCosts(ctx context.Context, defs []engine.ToolDef) (map[string]int, error) {
	r, ok := v.eng.(engine.Renderer)
	if !ok {
		return nil, engine.ErrUnsupported
	}
	model := v.Model()
	base := engine.ChatRequest{Model: model, Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}
	if w, err := v.Window(ctx); err == nil {
		base.Options.NumCtx = w.Tokens // the window in force: no reload
	}
	without, err := r.RenderPrompt(ctx, base)
	if err != nil {
		return nil, err
	}
	bare := EstimateTokens(without)
	costs := make(map[string]int, len(defs))
	for _, d := range defs {
		req := base
		req.Tools = []engine.ToolDef{d}
		with, err := r.RenderPrompt(ctx, req)
		if err != nil {
			return nil, err
		}
		costs[d.Name] = max(EstimateTokens(with)-bare, 0)
	}
	v.mu.Lock()
	if v.model == model {
		for _, d := range defs {
			v.rendered[renderedKey{model: model, tool: toolKey(d)}] = costs[d.Name]
		}
	}
	v.mu.Unlock()
	return costs, nil
}

// ToolCostsMeasured reports whether every tool of defs has a measured cost
// for the view's model.
func (v *ModelView) ToolCostsMeasured(defs []engine.ToolDef) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, d := range defs {
		if _, ok := v.rendered[renderedKey{model: v.model, tool: toolKey(d)}]; !ok {
			return false
		}
	}
	return true
}

// renderedKey identifies a tool's measured cost: the model (its template)
// and the tool as offered.
type renderedKey struct{ model, tool string }

func toolKey(d engine.ToolDef) string { return d.Name + "\x00" + d.Description }
