package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// A user message with images goes as content parts: the text, then each
// image as an image_url part holding a data URL.
func TestChatSendsImagesAsContentParts(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("qwen2.5-vl")
	srv.On().Reply(et.Text("Two cats."))
	e := newEngine(t, srv.BaseURL)
	a, b := []byte("first image bytes"), []byte("second")
	msgs := []engine.Message{
		{Role: engine.RoleUser, Content: "Compare these.", Images: []engine.Image{
			{Name: "a.png", MIMEType: "image/png", Data: a}, {Name: "b.jpg", MIMEType: "image/jpeg", Data: b}}},
		{Role: engine.RoleAssistant, Content: "Two cats."},
		{Role: engine.RoleUser, Content: "Plain text stays a string."},
	}
	if _, err := e.Chat(context.Background(), engine.ChatRequest{Model: "qwen2.5-vl", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(lastBodyOf(t, srv), &body); err != nil {
		t.Fatal(err)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(body.Messages[0].Content, &parts); err != nil {
		t.Fatalf("the first message's content is not a list of parts: %s", body.Messages[0].Content)
	}
	want := []string{"Compare these.", "data:image/png;base64," + base64.StdEncoding.EncodeToString(a), "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(b)}
	if len(parts) != 3 || parts[0].Type != "text" || parts[0].Text != want[0] ||
		parts[1].Type != "image_url" || parts[1].ImageURL.URL != want[1] || parts[2].ImageURL.URL != want[2] {
		t.Fatalf("parts = %+v", parts)
	}
	if string(body.Messages[2].Content) != `"Plain text stays a string."` {
		t.Errorf("a message without images = %s", body.Messages[2].Content)
	}
}
