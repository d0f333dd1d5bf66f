package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// ask --json says what the run took of the window, and every request
// carries the window the person set.
func TestAskJSONReportsTheContext(t *testing.T) {
	srv := fakeOllama(t)
	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator", "--num-ctx", "8192", "What is 15% of 340?")
	res := decodeAsk(t, out)
	if code != ExitOK || res.Context.Window != 8192 || res.Context.PromptTokens <= 0 {
		t.Fatalf("exit %d, context %+v, stderr %q", code, res.Context, errOut)
	}
	for _, r := range srv.Requests() {
		if r.Chat != nil && r.NumCtx != 8192 {
			t.Fatalf("request %d sent num_ctx %d", r.Seq, r.NumCtx)
		}
	}
}

// A question too big for the window is refused before anything is sent:
// exit 1, and the message names every part's size and only the fixes
// that can work: a larger window where the model allows one.
func TestAskRefusesAMessageThatCannotFit(t *testing.T) {
	for _, c := range []struct {
		name    string
		max     int
		args    []string
		want    []string
		mustNot string
	}{
		{"the model allows more", 32768, []string{"--num-ctx", "2048"},
			[]string{"your message is about", "the system prompt (", "room for the reply (", "tiny runs with a 2,048-token window", "Shorten the message", "--num-ctx", "tiny allows up to 32,768"}, ""},
		{"the window is the model's maximum", 2048, nil,
			[]string{"your message is about", "tiny runs with a 2,048-token window", "Shorten the message."}, "--num-ctx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ot.New(t)
			srv.AddModel(ot.ModelSpec{Name: "tiny", Capabilities: []string{engine.CapCompletion}, ContextLength: c.max})
			huge := strings.Repeat("word ", 3100)
			args := append([]string{"ask", "--host", srv.URL, "--model", "tiny", "--agent", "simple"}, c.args...)
			out, errOut, code := runCLI(t, "", append(args, huge)...)
			if code != ExitFailed {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			for _, want := range c.want {
				if !strings.Contains(errOut, want) {
					t.Fatalf("stderr %q does not say %q", errOut, want)
				}
			}
			if c.mustNot != "" && strings.Contains(errOut, c.mustNot) {
				t.Fatalf("stderr %q offers %q, which cannot help", errOut, c.mustNot)
			}
			for _, r := range srv.Requests() {
				if r.Chat != nil {
					t.Fatal("the request was sent")
				}
			}
		})
	}
}

// A window set with --num-ctx goes with the session: --continue sends it
// again, a new --num-ctx wins and is recorded. A refused message is not
// saved: a session --save would start is not even created.
func TestAskSessionKeepsItsWindow(t *testing.T) {
	srv := sessionServer(t)
	db := filepath.Join(t.TempDir(), "j.db")
	base := []string{"--host", srv.URL, "--db", db, "ask", "--tools", "none", "--model", "qwen3:8b", "--agent", "simple"}
	lastNumCtx := func() int {
		chats := srv.Requests()
		for i := len(chats) - 1; i >= 0; i-- {
			if chats[i].Chat != nil {
				return chats[i].NumCtx
			}
		}
		return 0
	}
	if _, errOut, code := runCLI(t, "", append(base, "--save", "--num-ctx", "8192", "plan a trip to Lisbon")...); code != ExitOK {
		t.Fatalf("--save: %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "", append(base, "--continue", "What about the weather?")...); code != ExitOK || lastNumCtx() != 8192 {
		t.Fatalf("--continue: exit %d, num_ctx %d, %s", code, lastNumCtx(), errOut)
	}
	if _, errOut, code := runCLI(t, "", append(base, "--continue", "--num-ctx", "16384", "And packing?")...); code != ExitOK || lastNumCtx() != 16384 {
		t.Fatalf("--continue --num-ctx: exit %d, num_ctx %d, %s", code, lastNumCtx(), errOut)
	}
	if _, _, code := runCLI(t, "", append(base, "--continue", "summed up?")...); code != ExitOK || lastNumCtx() != 16384 {
		t.Fatalf("the session did not record --num-ctx 16384: num_ctx %d", lastNumCtx())
	}
	s := openSessions(t, db)
	list, _ := s.List(0)
	if len(list) != 1 || list[0].NumCtx != 16384 {
		t.Fatalf("sessions %+v", list)
	}

	// Refused: nothing saved, no session made.
	huge := strings.Repeat("word ", 9000)
	_, errOut, code := runCLI(t, "", append(base, "--save", "--num-ctx", "4096", huge)...)
	if code != ExitFailed || !strings.Contains(errOut, "your message is about") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	if list, _ := openSessions(t, db).List(0); len(list) != 1 {
		t.Fatalf("a refused message made a session: %d sessions", len(list))
	}
}
