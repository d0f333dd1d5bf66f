package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// toolCost is what one tool costs in a prompt, in each form a model can
// read it.
type toolCost struct {
	Name string `json:"name"`
	// Schema is the tool as a definition (orchestrator): its share of
	// the prompt as the model's chat template renders it, when the server
	// can render; its JSON function definition otherwise.
	Schema int `json:"schema_tokens"`
	// Text is its block of BuildToolDescriptions (react's system prompt).
	Text int `json:"text_tokens"`
}

// toolCosts is `tools describe --tokens`' answer.
type toolCosts struct {
	Model string     `json:"model"`
	Tools []toolCost `json:"tools"`
	// Rendered says the schema counts come from the server's rendering of
	// the prompt for Model, not from the JSON alone.
	Rendered bool   `json:"rendered"`
	Note     string `json:"note"`
}

// countToolTokens estimates each tool's cost for model. When the server
// renders prompts, a tool's schema cost is the difference it makes to the
// rendered prompt, which is what the model really reads.
func (a *cmdline) countToolTokens(ctx context.Context, list []tools.Tool) (toolCosts, error) {
	env, err := a.environment()
	if err != nil {
		return toolCosts{}, err
	}
	out := toolCosts{Model: env.cfg.Model}
	defs := make([]engine.ToolDef, len(list))
	for i, t := range list {
		s := t.Spec()
		defs[i] = engine.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
		out.Tools = append(out.Tools, toolCost{Name: s.Name, Text: agent.EstimateTokens(tools.DescribeSpecs([]tools.Spec{s}, true, false))})
	}
	view := agent.NewModelView(env.engine, env.model, env.cfg.ViewOptions())
	for i, n := range view.ToolTokens(defs) {
		for j := range out.Tools {
			if out.Tools[j].Name == i {
				out.Tools[j].Schema = n
			}
		}
	}
	out.Note = "jarvis's estimate of the JSON definitions (no model given, or the server cannot render prompts)"
	if out.Model == "" {
		return out, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	costs, err := view.MeasureToolCosts(rctx, defs)
	switch {
	case errors.Is(err, engine.ErrUnsupported):
		return out, nil
	case errors.Is(err, engine.ErrUnreachable):
		out.Note = "jarvis's estimate of the JSON definitions (the server could not be reached to render " + out.Model + "'s prompt)"
		return out, nil
	case err != nil:
		return out, failErr("rendering the prompt for %s: %v", out.Model, err)
	}
	for i, d := range defs {
		out.Tools[i].Schema = costs[d.Name]
	}
	out.Rendered = true
	out.Note = "jarvis's estimate of what each tool adds to the prompt as " + out.Model + "'s chat template renders it"
	return out, nil
}

func printToolCosts(w io.Writer, c toolCosts) {
	tw := table.New(w)
	fmt.Fprintln(tw, "TOOL\tAS SCHEMA (orchestrator)\tAS TEXT (react)")
	schema, text := 0, 0
	for _, t := range c.Tools {
		fmt.Fprintf(tw, "%s\t~%s\t~%s\n", t.Name, format.Tokens(t.Schema), format.Tokens(t.Text))
		schema += t.Schema
		text += t.Text
	}
	fmt.Fprintf(tw, "%s\t~%s\t~%s\n", "total ("+format.Count(len(c.Tools), "tool")+")", format.Tokens(schema), format.Tokens(text))
	tw.Flush()
	fmt.Fprintf(w, "\nTokens: %s. Real tokenizers differ by model; jarvis calibrates on the server's counts once a conversation runs (the Context tab, F6).\n", strings.TrimSpace(c.Note))
}
