package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

var (
	longURL  = "https://example.com/releases/download/v1.2.3/" + strings.Repeat("artifact-", 9) + "linux-amd64.tar.gz?sig=" + strings.Repeat("Zx9", 12)
	longHash = strings.Repeat("0123456789abcdef", 6)
)

// readable joins what a screen shows with the frame's drawing and the
// spaces taken out, so a word broken across rows reads whole again.
func readable(screen string) string {
	return strings.NewReplacer(" ", "", "\n", "", "│", "", "▍", "", "╭", "", "╮", "", "╰", "", "╯", "", "─", "", "•", "").Replace(ansi.Strip(screen))
}

// A word longer than the screen (a URL, a hash) is broken at the width
// wherever text is drawn, never cut: a question, a streaming and a
// rendered reply, a note, a tool panel's arguments and result, collapsed
// and expanded, and thinking.
func TestLongWordsAreWrappedNotCut(t *testing.T) {
	m := newTestModel(t, 80, 64)
	run := fakeRun(m, "Fetch "+longURL+" please")
	feed(m, events.Event{Type: events.Thinking, Run: run, Text: "The hash " + longHash + " matters."})
	feed(m, tok(run, "Streaming: "+longURL))
	v := screen(t, m)
	for _, w := range []string{longURL, "Streaming:" + longURL} {
		if !strings.Contains(readable(v), w) {
			t.Errorf("the streaming screen lost %q:\n%s", w, v)
		}
	}
	args := map[string]any{"url": longURL, "method": "GET"}
	first := turnEnd(run, 1, "", 1)
	first.Turn.Thinking = "The hash " + longHash + " matters."
	feed(m, first,
		toolStart(run, "c1", "http_request", args, 1),
		toolEnd(run, "c1", "http_request", args, tools.StatusOK, "sha256 "+longHash, 0.2))
	end := turnEnd(run, 2, "", 0)
	final := "Downloaded:\n\n- " + longURL + "\n- checksum `" + longHash + "`\n\n```\n" + longHash + longHash + "\n```"
	end.Turn.Content = final
	feed(m, tok(run, final), end,
		events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 2}})
	m.Update(runDoneMsg{runID: run.ID})
	m.addNote("Saved to "+longURL, false)
	v = screen(t, m)
	golden(t, "long_words", v)
	for _, line := range strings.Split(v, "\n") {
		// The panel's title shows the main argument cut; the arguments
		// follow it whole.
		if strings.Contains(line, "…") && !strings.Contains(line, "✓ http_request") {
			t.Errorf("a line was cut with an ellipsis: %q", line)
		}
	}
	r := readable(v)
	for _, w := range []string{
		"Fetch" + longURL + "please",        // the question
		`{"method":"GET","url":"` + longURL, // the collapsed panel's arguments
		"→sha256" + longHash,                // the result
		longURL + "checksum" + longHash,     // the rendered list
		longHash + longHash,                 // the code block
		"Savedto" + longURL,                 // the note
	} {
		if !strings.Contains(r, w) {
			t.Errorf("the screen lost %q:\n%s", w, v)
		}
	}
	press(m, "ctrl+e")
	press(m, "ctrl+r")
	m.transcript.top(m.renderCtx(m.transcriptWidth()))
	v = screen(t, m)
	r = readable(v)
	for _, w := range []string{`url:"` + longURL + `"`, "Thehash" + longHash + "matters."} {
		if !strings.Contains(r, w) {
			t.Errorf("the expanded screen lost %q:\n%s", w, v)
		}
	}
}

// Code keeps its indentation in a panel: in the collapsed panel's title
// (quoted, spaces kept) and expanded (as lines, tabs at the code's
// own stops).
func TestCodeArgumentsKeepTheirIndentation(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "run it")
	code := "def f(x):\n    if x:\n        return 1\n\treturn 2"
	args := map[string]any{"code": code}
	feed(m, turnEnd(run, 1, "", 1), toolStart(run, "c1", "code_interpreter", args, 1),
		toolEnd(run, "c1", "code_interpreter", args, tools.StatusOK, "1", 0.1))
	if v := screen(t, m); !strings.Contains(v, `code="def f(x):\n    if x:\n        return 1\n\treturn 2"`) {
		t.Errorf("the collapsed panel lost the code's spaces:\n%s", v)
	}
	press(m, "ctrl+e")
	v := screen(t, m)
	for _, want := range []string{"│   def f(x):", "│       if x:", "│           return 1", "│       return 2"} {
		if !strings.Contains(v, want) {
			t.Errorf("the expanded panel lacks %q:\n%s", want, v)
		}
	}
}

// A URL in a reply is one word: glamour would break it at its dots and
// hyphens (after its host: "https://github." then "com/…"); it starts a
// row and breaks at the width, a link still, and a short one moves to the
// next row whole. Code and link targets keep their characters.
func TestURLsInRepliesBreakAtTheWidth(t *testing.T) {
	m := newTestModel(t, 80, 30)
	url := "https://github.com/charmbracelet/bubbletea/blob/main/examples/textarea-with-a-long-name/main.go"
	for _, text := range []string{
		"See " + url + " for the example.",
		"See [the example](" + url + ").",
		"(see " + url + ")",
		"```\ncurl " + url + "\n```",
	} {
		rows := m.md.render(text, 60)
		var got strings.Builder
		first := -1
		for i, r := range rows {
			plain := strings.TrimSpace(ansi.Strip(r))
			if w := ansi.StringWidth(r); w > 60 {
				t.Errorf("%q: row %d is %d cells", text, i, w)
			}
			if first < 0 && strings.Contains(plain, "https://") {
				first = i
				plain = plain[strings.Index(plain, "https://"):]
				if ansi.StringWidth(ansi.Strip(r)) != 60 {
					t.Errorf("%q: the URL's first row %q ends before the width", text, plain)
				}
			}
			if first >= 0 && got.Len() < len(url) {
				got.WriteString(plain)
			}
		}
		if !strings.HasPrefix(got.String(), url) {
			t.Errorf("%q: the URL reads %q across its rows:\n%s", text, got.String(), strings.Join(rows, "\n"))
		}
	}
	short := m.md.render("The guide to read first is at https://go.dev/doc/effective_go.html, then the spec.", 60)
	if len(short) < 2 || !strings.HasPrefix(ansi.Strip(short[1]), "https://go.dev/doc/effective_go.html") {
		t.Errorf("a URL that fits a row was broken:\n%s", strings.Join(short, "\n"))
	}
}
