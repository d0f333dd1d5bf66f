package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// fakeEngine answers chat requests with a function of the request, streaming
// the reply's content as chunks of tokens. It records every request.
type fakeEngine struct {
	mu       sync.Mutex
	requests []engine.ChatRequest
	caps     []string
	capsErr  error
	reply    func(req engine.ChatRequest, n int) (engine.ChatResponse, []string, error)
}

func (f *fakeEngine) Chat(ctx context.Context, req engine.ChatRequest, onChunk func(engine.Chunk)) (engine.ChatResponse, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	n := len(f.requests)
	f.mu.Unlock()
	resp, tokens, err := f.reply(req, n)
	var got engine.ChatResponse
	got.Model, got.Usage, got.DoneReason = resp.Model, resp.Usage, resp.DoneReason
	got.Message.Role = engine.RoleAssistant
	if resp.Message.Thinking != "" {
		onChunk(engine.Chunk{Thinking: resp.Message.Thinking})
		got.Message.Thinking = resp.Message.Thinking
	}
	for _, t := range tokens {
		if ctx.Err() != nil {
			return got, ctx.Err()
		}
		onChunk(engine.Chunk{Content: t})
		got.Message.Content += t
	}
	if err != nil {
		return got, err
	}
	if len(tokens) == 0 {
		got.Message.Content = resp.Message.Content
	}
	if len(resp.Message.ToolCalls) > 0 {
		onChunk(engine.Chunk{ToolCalls: resp.Message.ToolCalls})
		got.Message.ToolCalls = resp.Message.ToolCalls
	}
	return got, nil
}

func (f *fakeEngine) Generate(context.Context, engine.GenerateRequest) (engine.GenerateResponse, error) {
	return engine.GenerateResponse{}, errors.New("not used")
}
func (f *fakeEngine) ListModels(context.Context) ([]engine.ModelInfo, error) { return nil, nil }
func (f *fakeEngine) Capabilities(context.Context, string) ([]string, error) {
	if f.caps == nil && f.capsErr == nil {
		return []string{engine.CapCompletion, engine.CapTools}, nil
	}
	return f.caps, f.capsErr
}
func (f *fakeEngine) Version(context.Context) (string, error) { return "0.0.0", nil }
func (f *fakeEngine) Host() string                            { return "fake" }

func (f *fakeEngine) request(i int) engine.ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func (f *fakeEngine) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func text(s string) engine.ChatResponse {
	return engine.ChatResponse{Model: "m", Message: engine.Message{Role: engine.RoleAssistant, Content: s},
		Usage: events.Usage{PromptTokens: 10, OutputTokens: 5, EvalSeconds: 0.5}}
}

func calls(cs ...engine.ToolCall) engine.ChatResponse {
	return engine.ChatResponse{Model: "m", Message: engine.Message{Role: engine.RoleAssistant, ToolCalls: cs},
		Usage: events.Usage{PromptTokens: 10, OutputTokens: 3, EvalSeconds: 0.1}}
}

func call(id, name, args string) engine.ToolCall {
	return engine.ToolCall{ID: id, Name: name, Arguments: args}
}

// lastMessage is the last message of a request.
func lastMessage(req engine.ChatRequest) engine.Message { return req.Messages[len(req.Messages)-1] }
