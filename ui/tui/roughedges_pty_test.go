package tui_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// The workbench's rough edges two trials found, in the built binary: a
// cut reply drawn once, a run reopened as it was drawn live, URLs broken
// at the width, a missing editor named, the Tools tab's hint at 120
// columns, ctrl+c clearing the prompt, the header's window following
// /ctx and /new, an event shown in full, and two workbenches on one
// session.

const keyCtrlP = "\x10"

// edgesServer answers the questions these tests ask.
func edgesServer(t *testing.T) *ot.Server {
	t.Helper()
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools, engine.CapThinking)
	srv.On(et.UserSays("long story")).FinishReason("length").Reply(et.Text("Once upon a time a fox walked the whole length of the"))
	srv.On(et.UserSays("15% of 340")).Reply(et.Think("Fifteen percent is a multiplication."), et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Think("The calculator said 51."), et.Text("15% of 340 is 51."))
	srv.On(et.UserSays("example")).Reply(et.Text("See " + edgeURL + " for the example."))
	srv.On(et.UserSays("story")).Reply(et.Text("Once upon a time, a fox."))
	srv.On(et.UserSays("poem")).Reply(et.Text("Roses are red."))
	srv.Default(et.Text("Noted."))
	return srv
}

const edgeURL = "https://github.com/charmbracelet/bubbletea/blob/main/examples/textarea-with-a-long-name/main.go"

// waitForWords waits until the screen says every want, lines joined:
// a note wraps where the width says.
func (term *terminal) waitForWords(timeout time.Duration, want ...string) string {
	term.t.Helper()
	return term.waitUntil(timeout, strings.Join(want, ", "), func(s string) bool {
		flat := strings.Join(strings.Fields(s), " ")
		for _, w := range want {
			if !strings.Contains(flat, w) {
				return false
			}
		}
		return true
	})
}

// startEdges runs jarvis on edgesServer in home, and waits for its prompt.
func startEdges(t *testing.T, srv *ot.Server, home string, env []string, cols, rows int, args ...string) *terminal {
	t.Helper()
	term := startTerminalIn(t, home, env, cols, rows, append([]string{"--host", srv.URL, "--model", "qwen3:8b"}, args...)...)
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	return term
}

func TestCutReplyAndURLsInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	term := startEdges(t, srv, t.TempDir(), nil, 90, 30, "--tools", "none")
	s := term.send("Tell me a long story", "The reply stopped at the server's length limit")
	if n := strings.Count(s, "walked the whole length"); n != 1 {
		t.Fatalf("the cut reply is drawn %d times:\n%s", n, s)
	}

	s = term.send("Show me an example", "for the example.")
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "https://") || len(rows) > 0 && len(rows) < 3 {
			rows = append(rows, strings.TrimSpace(l))
		}
	}
	if len(rows) == 0 || !strings.HasPrefix(rows[0], "https://github.com/charmbracelet/bubbletea/blob/") {
		t.Fatalf("the URL is broken before the width (after its host):\n%s", s)
	}
	if got := strings.Join(rows, ""); !strings.HasPrefix(got, edgeURL) {
		t.Fatalf("the URL reads %q across its rows:\n%s", got, s)
	}
}

// answerLines are the lines that say how a run went: the thinking's
// heads, the turns' footers and the total (its time, the run's or its
// last message's, is left out).
func answerLines(s string) []string {
	latency := regexp.MustCompile(`\d+(\.\d+)?(µs|ms|s)\b`)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Σ "):
			out = append(out, latency.ReplaceAllString(l, "TIME"))
		case strings.HasPrefix(l, "↳ "), strings.Contains(l, "▸ thought"), strings.Contains(l, "▸ thinking"):
			out = append(out, l)
		}
	}
	return out
}

func TestReopenedRunIsDrawnAsLiveInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	home := t.TempDir()
	term := startEdges(t, srv, home, nil, 150, 40, "--tools", "calculator")
	live := answerLines(term.send("What is 15% of 340?", "15% of 340 is 51.", "Σ 2 turns"))
	if len(live) != 5 || !strings.Contains(live[1], " · ctx ") || !strings.HasPrefix(live[0], "▸ thought") {
		t.Fatalf("the live run shows %q", live)
	}
	term.quit()

	term = startEdges(t, srv, home, nil, 150, 40, "--continue")
	s := term.waitFor(10*time.Second, "Opened session", "15% of 340 is 51.")
	if got := answerLines(s); strings.Join(got, "\n") != strings.Join(live, "\n") {
		t.Fatalf("reopened, the run shows\n%s\nlive it showed\n%s", strings.Join(got, "\n"), strings.Join(live, "\n"))
	}
}

func TestMissingEditorIsNamedInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	term := startEdges(t, srv, t.TempDir(), []string{"EDITOR=nano-not-installed"}, 110, 30, "--tools", "none")
	term.send("Tell me a story", "Once upon a time, a fox.")
	term.send("/edit", `the command "nano-not-installed" was not found`, "The question is unchanged.")
}

func TestWorkbenchEdgesAt120ColumnsInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	term := startEdges(t, srv, t.TempDir(), nil, 120, 40, "--tools", "calculator")

	// ctrl+c clears the prompt.
	term.typeText("a draft to throw away")
	term.waitFor(5*time.Second, "a draft to throw away")
	term.typeText(keyCtrlC)
	term.waitGone(5*time.Second, "a draft to throw away")
	term.waitFor(5*time.Second, "Ask anything")

	// The header's window follows /ctx and /new.
	header := func() string { return strings.SplitN(term.screen(), "\n", 2)[0] }
	term.send("What is 15% of 340?", "15% of 340 is 51.")
	if h := header(); !regexp.MustCompile(`ctx \d+ of 4\.1k tokens`).MatchString(h) {
		t.Fatalf("after the question the header says %q", h)
	}
	term.send("/ctx 16384", "16,384")
	term.waitUntil(5*time.Second, "the header on the new window", func(string) bool { return strings.Contains(header(), "of 16.4k tokens") })
	term.send("/new", "New session.")
	term.waitUntil(5*time.Second, "the header's estimate for the new session", func(string) bool {
		return regexp.MustCompile(`ctx ~\d+ of 16\.4k tokens`).MatchString(header())
	})

	// The Tools tab's hint shows every key at 120 columns.
	term.typeText("\x14") // ctrl+t
	s := term.waitFor(5*time.Second, "tab: focus", "$: cost")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "tab: focus") && strings.Contains(l, "…") {
			t.Errorf("the hint is cut: %q", l)
		}
	}

	// An event opened shows what its line leaves out: the call's result.
	term.typeText("\x1bOS") // F4: the Events tab
	term.waitFor(5*time.Second, "run_end")
	term.typeText("\t")
	term.waitFor(5*time.Second, "enter: in full")
	for range 3 { // run_end, turn_end, turn_start, then the call's end
		readPane()
		term.typeText("\x1b[A")
	}
	readPane()
	term.typeText(keyEnter)
	term.waitFor(5*time.Second, "result: 51.0", `"expression":"15/100*340"`)
}

func TestTwoWorkbenchesOnOneSessionInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	home := t.TempDir()
	first := startEdges(t, srv, home, nil, 110, 34, "--tools", "none")
	first.send("Tell me a story", "Once upon a time, a fox.")

	second := startEdges(t, srv, home, nil, 110, 34, "--tools", "none", "--continue")
	second.waitForWords(10*time.Second, "is open in another jarvis (the workbench, pid", "open elsewhere", "ctrl+p (or /fork)")
	chats := len(srv.Chats())
	second.typeText("Now a poem" + keyEnter)
	second.waitForWords(10*time.Second, "so nothing was sent")
	if n := len(srv.Chats()); n != chats {
		t.Fatalf("%d requests went out from the session open elsewhere", n-chats)
	}
	second.waitFor(2*time.Second, "› Now a poem") // still in the prompt
	second.typeText(keyCtrlP)
	second.waitFor(5*time.Second, "Forked: a new session")
	second.waitGone(5*time.Second, "open elsewhere")
	second.typeText(keyEnter) // the question kept in the prompt
	second.waitFor(10*time.Second, "Roses are red.")

	// The first goes on with its own line.
	s := first.send("Thanks", "Noted.")
	if strings.Contains(s, "Roses are red.") {
		t.Fatalf("the fork's answer reached the first workbench:\n%s", s)
	}
	first.quit()
	second.quit()
}

func TestSchedulerSecondsAndModelInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := edgesServer(t)
	term := startEdges(t, srv, t.TempDir(), nil, 120, 40, "--tools", "none", "--agent", "simple")
	term.typeText("\x1b[15~") // F5: the Scheduler tab
	term.waitFor(5*time.Second, "No scheduled tasks")
	term.typeText("\t")
	term.typeText("n")
	term.waitFor(5*time.Second, "New scheduled task")
	term.typeText("ping")
	term.typeText("\t")
	term.typeText("i") // interval
	term.typeText("\t")
	term.typeText("\x15") // ctrl+u
	term.typeText("10s")
	s := term.waitFor(5*time.Second, "Runs every 10s")
	clocks := regexp.MustCompile(`\d{2}:\d{2}:\d{2} [A-Z]{3,4}  in \d+s`).FindAllString(s, -1)
	if len(clocks) != 5 {
		t.Fatalf("the preview of a run every 10s does not show five times to the second:\n%s", s)
	}
	term.typeText("\x13") // ctrl+s
	s = term.waitFor(5*time.Second, "Created task", "Model    qwen3:8b")
	if !regexp.MustCompile(`Next +\S+ \d+ \S+ \d{2}:\d{2}:\d{2}`).MatchString(s) {
		t.Fatalf("the task's next runs are not shown to the second:\n%s", s)
	}
}
