package tui

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// convoServer answers "15% of 340" with a calculator call and an answer,
// then any question about a story differently each time it is asked.
func convoServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.AddModel(ot.ModelSpec{Name: "gemma3:4b", Family: "gemma3", Capabilities: []string{engine.CapCompletion, engine.CapVision}})
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
	srv.On(et.UserSays("story")).Times(1).Reply(et.Text("Once upon a time, a fox."))
	srv.On(et.UserSays("story")).Times(1).Reply(et.Text("A dragon slept in a cave."))
	srv.On(et.UserSays("story")).Reply(et.Text("The third story."))
	srv.On(et.UserSays("poem")).Reply(et.Text("Roses are red."))
	srv.On(et.UserSays("what is in the picture")).Reply(et.Text("A red square."))
	srv.Default(et.Text("ok"))
	return srv
}

// flushSessions waits until l's session writes have landed, so another
// handle on the database sees them.
func flushSessions(t *testing.T, l *live) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := l.m.opts.Sessions.(storeAdapter).s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// lastChat is the conversation the last chat request sent (without the
// system prompt).
func lastChat(t *testing.T, srv *ot.Server) []api.Message {
	t.Helper()
	chats := srv.Chats()
	if len(chats) == 0 {
		t.Fatal("no chat request was sent")
	}
	var out []api.Message
	for _, m := range chats[len(chats)-1].Messages {
		if m.Role != "system" {
			out = append(out, m)
		}
	}
	return out
}

func roleContents(msgs []api.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ": " + m.Content
		if len(m.ToolCalls) > 0 {
			out[i] += " [calls " + m.ToolCalls[0].Function.Name + "]"
		}
	}
	return out
}

// checkPairs fails unless every assistant message that calls tools is
// followed at once by one result per call, with the call's id.
func checkPairs(t *testing.T, msgs []api.Message) {
	t.Helper()
	for i, m := range msgs {
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(msgs) || msgs[k].Role != "tool" || msgs[k].ToolCallID != c.ID {
				t.Fatalf("call %s of message %d is not answered by the message after it: %v", c.ID, i, roleContents(msgs))
			}
		}
		if m.Role == "tool" && (i == 0 || msgs[i-1].Role != "assistant" && msgs[i-1].Role != "tool") {
			t.Fatalf("tool result %d follows no call: %v", i, roleContents(msgs))
		}
	}
}

func TestRetryKeepsTheEarlierAttemptAndSendsOnlyTheCurrentLine(t *testing.T) {
	srv := convoServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	l.typeLine("Tell me a story")
	if s := l.screen(); !strings.Contains(s, "Once upon a time, a fox.") {
		t.Fatalf("first answer missing:\n%s", s)
	}
	before := len(srv.Chats())
	l.typeLine("/retry")
	if n := len(srv.Chats()); n != before+1 {
		t.Fatalf("/retry sent %d requests", n-before)
	}
	// The model is sent the line up to the question: the first exchange,
	// its call and result whole, and the question, not the old answer.
	sent := lastChat(t, srv)
	want := []string{"user: What is 15% of 340?", "assistant:  [calls calculator]", "tool: 51.0", "assistant: 15% of 340 is 51.", "user: Tell me a story"}
	if got := roleContents(sent); !reflect.DeepEqual(got, want) {
		t.Fatalf("retry sent:\n%q\nwant\n%q", got, want)
	}
	checkPairs(t, sent)
	s := l.screen()
	if !strings.Contains(s, "A dragon slept in a cave.") || strings.Contains(s, "Once upon a time") || !strings.Contains(s, "attempt 2 of 2") {
		t.Fatalf("after /retry:\n%s", s)
	}

	// [ flips back to the first attempt, ] forward again; nothing is sent.
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("[")})
	s = l.screen()
	if !strings.Contains(s, "Once upon a time, a fox.") || strings.Contains(s, "dragon") || !strings.Contains(s, "attempt 1 of 2") {
		t.Fatalf("after [:\n%s", s)
	}
	if got := l.m.conv.Messages[len(l.m.conv.Messages)-1].Content; got != "Once upon a time, a fox." {
		t.Fatalf("the model's conversation ends with %q after [", got)
	}
	if len(srv.Chats()) != before+1 {
		t.Fatal("flipping sent a request")
	}
	// A question asked now goes on from the attempt shown.
	l.typeLine("And a poem")
	if got := roleContents(lastChat(t, srv)); got[len(got)-2] != "assistant: Once upon a time, a fox." || len(got) != 7 {
		t.Fatalf("question after flipping sent %q", got)
	}

	// Reopened, the session shows the line last shown, and keeps both
	// attempts.
	flushSessions(t, l)
	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	s = l2.screen()
	if !strings.Contains(s, "Roses are red.") || !strings.Contains(s, "Once upon a time") || !strings.Contains(s, "attempt 1 of 2") {
		t.Fatalf("reopened:\n%s", s)
	}
	if len(l2.m.conv.Messages) != 8 {
		t.Fatalf("reopened conversation has %d messages, want 8", len(l2.m.conv.Messages))
	}
	// Select the story's answer (alt+up from the bottom: the poem's answer,
	// the poem, then the story's answer) and flip to the dragon.
	for range 3 {
		l2.update(tea.KeyMsg{Type: tea.KeyUp, Alt: true})
	}
	if a, ok := l2.m.convo.selected.(*assistantItem); !ok || !strings.Contains(a.plainText(), "fox") {
		t.Fatalf("selected %T, want the story's answer", l2.m.convo.selected)
	}
	l2.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("]")})
	s = l2.screen()
	if !strings.Contains(s, "A dragon slept") || strings.Contains(s, "Roses are red") || !strings.Contains(s, "▶ answer") {
		t.Fatalf("flipping a selected middle answer:\n%s", s)
	}
}

func TestEditInThePromptBoxAsksAgainFromTheEditedQuestion(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	srv := convoServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	l.typeLine("Tell me a story")
	// Select the first question and edit it in the prompt box.
	for range 4 {
		l.update(tea.KeyMsg{Type: tea.KeyUp, Alt: true})
	}
	if q, ok := l.m.convo.selected.(*userItem); !ok || q.text != "What is 15% of 340?" {
		t.Fatalf("selected %+v", l.m.convo.selected)
	}
	if s := l.screen(); !strings.Contains(s, "▶ question · e edits") {
		t.Fatalf("the selection is not shown:\n%s", s)
	}
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	if l.m.input.value() != "What is 15% of 340?" || !strings.Contains(l.screen(), "editing your question") {
		t.Fatalf("prompt = %q\n%s", l.m.input.value(), l.screen())
	}
	l.m.input.set("Write a poem")
	l.update(tea.KeyMsg{Type: tea.KeyEnter})
	if got := roleContents(lastChat(t, srv)); !reflect.DeepEqual(got, []string{"user: Write a poem"}) {
		t.Fatalf("the edit sent %q", got)
	}
	s := l.screen()
	if !strings.Contains(s, "Roses are red.") || strings.Contains(s, "15% of 340") || strings.Contains(s, "story") || !strings.Contains(s, "version 2 of 2") {
		t.Fatalf("after the edit:\n%s", s)
	}
	// Everything stays in the session: the first line and the edit.
	flushSessions(t, l)
	db, err := store.Open(dbPath, "check")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := sessions.New(db)
	sess, msgs, err := ss.Load(l.m.sessionID)
	if err != nil {
		t.Fatal(err)
	}
	tree := sessions.TreeOf(sess, msgs)
	if len(msgs) != 8 || len(sess.Branches) != 1 || sess.Branches[0].Reason != sessions.ReasonEdit || sess.Branches[0].After != 0 {
		t.Fatalf("stored: %d messages, branches %+v", len(msgs), sess.Branches)
	}
	if first := tree.Path(""); len(first) != 6 || first[5].Content != "Once upon a time, a fox." {
		t.Fatalf("the first line was not kept: %+v", first)
	}
}

func TestForkStartsASessionThatRemembersItsParent(t *testing.T) {
	srv := convoServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	l.typeLine("Tell me a story")
	parent := l.m.sessionID
	// Fork up to the first answer.
	for range 3 {
		l.update(tea.KeyMsg{Type: tea.KeyUp, Alt: true})
	}
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("f")})
	if l.m.sessionID == parent || l.m.sessionID == "" {
		t.Fatalf("fork kept session %q", l.m.sessionID)
	}
	s := l.screen()
	if !strings.Contains(s, "Forked") || !strings.Contains(s, "15% of 340 is 51.") || strings.Contains(s, "story") {
		t.Fatalf("after the fork:\n%s", s)
	}
	l.typeLine("Write a poem")
	if got := roleContents(lastChat(t, srv)); len(got) != 5 || got[4] != "user: Write a poem" {
		t.Fatalf("the fork sent %q", got)
	}
	l.typeLine("/sessions")
	s = l.screen()
	if !strings.Contains(s, "└ ⑂ What is 15% of 340?") {
		t.Fatalf("the fork is not under its parent:\n%s", s)
	}
	rows := l.m.sessions.list
	if len(rows) != 2 || rows[0].ID != parent || rows[1].Parent != parent || rows[1].ParentSeq != 4 {
		t.Fatalf("session rows = %+v", rows)
	}
}

func pngFile(t *testing.T, dir, name string, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImagesAttachSendAndAreRefusedForAModelWithoutVision(t *testing.T) {
	srv := convoServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	dir := t.TempDir()
	pic := pngFile(t, dir, "red.png", 64, 48)
	l.typeLine("/image " + pic)
	if s := l.screen(); !strings.Contains(s, "▣ red.png · PNG") || !strings.Contains(s, "64×48") || !strings.Contains(s, "ctrl+x takes off") {
		t.Fatalf("no chip:\n%s", s)
	}
	// qwen3 cannot read images: nothing is sent, the question and the
	// image wait in the prompt, the note names the model that can.
	before := len(srv.Chats())
	l.typeLine("What is in the picture?")
	if len(srv.Chats()) != before {
		t.Fatal("a request was sent to a model without vision")
	}
	s := l.screen()
	if !strings.Contains(s, "cannot read images") || !strings.Contains(s, "gemma3:4b") || !strings.Contains(s, "▣ red.png") {
		t.Fatalf("refusal:\n%s", s)
	}
	if len(l.m.conv.Messages) != 0 || len(l.m.convo.tree.Messages) != 0 || strings.Contains(s, "▍ What is in the picture?") {
		t.Fatalf("after the refusal: %d messages\n%s", len(l.m.conv.Messages), s)
	}
	l.typeLine("/model gemma3:4b")
	// ↑ recalls the question (after the /model line).
	l.update(tea.KeyMsg{Type: tea.KeyUp})
	l.update(tea.KeyMsg{Type: tea.KeyUp})
	if l.m.input.value() != "What is in the picture?" {
		t.Fatalf("history gave %q", l.m.input.value())
	}
	l.update(tea.KeyMsg{Type: tea.KeyEnter})
	sent := lastChat(t, srv)
	data, _ := os.ReadFile(pic)
	if len(sent) != 1 || len(sent[0].Images) != 1 || !bytes.Equal(sent[0].Images[0], data) {
		t.Fatalf("the image did not reach the server: %+v", sent)
	}
	if s := l.screen(); !strings.Contains(s, "A red square.") || !strings.Contains(s, "▣ red.png · PNG") || strings.Contains(s, "ctrl+x takes off") {
		t.Fatalf("after sending:\n%s", s)
	}
	// The session keeps it; an export writes it beside the markdown.
	out := filepath.Join(t.TempDir(), "talk.md")
	l.typeLine("/export " + out)
	md, _ := os.ReadFile(out)
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "talk-images", "*.png"))
	if len(files) != 1 || !strings.Contains(string(md), "![red.png](<talk-images/") {
		t.Fatalf("export: %v\n%s", files, md)
	}
	if got, _ := os.ReadFile(files[0]); !bytes.Equal(got, data) {
		t.Fatal("the exported image differs")
	}
	// Reopened, the conversation still carries the image for the model.
	flushSessions(t, l)
	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	if msgs := l2.m.conv.Messages; len(msgs) != 2 || len(msgs[0].Images) != 1 || !bytes.Equal(msgs[0].Images[0].Data, data) {
		t.Fatalf("reopened conversation: %+v", msgs)
	}
}

func TestImageRefusalsAndChipKeys(t *testing.T) {
	srv := convoServer(t)
	l := newLive(t, srv, "", false)
	dir := t.TempDir()
	txt := filepath.Join(dir, "notes.png")
	os.WriteFile(txt, []byte("plain text\n"), 0o644)
	l.typeLine("/image " + txt)
	if s := l.screen(); !strings.Contains(s, "its content is text") {
		t.Fatalf("text file:\n%s", s)
	}
	l.m.opts.Config.Images.MaxBytes = 100
	big := pngFile(t, dir, "big.png", 200, 200)
	l.typeLine("/image " + big)
	if s := l.screen(); !strings.Contains(s, "over the 100 B") {
		t.Fatalf("big file:\n%s", s)
	}
	l.m.opts.Config.Images.MaxBytes = 0
	a, b := pngFile(t, dir, "a.png", 2, 2), pngFile(t, dir, "b.png", 3, 3)
	l.typeLine("/image " + a)
	l.typeLine("/image " + b)
	l.update(tea.KeyMsg{Type: tea.KeyCtrlX})
	if len(l.m.convo.images) != 1 || l.m.convo.images[0].Name != "a.png" {
		t.Fatalf("ctrl+x left %+v", l.m.convo.images)
	}
	l.typeLine("/image clear")
	if len(l.m.convo.images) != 0 || l.m.chipRows() != 0 {
		t.Fatal("/image clear left images")
	}
	// A pasted path to an image is offered; tab attaches it and takes the
	// path out of the prompt.
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("look: ")})
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("'" + b + "'"), Paste: true})
	if s := l.screen(); !strings.Contains(s, "the pasted path is an image") {
		t.Fatalf("no offer:\n%s", s)
	}
	l.update(tea.KeyMsg{Type: tea.KeyTab})
	if len(l.m.convo.images) != 1 || l.m.convo.images[0].Name != "b.png" || l.m.input.value() != "look:" {
		t.Fatalf("after tab: %+v, prompt %q", l.m.convo.images, l.m.input.value())
	}
	// What ctrl+v reads from the clipboard is a paste as well.
	l.update(inputResult{clipboardMsg{text: a}})
	if s := l.screen(); !strings.Contains(s, "the pasted path is a") { // the chip line is full
		t.Fatalf("no offer for a path pasted with ctrl+v:\n%s", s)
	}
	l.update(tea.KeyMsg{Type: tea.KeyTab})
	if len(l.m.convo.images) != 2 || l.m.convo.images[1].Name != "a.png" || l.m.input.value() != "look:" {
		t.Fatalf("after tab: %+v, prompt %q", l.m.convo.images, l.m.input.value())
	}
	// Tab completes a path for /image.
	l.m.input.set("")
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/image " + filepath.Join(dir, "b."))})
	l.update(tea.KeyMsg{Type: tea.KeyTab})
	if got := l.m.input.value(); got != "/image "+b {
		t.Fatalf("completed to %q", got)
	}
}

func TestSessionTreeOrder(t *testing.T) {
	list := []SessionSummary{
		{ID: "c", Parent: "a"}, {ID: "b"}, {ID: "d", Parent: "c"}, {ID: "a"}, {ID: "e", Parent: "gone"},
	}
	got, depth := sessionTree(list)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, "") != "bacde" || !reflect.DeepEqual(depth, []int{0, 0, 1, 2, 0}) {
		t.Fatalf("order %v depth %v", ids, depth)
	}
}

// Asking again for an answer that called tools takes its calls and
// results out of what the model sees, whole; the new attempt's own call
// and result go with it in order.
func TestRetryOfAnAnswerWithToolCallsSendsWholePairs(t *testing.T) {
	srv := convoServer(t)
	l := newLive(t, srv, filepath.Join(t.TempDir(), "j.db"), false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	l.typeLine("Tell me a story")
	// Select the first answer (alt+↑: story answer, story, first answer).
	for range 3 {
		l.update(tea.KeyMsg{Type: tea.KeyUp, Alt: true})
	}
	chats := len(srv.Chats())
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	all := srv.Chats()[chats:]
	if len(all) != 2 {
		t.Fatalf("the retry made %d requests, want 2 (the call, then its result)", len(all))
	}
	var first []string
	for _, m := range all[0].Messages {
		if m.Role != "system" {
			first = append(first, m.Role+": "+m.Content)
		}
	}
	if !reflect.DeepEqual(first, []string{"user: What is 15% of 340?"}) {
		t.Fatalf("the retry sent %q", first)
	}
	second := lastChat(t, srv)
	checkPairs(t, second)
	if got := roleContents(second); len(got) != 3 || got[1] != "assistant:  [calls calculator]" || got[2] != "tool: 51.0" {
		t.Fatalf("the new attempt's turn sent %q", got)
	}
	// The later question left the model's context with the old attempt.
	if s := l.screen(); strings.Contains(s, "Tell me a story") || !strings.Contains(s, "attempt 2 of 2") {
		t.Fatalf("after retrying the first answer:\n%s", s)
	}
}
