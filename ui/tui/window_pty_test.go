package tui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// The window under real use, in a real terminal: a paste too big for it
// comes back to the prompt and jams nothing; a compaction says so while
// it runs and opens to its summary; the Context tab does not load a model
// that was unloaded.

// tinyServer serves the 2,048-token model "tinyt", which renders its
// prompts.
func tinyServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tinyt", Capabilities: []string{engine.CapCompletion, engine.CapTools},
		ContextLength: 2048, Template: ot.TemplateNames})
	return srv
}

// startTiny runs jarvis on tinyt without tools, the server answering
// every question with answer once script has set its rules, and waits
// for the prompt.
func startTiny(t *testing.T, cols, rows int, answer string, script func(*ot.Server)) (*ot.Server, *terminal) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := tinyServer(t)
	if script != nil {
		script(srv)
	}
	srv.Default(et.Text(answer))
	term := startTerminal(t, cols, rows, "--host", srv.URL, "--model", "tinyt", "--tools", "none")
	term.waitFor(10*time.Second, "tinyt", "Ask anything")
	return srv, term
}

func TestARefusedPasteComesBackToThePromptInPseudoTerminal(t *testing.T) {
	srv, term := startTiny(t, 120, 40, "Answered.", nil)
	paste := strings.TrimSpace(strings.Repeat("zebra crossing lines ", 1300)) + " THE-END"
	term.typeText("\x1b[200~" + paste + "\x1b[201~")
	term.waitFor(10*time.Second, "THE-END")
	term.typeText("\r")
	s := term.waitFor(10*time.Second, "Your message is about", "2,048-token window", "Nothing was sent or saved", "THE-END")
	if !strings.Contains(s, "Shorten the message") {
		t.Fatalf("the refusal says no fix:\n%s", s)
	}
	// ctrl+c clears the prompt: then the paste is nowhere on screen (a
	// screen read mid-frame can still show the last one, so the test
	// waits for it to go).
	term.typeText("\x03")
	term.waitGone(5*time.Second, "zebra crossing lines zebra")
	for i, q := range []string{"first after", "second after", "third after"} {
		term.typeText(q + "\r")
		term.waitUntil(10*time.Second, fmt.Sprintf("the answer to %q", q), func(s string) bool {
			return len(srv.Chats()) == i+1 && strings.Count(s, "Answered.") == i+1 && strings.Contains(s, " ready ")
		})
	}
	n := 0
	for _, r := range srv.Chats() {
		n++
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "zebra") {
				t.Fatal("the refused paste reached the server")
			}
		}
	}
	if n != 3 {
		t.Fatalf("%d chats for three questions", n)
	}
}

// A compaction says "compacting…" in the status bar and the transcript
// while the model writes the summary, then "Compacted", and ctrl+e opens
// the summary under it.
func TestCompactionSaysSoAndOpensInPseudoTerminal(t *testing.T) {
	srv, term := startTiny(t, 140, 50, strings.Repeat("answer words here ", 20), func(srv *ot.Server) {
		srv.On(et.SystemContains("You summarise")).Reply(et.Delay(1500*time.Millisecond), et.Text("SUMMARY-TEXT: the user asked about words."))
	})
	question := strings.Repeat("question words there ", 40)
	summaries := func() int {
		n := 0
		for _, r := range srv.Chats() {
			if strings.Contains(r.Messages[0].Content, "You summarise") {
				n++
			}
		}
		return n
	}
	sawRunning := false
	for i := 0; summaries() == 0; i++ {
		if i == 12 {
			t.Fatal("twelve long questions in 2,048 tokens and no compaction")
		}
		chats := len(srv.Chats())
		term.typeText(question + "\r")
		// Until the answer is in: the summary, when one is asked for,
		// takes 1.5 s, and the screen says so meanwhile.
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := term.screen()
			if strings.Contains(s, "⇢ Compacting…") && strings.Contains(s, "compacting… ·") {
				sawRunning = true
			}
			// The prompt's placeholder shows once the question was sent
			// (frames from the typing show its text).
			if len(srv.Chats()) > chats && strings.Contains(s, "Ask anything") && strings.Contains(s, " ready ") && !strings.Contains(s, "Compacting…") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("question %d was not answered:\n%s", i, s)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !sawRunning {
		t.Fatal("the transcript and the status bar never said compacting… while the summary was written")
	}
	s := term.waitFor(5*time.Second, "Compacted:", "ctrl+e shows the summary")
	if strings.Contains(s, "SUMMARY-TEXT") {
		t.Fatalf("the summary shows before it is opened:\n%s", s)
	}
	term.typeText("\x05") // ctrl+e
	term.waitFor(5*time.Second, "│ SUMMARY-TEXT: the user asked about words.")
}

// After /unload, the header says cold at once and opening the Context
// tab renders nothing, so the model stays unloaded; r renders, saying it
// loads the model.
func TestContextTabDoesNotLoadAnUnloadedModelInPseudoTerminal(t *testing.T) {
	srv, term := startTiny(t, 150, 48, "Hello there.", nil)
	term.typeText("hi\r")
	term.waitFor(10*time.Second, "Hello there.", "ready", "loaded")
	term.typeText("/unload\r")
	term.waitFor(10*time.Second, "Unloaded tinyt", "cold")
	renders := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if r.RenderOnly {
				n++
			}
		}
		return n
	}
	before := renders()
	term.typeText("\x1b[17~") // F6
	s := term.waitFor(10*time.Second, "Window 2,048 tokens", "tinyt is not loaded", "press r")
	time.Sleep(300 * time.Millisecond)
	if n := renders(); n != before {
		t.Fatalf("opening the tab asked the server to render %d times:\n%s", n-before, s)
	}
	if !strings.Contains(term.screen(), "cold") {
		t.Fatalf("the header no longer says cold:\n%s", term.screen())
	}
	term.typeText("\t") // focus the pane
	term.typeText("r")
	term.waitFor(10*time.Second, "user: (your next message)")
	if renders() == before {
		t.Fatal("r did not render")
	}
}
