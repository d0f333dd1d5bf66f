package tui_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// Keys as a terminal sends them.
const (
	keyAltUp = "\x1b[1;3A"
	keyCtrlC = "\x03"
	keyEnter = "\r"
)

// visionFake serves a model that reads images and one that does not.
func visionFake(t *testing.T) *ot.Server {
	t.Helper()
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.AddModel(ot.ModelSpec{Name: "gemma3:4b", Family: "gemma3", Capabilities: []string{engine.CapCompletion, engine.CapVision}})
	srv.On(et.UserSays("what is in the picture")).Reply(et.Text("A blue rectangle."))
	srv.On(et.UserSays("story")).Times(1).Reply(et.Text("Once upon a time, a fox."))
	srv.On(et.UserSays("story")).Times(1).Reply(et.Text("A dragon slept in a cave."))
	srv.On(et.UserSays("poem")).Reply(et.Text("Roses are red."))
	srv.Default(et.Text("Noted."))
	return srv
}

// send types a line and enter, and waits until the workbench is idle
// again showing want.
func (term *terminal) send(line string, want ...string) string {
	term.t.Helper()
	term.typeText(line)
	term.typeText(keyEnter)
	return term.waitFor(10*time.Second, append(want, "ready")...)
}

// waitGone waits until the screen no longer shows gone (a frame may be
// half drawn when it is first read), and returns it.
func (term *terminal) waitGone(timeout time.Duration, gone string) string {
	term.t.Helper()
	return term.waitUntil(timeout, fmt.Sprintf("%q gone", gone), func(s string) bool { return !strings.Contains(s, gone) })
}

func TestImageInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := visionFake(t)
	dir := t.TempDir()
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 320, 200)))
	pic := filepath.Join(dir, "blue.png")
	if err := os.WriteFile(pic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	term := startTerminal(t, 120, 36, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.send("/image "+pic, "▣ blue.png · PNG", "320×200", "ctrl+x takes off")

	// The model without vision: refused before anything is sent.
	term.send("What is in the picture?", "cannot read images", "gemma3:4b")
	if n := len(srv.Chats()); n != 0 {
		t.Fatalf("%d chat requests reached the server", n)
	}
	term.waitFor(2*time.Second, "▣ blue.png · PNG") // still attached

	term.send("/model gemma3:4b", "Model set to gemma3:4b")
	term.typeText("\x1b[A\x1b[A") // ↑↑: the question again
	term.waitFor(5*time.Second, "› What is in the picture?")
	term.send("", "A blue rectangle.")
	chats := srv.Chats()
	if len(chats) == 0 {
		t.Fatal("no chat request")
	}
	sent := chats[len(chats)-1].Messages
	if u := sent[len(sent)-1]; len(u.Images) != 1 || !bytes.Equal(u.Images[0], b.Bytes()) {
		t.Fatalf("the image did not reach the server: %d images", len(u.Images))
	}
	// The body on the wire carries it base64-encoded, as Ollama takes it.
	var body string
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			body = string(r.Body)
		}
	}
	if !strings.Contains(body, `"images":["iVBORw0KGgo`) {
		t.Fatalf("no base64 PNG in the chat request's body")
	}
	s := term.waitGone(5*time.Second, "ctrl+x takes off")
	if !strings.Contains(s, "▍ ▣ blue.png") {
		t.Fatalf("after sending, the image is not shown with the question:\n%s", s)
	}
}

func TestRetryAndEditInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := visionFake(t)
	home := t.TempDir()
	editor := filepath.Join(home, "edit.sh")
	script := "#!/bin/sh\nprintf 'Write a poem about it\\n' > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	term := startTerminalIn(t, home, []string{"EDITOR=" + editor}, 110, 34, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.send("Tell me a story", "Once upon a time, a fox.")

	term.send("/retry", "A dragon slept in a cave.", "attempt 2 of 2")
	term.waitGone(5*time.Second, "fox") // the old attempt leaves the screen
	term.typeText("[")
	term.waitFor(5*time.Second, "Once upon a time, a fox.", "attempt 1 of 2")
	term.waitGone(5*time.Second, "dragon")
	term.typeText("]")
	term.waitFor(5*time.Second, "A dragon slept in a cave.", "attempt 2 of 2")
	if n := len(srv.Chats()); n != 2 {
		t.Fatalf("%d requests; flipping must not send any", n)
	}

	// /edit opens $EDITOR (a script that writes the new question) and asks
	// again from the edited question.
	term.send("/edit", "Roses are red.", "version 2 of 2", "▍ Write a poem about it")
	term.waitGone(5*time.Second, "dragon")
	term.waitGone(5*time.Second, "▍ Tell me a story")
	chats := srv.Chats()
	if sent := chats[len(chats)-1].Messages; len(sent) != 2 || sent[1].Content != "Write a poem about it" {
		t.Fatalf("the edit sent %d messages: %+v", len(sent), sent)
	}
	// The earlier version is one selection and [ away.
	term.typeText(keyAltUp + keyAltUp)
	term.waitFor(5*time.Second, "▶ question · e edits")
	term.typeText("[")
	term.waitFor(5*time.Second, "▍ Tell me a story", "A dragon slept in a cave.", "version 1 of 2")
}

func TestForkAndSessionTreeAfterRestartInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := visionFake(t)
	home := t.TempDir()
	args := []string{"--host", srv.URL, "--model", "qwen3:8b", "--tools", "none"}
	term := startTerminalIn(t, home, nil, 110, 34, args...)
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.send("Tell me a story", "Once upon a time, a fox.")
	term.send("Now a poem", "Roses are red.")
	// Select the story's answer and fork from it.
	term.typeText(keyAltUp + keyAltUp + keyAltUp)
	term.waitFor(5*time.Second, "▶ answer · r asks again")
	term.typeText("f")
	term.waitFor(5*time.Second, "Forked: a new session with 2 messages")
	term.waitGone(5*time.Second, "Roses are red.") // what came after the selected answer
	term.send("Thanks, noted", "Noted.")
	term.quit()

	// After a restart the fork is listed under its parent.
	term = startTerminalIn(t, home, nil, 110, 34, args...)
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.typeText("/sessions")
	term.typeText(keyEnter)
	s := term.waitFor(10*time.Second, "Sessions", "└ ⑂ Tell me a story")
	lines := strings.Split(s, "\n")
	parent, fork := -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "└ ⑂ Tell me a story"):
			fork = i
		case strings.Contains(l, "Tell me a story") && strings.Contains(l, "4 msgs"):
			parent = i
		}
	}
	if parent < 0 || fork != parent+1 {
		t.Fatalf("the fork is not right under its parent (rows %d, %d):\n%s", parent, fork, s)
	}
	// Opening the fork shows its own conversation.
	term.typeText("\x1b[B" + keyEnter)
	term.waitFor(10*time.Second, "Opened session", "Thanks, noted", "It is a fork of session")
	term.waitGone(5*time.Second, "Roses are red.") // the parent's later turn
}
