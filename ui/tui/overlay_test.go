package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
)

// boxRows returns the frame's lines from the first containing top to the
// first containing bottom after it (a box drawn over the transcript).
func boxRows(t *testing.T, frame, top, bottom string) []string {
	t.Helper()
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if !strings.Contains(l, top) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.Contains(lines[j], bottom) {
				return lines[i : j+1]
			}
		}
		t.Fatalf("box has no bottom %q:\n%s", bottom, frame)
	}
	t.Fatalf("no box top %q:\n%s", top, frame)
	return nil
}

func TestHelpFitsEveryScreenAndScrolls(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newTestModel(t, size[0], size[1])
			press(m, "?")
			v := screen(t, m)
			box := boxRows(t, v, "╭", "╰")
			if len(box) > m.transcript.height {
				t.Fatalf("help is %d rows in a %d-row body", len(box), m.transcript.height)
			}
			scrollable := strings.Contains(v, "pgup/pgdn scroll")
			if size[0] == 200 && scrollable {
				t.Fatalf("200x60 has room for the whole help:\n%s", v)
			}
			if scrollable {
				if strings.Contains(v, "/quit") {
					t.Fatalf("the last command is visible before scrolling:\n%s", v)
				}
				for i := 0; i < 10; i++ {
					press(m, "pgdown")
				}
				v = screen(t, m)
				if !strings.Contains(v, "/quit") || !strings.Contains(v, "╰") {
					t.Fatalf("pgdown does not reach the end of the help:\n%s", v)
				}
				press(m, "home")
				if v := screen(t, m); !strings.Contains(v, "Keys") {
					t.Fatalf("home does not return to the top:\n%s", v)
				}
			} else if !strings.Contains(v, "/quit") || !strings.Contains(v, "enter") {
				t.Fatalf("help incomplete:\n%s", v)
			}
			press(m, "x") // not a closing key
			if m.overlays.top() != (helpOverlay{m}) {
				t.Fatal("a stray key closed the help")
			}
			press(m, "esc")
			if m.overlays.top() != nil {
				t.Fatal("esc did not close the help")
			}
		})
	}
	m := newTestModel(t, 200, 60)
	press(m, "?")
	if v := screen(t, m); !strings.Contains(v, "Keys") || !strings.Contains(v, "Commands") {
		t.Fatalf("help:\n%s", v)
	}
	// Two columns: some row holds a key and a command side by side.
	side := false
	for _, l := range strings.Split(screen(t, m), "\n") {
		if strings.Count(ansi.Strip(l), "   ") > 2 && strings.Contains(l, "/") && strings.Contains(l, "ctrl+") {
			side = true
		}
	}
	if !side {
		t.Fatalf("a wide screen shows one column:\n%s", screen(t, m))
	}
	for _, k := range []string{"q", "?"} {
		press(m, "?")
		press(m, k)
		if m.overlays.top() != nil {
			t.Fatalf("%s did not close the help", k)
		}
	}
}

func TestOverlayBoxIsClippedToTheScreen(t *testing.T) {
	lines := []string{strings.Repeat(".", 20), strings.Repeat(".", 20), strings.Repeat(".", 20)}
	box := strings.Repeat("#", 30) + "\n" + strings.Repeat("#", 25) + "\nx\ny\nz"
	out := overlayBox(lines, box, 20)
	if len(out) != len(lines) {
		t.Fatalf("%d lines, want %d", len(out), len(lines))
	}
	for i, l := range out {
		if w := ansi.StringWidth(l); w > 20 {
			t.Fatalf("line %d is %d wide: %q", i, w, l)
		}
	}
}

// confirmLong opens a dialog with a long description and a long piece of
// code, as a model writes it.
func confirmLong(m *model) {
	run := fakeRun(m, "run it")
	var code strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&code, "print(%d)\n", i)
	}
	desc := strings.Repeat("Runs Python in a sandbox with limits on time, memory and files. ", 8)
	m.Update(confirmRequestMsg{req: tools.ConfirmRequest{
		Call:      tools.Call{ID: "k1", Name: "code_interpreter"},
		Spec:      tools.Spec{Name: "code_interpreter", Description: desc},
		Arguments: tools.Args{"code": code.String(), "timeout": 5.0}, Run: run,
	}, reply: make(chan tools.Decision, 1), once: new(syncOnce)})
}

func TestDialogKeepsHintAndBorderOnSmallScreens(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {100, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newTestModel(t, size[0], size[1])
			confirmLong(m)
			v := screen(t, m)
			box := boxRows(t, v, "╔", "╚")
			if len(box) > m.transcript.height {
				t.Fatalf("dialog is %d rows in a %d-row body", len(box), m.transcript.height)
			}
			text := ansi.Strip(strings.Join(box, "\n"))
			for _, want := range []string{"Allow code_interpreter?", "[a] allow once", "deny", "code:", "print(0)", "lines 1–"} {
				if !strings.Contains(text, want) {
					t.Errorf("dialog lacks %q:\n%s", want, v)
				}
			}
			if strings.Contains(text, `\n`) {
				t.Errorf("code is shown as a JSON string:\n%s", v)
			}
			if n := strings.Count(text, "Runs Python"); n > 3 {
				t.Errorf("the description takes %d lines", n)
			}
			// Scrolling reaches the last argument, and View never moves it.
			m.now = func() time.Time { return testTime.Add(time.Second) }
			for i := 0; i < 10; i++ {
				press(m, "pgdown")
			}
			scroll := m.dialog.scroll
			v = screen(t, m)
			if !strings.Contains(v, "timeout: 5") || !strings.Contains(v, "╚") {
				t.Fatalf("pgdown does not reach the last argument:\n%s", v)
			}
			screen(t, m)
			if m.dialog.scroll != scroll {
				t.Fatal("View changed the dialog's scroll position")
			}
			press(m, "up")
			if m.dialog.scroll != scroll-1 {
				t.Fatalf("up from the end moved to %d, want %d: the position was not clamped", m.dialog.scroll, scroll-1)
			}
		})
	}
}

func TestSessionsListFitsTheBox(t *testing.T) {
	var list []SessionSummary
	for i := 0; i < 40; i++ {
		list = append(list, SessionSummary{ID: fmt.Sprintf("%08x-rest", i), Updated: testTime,
			Title: strings.Repeat("a long title about something ", 5), Model: "hf.co/some-org/a-very-long-model-name:Q4_K_M", Messages: 12})
	}
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newTestModel(t, size[0], size[1])
			m.Update(sessionListMsg{list: list})
			v := screen(t, m)
			box := boxRows(t, v, "╭", "╰")
			if len(box) != m.transcript.height {
				t.Fatalf("a long list should fill the body: %d rows of %d", len(box), m.transcript.height)
			}
			// Border, title, blank line: every other row is a session.
			if rows := strings.Count(v, "msgs"); rows != m.transcript.height-4 {
				t.Fatalf("%d sessions shown, want %d:\n%s", rows, m.transcript.height-4, v)
			}
			for i := 0; i < 50; i++ {
				press(m, "down")
			}
			if v := screen(t, m); !strings.Contains(v, "00000027") {
				t.Fatalf("the cursor's session is not in view:\n%s", v)
			}
		})
	}
}

func TestArgumentsReadExactlyAsSent(t *testing.T) {
	code := "x = 'a b'  # two spaces\n\tif x:\n\t\tprint(\"" + strings.Repeat("é", 50) + "\")"
	lines := argLines(map[string]any{"code": code, "url": "https://example.com/" + strings.Repeat("p", 40), "n": 3.0}, 24)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 24 {
			t.Fatalf("line %q is %d cells wide", l, w)
		}
	}
	// Joined back (continuations without their mark), the code is the
	// code, tabs expanded: nothing added, nothing lost.
	var got []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, codeCont):
			got[len(got)-1] += strings.TrimPrefix(l, codeCont)
		case strings.HasPrefix(l, "  "):
			got = append(got, strings.TrimPrefix(l, "  "))
		}
	}
	want := strings.Split(expandTabs(code), "\n")
	if strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Fatalf("code reads\n%s\nwant\n%s\n(lines %q)", strings.Join(got, "\n"), strings.Join(want, "\n"), lines)
	}
	n := slices.Index(lines, "n: 3")
	if lines[0] != "code:" || n < 0 || !strings.HasPrefix(lines[n+1], `url: "https://`) {
		t.Fatalf("arguments out of order or format: %q", lines)
	}
}

// The overlays are one stack: the front one is drawn and gets the keys,
// closing it shows the one under it, and a confirmation is never covered
// (the sessions list arriving while it waits goes under it).
func TestOverlaysAreOneStackWithTheConfirmationInFront(t *testing.T) {
	m := newTestModel(t, 120, 36)
	press(m, "?")
	confirmLong(m)
	if _, ok := m.overlays.top().(confirmOverlay); !ok {
		t.Fatalf("the confirmation is not in front of the help: %T", m.overlays.top())
	}
	m.Update(sessionListMsg{list: []SessionSummary{{ID: "s1", Title: "an older session"}}})
	if _, ok := m.overlays.top().(confirmOverlay); !ok {
		t.Fatalf("the sessions list covered the confirmation: %T", m.overlays.top())
	}
	if s := screen(t, m); !strings.Contains(s, "Allow code_interpreter?") || strings.Contains(s, "an older session") {
		t.Fatalf("the screen does not show the confirmation alone in front:\n%s", s)
	}
	m.dialog.denyAll()
	if m.overlays.top() != (sessionsPicker{m}) || !strings.Contains(screen(t, m), "an older session") {
		t.Fatalf("the sessions list is not in front once the confirmation is answered: %T", m.overlays.top())
	}
	press(m, "esc")
	if m.overlays.top() != (helpOverlay{m}) || !strings.Contains(screen(t, m), "Commands") {
		t.Fatalf("closing the sessions list did not show the help under it: %T", m.overlays.top())
	}
	press(m, "esc")
	if m.overlays.top() != nil {
		t.Fatalf("esc left %T open", m.overlays.top())
	}
}
