package cli

import (
	"bytes"
	"encoding/json"
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
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

func sessionServer(t *testing.T) *ot.Server {
	t.Helper()
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.AddModel(ot.ModelSpec{Name: "gemma3:4b", Family: "gemma3", Capabilities: []string{engine.CapCompletion, engine.CapVision}})
	srv.On(et.UserSays("trip to Lisbon")).Reply(et.Text("Lisbon it is."))
	srv.On(et.UserSays("weather")).Reply(et.Text("Mild in May."))
	srv.On(et.UserSays("packing")).Reply(et.Text("Pack light."))
	srv.On(et.UserSays("picture")).Reply(et.Text("A square."))
	srv.On(et.UserSays("summed up")).Reply(et.Text("Yes."))
	return srv
}

// lastSent is the last chat request's conversation, as role: content.
func lastSent(t *testing.T, srv *ot.Server) []string {
	t.Helper()
	chats := srv.Chats()
	if len(chats) == 0 {
		t.Fatal("nothing was sent")
	}
	var out []string
	for _, m := range chats[len(chats)-1].Messages {
		if m.Role != "system" {
			out = append(out, m.Role+": "+m.Content)
		}
	}
	return out
}

func askJSONOut(t *testing.T, out string) askResultJSON {
	t.Helper()
	var res askResultJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return res
}

func TestAskSavesAndGoesOnASession(t *testing.T) {
	srv := sessionServer(t)
	db := filepath.Join(t.TempDir(), "j.db")
	base := []string{"--host", srv.URL, "--db", db, "ask", "--tools", "none"}

	// Plain ask saves nothing.
	if _, errOut, code := runCLI(t, "", append(base, "--model", "qwen3:8b", "plan a trip to Lisbon")...); code != ExitOK {
		t.Fatalf("plain ask: %d %s", code, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		s := openSessions(t, db)
		if list, _ := s.List(0); len(list) != 0 {
			t.Fatalf("plain ask saved %d sessions", len(list))
		}
	}

	out, errOut, code := runCLI(t, "", append(base, "--model", "qwen3:8b", "--agent", "simple", "--save", "--json", "Let's plan a trip to Lisbon")...)
	if code != ExitOK {
		t.Fatalf("--save: %d %s", code, errOut)
	}
	id := askJSONOut(t, out).Session
	if id == "" || !strings.Contains(errOut, "saved as session "+id) {
		t.Fatalf("no session id: %s / %s", out, errOut)
	}

	// --session with a prefix: the model sees the conversation so far;
	// the session's model and agent are used without flags.
	out, errOut, code = runCLI(t, "", append(base, "--session", id[:12], "--json", "What about the weather in May?")...)
	if code != ExitOK {
		t.Fatalf("--session: %d %s", code, errOut)
	}
	if got := askJSONOut(t, out); got.Session != id || got.Model != "qwen3:8b" || got.Agent != "simple" || got.Content != "Mild in May." {
		t.Fatalf("result = %+v", got)
	}
	want := []string{"user: Let's plan a trip to Lisbon", "assistant: Lisbon it is.", "user: What about the weather in May?"}
	if got := lastSent(t, srv); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sent %q", got)
	}

	// --continue takes the most recent one; a flag overrides its agent.
	out, errOut, code = runCLI(t, "", append(base, "--continue", "--agent", "orchestrator", "And a packing list")...)
	if code != ExitOK || out != "Pack light.\n" {
		t.Fatalf("--continue: %d %q %s", code, out, errOut)
	}
	if got := lastSent(t, srv); len(got) != 5 {
		t.Fatalf("--continue sent %q", got)
	}
	s := openSessions(t, db)
	sess, msgs, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 6 || sess.Agent != "orchestrator" || sess.Model != "qwen3:8b" {
		t.Fatalf("stored: %d messages, %+v", len(msgs), sess)
	}

	// Wrong use is said and exits 2.
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"--session", "zzzz", "hi"}, "no session has the id or id prefix"},
		{[]string{"--save", "--continue", "hi"}, "give only one of them"},
	} {
		_, errOut, code := runCLI(t, "", append(base, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.say) {
			t.Errorf("%v: exit %d, %s", c.args, code, errOut)
		}
	}
}

func openSessions(t *testing.T, path string) *sessions.Store {
	t.Helper()
	db, err := store.Open(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return sessions.New(db)
}

// A session whose older turns were compacted goes on from the summary
// and the kept messages, as the model saw it, on its current branch.
func TestAskContinuesFromTheCompactedCurrentLine(t *testing.T) {
	srv := sessionServer(t)
	db := filepath.Join(t.TempDir(), "j.db")
	s := openSessions(t, db)
	sess, err := s.Create(sessions.Meta{Model: "qwen3:8b", Agent: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	tree := &sessions.Tree{}
	add := func(m sessions.Message) {
		if err := s.Append(sess.ID, tree.Append(m)); err != nil {
			t.Fatal(err)
		}
	}
	add(sessions.Message{Role: sessions.RoleUser, Content: "first question"})
	add(sessions.Message{Role: sessions.RoleAssistant, Content: "first answer"})
	add(sessions.Message{Role: sessions.RoleUser, Content: "second question"})
	add(sessions.Message{Role: sessions.RoleAssistant, Content: "second answer"})
	add(sessions.Message{Role: sessions.RoleSummary, Content: "They asked two things.", Kept: 2, Replaced: 2})
	b := tree.Branch(3, sessions.ReasonRetry, t0())
	if err := s.NewBranch(sess.ID, b); err != nil {
		t.Fatal(err)
	}
	add(sessions.Message{Role: sessions.RoleAssistant, Content: "second answer, again"})
	s.Flush(t.Context())

	_, errOut, code := runCLI(t, "", "--host", srv.URL, "--db", db, "ask", "--session", sess.ID, "all summed up?")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The retry branch leaves before the summary: the model sees the
	// whole line, not the compaction made on the other one.
	want := "user: first question|assistant: first answer|user: second question|assistant: second answer, again|user: all summed up?"
	if got := strings.Join(lastSent(t, srv), "|"); got != want {
		t.Fatalf("sent %s", got)
	}
	// Switched to the first line, the summary stands for the first turn.
	if err := s.SetBranch(sess.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "", "--host", srv.URL, "--db", db, "ask", "--session", sess.ID, "all summed up?"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := lastSent(t, srv)
	if len(got) != 4 || !strings.Contains(got[0], "They asked two things.") || got[1] != "user: second question" {
		t.Fatalf("sent %q", got)
	}
}

func writePNG(t *testing.T, w, h int) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b.Bytes()
}

func TestAskImages(t *testing.T) {
	srv := sessionServer(t)
	pic, data := writePNG(t, 32, 16)
	out, errOut, code := runCLI(t, "", "--host", srv.URL, "ask", "--model", "gemma3:4b", "--tools", "none", "--image", pic, "What is in the picture?")
	if code != ExitOK || out != "A square.\n" {
		t.Fatalf("exit %d %q %s", code, out, errOut)
	}
	chats := srv.Chats()
	last := chats[len(chats)-1].Messages
	if u := last[len(last)-1]; len(u.Images) != 1 || !bytes.Equal(u.Images[0], data) {
		t.Fatalf("the image did not reach the server: %+v", u)
	}

	// A model without vision: refused before sending, exit 1, and the
	// models that can are named.
	before := len(srv.Chats())
	_, errOut, code = runCLI(t, "", "--host", srv.URL, "ask", "--model", "qwen3:8b", "--image", pic, "What is in the picture?")
	if code != ExitFailed || !strings.Contains(errOut, "cannot read images") || !strings.Contains(errOut, "gemma3:4b") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(srv.Chats()) != before {
		t.Fatal("a request was sent to the model without vision")
	}

	// A file that is not an image is wrong use.
	txt := filepath.Join(t.TempDir(), "notes.png")
	os.WriteFile(txt, []byte("hello\n"), 0o644)
	_, errOut, code = runCLI(t, "", "--host", srv.URL, "ask", "--model", "gemma3:4b", "--image", txt, "hi")
	if code != ExitUsage || !strings.Contains(errOut, "its content is text") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func t0() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }

// A session open in another jarvis (a workbench) is not asked on: ask
// says who holds it and exits 1, sending nothing and writing nothing;
// once it is let go, the same ask goes on it, and holds it while it runs.
func TestAskRespectsASessionOpenElsewhere(t *testing.T) {
	srv := sessionServer(t)
	db := filepath.Join(t.TempDir(), "j.db")
	base := []string{"--host", srv.URL, "--db", db, "ask", "--tools", "none", "--model", "qwen3:8b"}
	out, errOut, code := runCLI(t, "", append(base, "--save", "--json", "Let's plan a trip to Lisbon")...)
	if code != ExitOK {
		t.Fatalf("--save: %d %s", code, errOut)
	}
	id := askJSONOut(t, out).Session

	s := openSessions(t, db)
	lease, err := s.Hold(id, "the workbench")
	if err != nil {
		t.Fatal(err)
	}
	chats := len(srv.Chats())
	for _, how := range [][]string{{"--session", id[:10]}, {"--continue"}} {
		out, errOut, code = runCLI(t, "", append(append(base, how...), "What is the weather there?")...)
		if code != ExitFailed {
			t.Errorf("%v on a held session: exit %d, want %d\n%s", how, code, ExitFailed, errOut)
		}
		for _, want := range []string{"session " + id + " is open in another jarvis (the workbench, pid", "nothing was asked", "--save"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", how, want, errOut)
			}
		}
		if out != "" {
			t.Errorf("%v: stdout %q", how, out)
		}
	}
	if n := len(srv.Chats()); n != chats {
		t.Fatalf("%d requests reached the server for a held session", n-chats)
	}
	if sess, _, _ := s.Load(id); sess.Messages != 2 {
		t.Fatalf("the held session has %d messages, want its 2", sess.Messages)
	}

	lease.Release()
	if _, errOut, code := runCLI(t, "", append(base, "--session", id, "What is the weather there?")...); code != ExitOK {
		t.Fatalf("after the release: %d %s", code, errOut)
	}
	if sess, _, _ := s.Load(id); sess.Messages != 4 {
		t.Fatalf("the session has %d messages after the ask, want 4", sess.Messages)
	}
	// The ask let go of it when it ended.
	again, err := s.Hold(id, "the workbench")
	if err != nil {
		t.Fatalf("the ask kept the session: %v", err)
	}
	again.Release()
}
