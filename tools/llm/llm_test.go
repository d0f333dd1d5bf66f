package llm

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

type genEngine struct {
	engine.InferenceEngine
	got engine.GenerateRequest
	err error
}

func (g *genEngine) Generate(_ context.Context, req engine.GenerateRequest) (engine.GenerateResponse, error) {
	g.got = req
	if g.err != nil {
		return engine.GenerateResponse{}, g.err
	}
	return engine.GenerateResponse{Model: "qwen3:8b", Content: "A short summary.",
		Usage: events.Usage{PromptTokens: 1200, OutputTokens: 300, TokensPerSec: 42}}, nil
}

func TestLLMToolReportsUsageAndCost(t *testing.T) {
	eng := &genEngine{}
	price := func(model string, in, out int) float64 {
		if model != "qwen3:8b" {
			t.Errorf("priced model %q", model)
		}
		return float64(in)*1e-6 + float64(out)*2e-6
	}
	tool := New(eng, "qwen3:8b", engine.Options{NumCtx: 4096}, price)
	r := tool.Execute(context.Background(), tools.Args{"prompt": "Summarize: AI...", "system": "Be concise."})
	if !r.Success || r.Content != "A short summary." {
		t.Fatalf("got %+v", r)
	}
	if eng.got.System != "Be concise." || eng.got.Model != "qwen3:8b" || eng.got.Options.NumCtx != 4096 {
		t.Fatalf("request = %+v", eng.got)
	}
	if r.Usage["prompt_tokens"] != 1200 || r.Usage["completion_tokens"] != 300 || r.Usage["total_tokens"] != 1500 {
		t.Fatalf("usage = %v", r.Usage)
	}
	if r.CostUSD != 0.0018 {
		t.Fatalf("cost = %v", r.CostUSD)
	}
}

func TestLLMToolFailures(t *testing.T) {
	cases := []struct {
		tool *Tool
		args tools.Args
		want string
	}{
		{New(nil, "m", engine.Options{}, nil), tools.Args{"prompt": "x"}, "No model server is configured for the llm tool."},
		{New(&genEngine{}, "", engine.Options{}, nil), tools.Args{"prompt": "x"}, "No model is set for the llm tool; set one with --model or 'model' in the config."},
		{New(&genEngine{}, "m", engine.Options{}, nil), tools.Args{}, "No prompt provided."},
		{New(&genEngine{err: &engine.ModelNotFoundError{Model: "m"}}, "m", engine.Options{}, nil), tools.Args{"prompt": "x"},
			"Error: " + (&engine.ModelNotFoundError{Model: "m"}).Error()},
		{New(&genEngine{err: context.Canceled}, "m", engine.Options{}, nil), tools.Args{"prompt": "x"}, "The sub-query was stopped before the model answered."},
	}
	for _, c := range cases {
		if r := c.tool.Execute(context.Background(), c.args); r.Success || r.Content != c.want {
			t.Errorf("got %q, want %q", r.Content, c.want)
		}
	}
}

func TestLLMToolUsesTheRunsModel(t *testing.T) {
	eng := &genEngine{}
	tool := New(eng, "", engine.Options{}, nil)
	ctx := events.WithRun(context.Background(), events.RunInfo{ID: "r", Model: "llama3.2"})
	if r := tool.Execute(ctx, tools.Args{"prompt": "x"}); !r.Success || eng.got.Model != "llama3.2" {
		t.Fatalf("result %+v, model asked %q", r, eng.got.Model)
	}
}
