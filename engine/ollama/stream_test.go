package ollama_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
)

// ndjsonServer answers every chat with lines.
func ndjsonServer(t *testing.T, lines ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The stream's reader starts with a small buffer: a chunk longer than it
// (a rendered prompt, a tool call's arguments, a paste echoed back)
// arrives whole.
func TestChatChunkLongerThanTheReadBufferArrivesWhole(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 40_000) // 640 kB
	host := ndjsonServer(t,
		`{"model":"m","message":{"role":"assistant","content":"`+long+`"},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":" end"},"done":true,"done_reason":"stop"}`)
	resp, err := newEngine(t, host).Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != long+" end" {
		t.Errorf("content is %d bytes, want %d", len(resp.Message.Content), len(long)+4)
	}
}

// A line beyond what any answer holds is refused with an error that says
// so, not taken for a reply that ended early.
func TestChatLineBeyondTheLimitIsRefused(t *testing.T) {
	huge := strings.Repeat("x", 9<<20)
	host := ndjsonServer(t, `{"model":"m","message":{"role":"assistant","content":"`+huge+`"},"done":false}`)
	_, err := newEngine(t, host).Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("hi")}, nil)
	if err == nil || !strings.Contains(err.Error(), "more than 8 MB") {
		t.Fatalf("err = %v, want the line's size named", err)
	}
}
