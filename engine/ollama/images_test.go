package ollama_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// Images go in the user message's "images", base64-encoded, as Ollama's
// /api/chat takes them.
func TestChatSendsImagesAsBase64(t *testing.T) {
	srv := ollamatest.New(t)
	srv.Model("gemma3", engine.CapCompletion, engine.CapVision)
	srv.On().Reply(et.Text("A cat."))
	e := newEngine(t, srv.URL)
	pic := []byte("\x89PNG\r\n\x1a\nnot really a png, but bytes")
	msgs := []engine.Message{{Role: engine.RoleUser, Content: "What is this?",
		Images: []engine.Image{{Name: "cat.png", MIMEType: "image/png", Data: pic, Width: 2, Height: 2}}}}
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "gemma3", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	got := reqs[len(reqs)-1]
	if m := got.Chat.Messages[0]; len(m.Images) != 1 || !bytes.Equal(m.Images[0], pic) {
		t.Fatalf("images received = %v", m.Images)
	}
	if want := `"images":["` + base64.StdEncoding.EncodeToString(pic) + `"]`; !strings.Contains(string(got.Body), want) {
		t.Errorf("the body does not carry the image as base64 %s:\n%s", want, got.Body)
	}
}
