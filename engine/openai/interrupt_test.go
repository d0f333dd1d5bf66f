package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// How a reply ends when it does not end well: cancelled, timed out, cut,
// or closed without its end marker.

func TestChatCancelKeepsPartialReply(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On().Reply(et.Text("I was saying"), et.Hang())
	e := newEngine(t, srv.BaseURL)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got strings.Builder
	resp, err := e.Chat(ctx, engine.ChatRequest{Model: "qwen3", Messages: ask("?")}, func(c engine.Chunk) {
		got.WriteString(c.Content)
		if got.String() == "I was saying" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if errors.As(err, new(*engine.StreamError)) {
		t.Errorf("a cancel reported as a lost connection: %v", err)
	}
	if resp.Message.Content != "I was saying" {
		t.Errorf("partial content = %q", resp.Message.Content)
	}
}

func TestChatDeadlineWhileWaiting(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Hang())
	e := newEngine(t, srv.BaseURL)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Chat(ctx, engine.ChatRequest{Model: "m", Messages: ask("?")}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestChatConnectionCutMidStreamKeepsPartialReply(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Think("let me see"), et.Text("The answer is forty-two."),
		et.ToolCall("calculator", `{"expression":"6*7"}`)).DisconnectAfter(5)
	e := newEngine(t, srv.BaseURL)

	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "m", Messages: ask("?")})
	var se *engine.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *engine.StreamError", err, err)
	}
	if resp.Message.Thinking != "let me see" || resp.Message.Content != "The answer" {
		t.Errorf("partial reply = %+v", resp.Message)
	}
	if se.Received != len("The answer") || len(chunks) != 5 || se.Err == nil {
		t.Errorf("received %d bytes in %d chunks, cause %v", se.Received, len(chunks), se.Err)
	}
	if !strings.Contains(err.Error(), "partial reply is kept") {
		t.Errorf("message = %q", err)
	}
}

func TestChatCutAfterToolCallDeltasDropsTheCall(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen3")
	srv.On().Reply(et.ToolCall("calculator", `{"expression":"6*7"}`).InPieces(6)).DisconnectAfter(3)
	e := newEngine(t, srv.BaseURL)
	resp, chunks, err := collect(t, context.Background(), e, engine.ChatRequest{Model: "qwen3", Messages: ask("?"), Tools: []engine.ToolDef{{Name: "calculator"}}})
	if !errors.As(err, new(*engine.StreamError)) {
		t.Fatalf("err = %v", err)
	}
	if len(resp.Message.ToolCalls) != 0 || len(chunks) != 0 {
		t.Errorf("a half-received call was delivered: %+v, %+v", resp.Message.ToolCalls, chunks)
	}
}

func TestChatDisconnectBeforeAnyChunk(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Disconnect())
	e := newEngine(t, srv.BaseURL)
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("?")}, nil)
	var se *engine.StreamError
	if !errors.As(err, &se) || se.Received != 0 || resp.Message.Content != "" {
		t.Fatalf("err = %v (%T), content %q", err, err, resp.Message.Content)
	}
}

// sseServer answers every chat request with these events, as written,
// and then ends the response properly.
func sseServer(t *testing.T, contentType string, events ...string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		for _, ev := range events {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/v1"
}

func TestChatStreamEnds(t *testing.T) {
	text := `{"choices":[{"index":0,"delta":{"content":"partial"}}]}`
	call := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"clock","arguments":"{}"}}]}}]}`
	// Cleanly closed without a finish_reason or [DONE]: cut short.
	e := newEngine(t, sseServer(t, "text/event-stream", text))
	resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("?")}, nil)
	var se *engine.StreamError
	if !errors.As(err, &se) || se.Received != len("partial") || !strings.Contains(err.Error(), "ended before the reply finished") || resp.Message.Content != "partial" {
		t.Errorf("no end marker: %v, %+v", err, resp.Message)
	}
	// [DONE] without a finish_reason (and without a content type): complete,
	// and the tool call is delivered at the end.
	e = newEngine(t, sseServer(t, "", text, call, "[DONE]"))
	var delivered []engine.ToolCall
	resp, err = e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("?")}, func(c engine.Chunk) { delivered = append(delivered, c.ToolCalls...) })
	if err != nil || resp.DoneReason != "" || len(delivered) != 1 || delivered[0].Name != "clock" || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("[DONE] only: %v, %+v, delivered %+v", err, resp, delivered)
	}
	// A finish_reason without [DONE]: complete too.
	e = newEngine(t, sseServer(t, "text/event-stream", text, `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`))
	resp, err = e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("?")}, nil)
	if err != nil || resp.DoneReason != "length" {
		t.Errorf("finish_reason only: %v, %q", err, resp.DoneReason)
	}
	// An event that is not JSON.
	e = newEngine(t, sseServer(t, "text/event-stream", text, `<html>`))
	_, err = e.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("?")}, nil)
	if err == nil || !strings.Contains(err.Error(), "not the OpenAI API") {
		t.Errorf("broken event: %v", err)
	}
}

func TestGenerateDisconnect(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On().Reply(et.Text("half"), et.Disconnect())
	e := newEngine(t, srv.BaseURL)
	_, err := e.Generate(context.Background(), engine.GenerateRequest{Model: "m", Prompt: "x"})
	if !errors.As(err, new(*engine.StreamError)) {
		t.Errorf("err = %v (%T)", err, err)
	}
}
