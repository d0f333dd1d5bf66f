package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

func visionServer(t *testing.T) (*ot.Server, *ollama.Engine) {
	t.Helper()
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "gemma3:4b", Family: "gemma3", Capabilities: []string{engine.CapCompletion, engine.CapVision}, ContextLength: 8192})
	srv.AddModel(ot.ModelSpec{Name: "llava:7b", Capabilities: []string{engine.CapCompletion, engine.CapVision}})
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("what is this")).Reply(et.Text("A red square."))
	srv.On(et.UserSays("again")).Reply(et.Text("Still red."))
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, eng
}

var red = engine.Image{Name: "red.png", MIMEType: "image/png", Data: []byte("\x89PNG fake"), Width: 640, Height: 480}

func TestImagesReachAVisionModel(t *testing.T) {
	srv, eng := visionServer(t)
	a, err := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "gemma3:4b"})
	if err != nil {
		t.Fatal(err)
	}
	conv := &agent.Conversation{}
	res, err := a.Answer(context.Background(), conv, agent.Input{Text: "what is this?", Images: []engine.Image{red}})
	if err != nil || res.Content != "A red square." {
		t.Fatalf("run: %v, %+v", err, res)
	}
	chats := srv.Chats()
	last := chats[len(chats)-1].Messages
	if u := last[len(last)-1]; len(u.Images) != 1 || string(u.Images[0]) != string(red.Data) {
		t.Fatalf("the image did not reach the server: %+v", u)
	}
	if len(conv.Messages[0].Images) != 1 {
		t.Fatal("the conversation lost the image")
	}
}

func TestImagesAreRefusedBeforeSendingToAModelWithoutVision(t *testing.T) {
	srv, eng := visionServer(t)
	a, _ := agent.New(agent.Orchestrator, agent.Config{Engine: eng, Model: "qwen3:8b"})
	conv := &agent.Conversation{}
	_, err := a.Answer(context.Background(), conv, agent.Input{Text: "what is this?", Images: []engine.Image{red}})
	var ve *engine.VisionUnsupportedError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want a VisionUnsupportedError", err)
	}
	if strings.Join(ve.Capable, ",") != "gemma3:4b,llava:7b" || !strings.Contains(err.Error(), "gemma3:4b, llava:7b") {
		t.Errorf("capable models = %v (%v)", ve.Capable, err)
	}
	if len(conv.Messages) != 0 {
		t.Errorf("the refused question stayed in the conversation: %+v", conv.Messages)
	}
	if n := len(srv.Chats()); n != 0 {
		t.Errorf("%d chat requests sent", n)
	}
	// A conversation that already holds images is refused the same way:
	// the model would be sent them with the next question.
	conv.Messages = []engine.Message{{Role: engine.RoleUser, Content: "what is this", Images: []engine.Image{red}}, {Role: engine.RoleAssistant, Content: "A red square."}}
	if _, err := a.Run(context.Background(), conv, "and now?"); !errors.As(err, &ve) {
		t.Fatalf("history with images: %v", err)
	}
	if len(conv.Messages) != 2 {
		t.Error("the question was appended although it was refused")
	}
}

func TestAnswerAgainAnswersTheLastQuestion(t *testing.T) {
	srv, eng := visionServer(t)
	a, _ := agent.New(agent.Simple, agent.Config{Engine: eng, Model: "gemma3:4b"})
	conv := &agent.Conversation{Messages: []engine.Message{{Role: engine.RoleUser, Content: "say it again"}}}
	res, err := a.Answer(context.Background(), conv, agent.Input{Again: true, Text: "ignored"})
	if err != nil || res.Content != "Still red." {
		t.Fatalf("again: %v %+v", err, res)
	}
	if len(conv.Messages) != 2 || conv.Messages[0].Content != "say it again" {
		t.Fatalf("conversation = %+v", conv.Messages)
	}
	chats := srv.Chats()
	if msgs := chats[len(chats)-1].Messages; msgs[len(msgs)-1].Content != "say it again" || len(msgs) != 2 {
		t.Fatalf("sent = %+v", msgs)
	}
	// Nothing to answer again: said, nothing sent.
	before := len(srv.Chats())
	if _, err := a.Answer(context.Background(), conv, agent.Input{Again: true}); err == nil || !strings.Contains(err.Error(), "no question to answer again") {
		t.Fatalf("again after an answer: %v", err)
	}
	if len(srv.Chats()) != before {
		t.Error("a request was sent")
	}
}

func TestImageCostIsInTheBudget(t *testing.T) {
	_, eng := visionServer(t)
	view := agent.NewModelView(eng, "gemma3:4b", agent.ViewOptions{})
	plain := agent.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "what is this?"}}}
	with := agent.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "what is this?", Images: []engine.Image{red, red}}}}
	_, b0, err := view.Prepare(context.Background(), plain)
	if err != nil {
		t.Fatal(err)
	}
	_, b1, err := view.Prepare(context.Background(), with)
	if err != nil {
		t.Fatal(err)
	}
	// gemma3 spends 260 positions per image; uncalibrated, the view pads
	// its estimates by 1.2.
	if d := b1.Prompt - b0.Prompt; d < 2*260 || d > 2*260*13/10 {
		t.Errorf("two images added %d tokens, want about %d", d, 2*260)
	}
	if b1.ImageTokens < 2*260 || b1.Parts[len(b1.Parts)-1].Images != 2 {
		t.Errorf("budget = %+v", b1)
	}
}

func TestImageTokensByFamily(t *testing.T) {
	for _, c := range []struct {
		model, family string
		w, h, want    int
	}{
		{"gemma3:4b", "gemma3", 4000, 3000, 260},
		{"llama3.2-vision:11b", "mllama", 1000, 1000, 1},
		{"qwen2.5vl:7b", "qwen25vl", 280, 280, 102},       // 10×10 blocks of 28 pixels, and the two markers
		{"qwen2.5vl:7b", "qwen25vl", 8000, 8000, 2603},    // cut to about 2 Mi pixels: 51×51
		{"mistral-small3.1", "mistral3", 1540, 770, 1512}, // 55×27 merged patches and 27 row ends
		{"registry.example/me/llava-phi3:latest", "llama", 10, 10, 576},
		{"llava:13b", "llama", 10, 10, 2880},
		{"moondream", "", 10, 10, 729},
		{"mystery-vlm", "", 10, 10, agent.DefaultImageTokens},
	} {
		if got := agent.ImageTokens(c.model, c.family, c.w, c.h); got != c.want {
			t.Errorf("%s (%s) %d×%d: %d tokens, want %d", c.model, c.family, c.w, c.h, got, c.want)
		}
	}
}
