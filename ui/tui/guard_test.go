package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
)

// clock drives a model's time in tests: keys at given moments, ticks.
type clock struct {
	m   *model
	now time.Time
}

func newClock(m *model) *clock {
	c := &clock{m: m, now: testTime}
	m.now = func() time.Time { return c.now }
	return c
}

// after moves the clock on by d and delivers a tick (what commits held
// keys).
func (c *clock) after(d time.Duration) {
	c.now = c.now.Add(d)
	c.m.Update(tickMsg(c.now))
}

// typeAt types s one key every gap, as a person types.
func (c *clock) typeAt(s string, gap time.Duration) {
	for _, r := range s {
		c.now = c.now.Add(gap)
		k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}
		if r == ' ' {
			k = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		}
		c.m.Update(k)
	}
}

// key presses one named key now.
func (c *clock) key(name string) { press(c.m, name) }

// answerKey presses an answer deliberately: after the keyboard was quiet,
// and standing for DialogHold.
func (c *clock) answerKey(name string) {
	c.now = c.now.Add(DialogQuiet + DialogGrace)
	press(c.m, name)
	c.after(DialogHold + time.Millisecond)
}

// openDialog posts a request as the executor would and returns where its
// answer arrives.
func openDialog(m *model, req tools.ConfirmRequest) chan tools.Answer {
	full := make(chan tools.Answer, 1)
	m.Update(confirmRequestMsg{req: req, full: full, once: new(syncOnce)})
	return full
}

func codeRequest() tools.ConfirmRequest {
	args := tools.Args{"code": "print(1)"}
	return tools.ConfirmRequest{
		Call: tools.Call{ID: "k1", Name: "code_interpreter"}, Spec: tools.Spec{Name: "code_interpreter", Description: "Runs Python."},
		Arguments: args, Scope: tools.ExactArguments(args, "this exact code"), CanAlways: true,
		Validate: func(tools.Args) error { return nil },
	}
}

func answered(ch chan tools.Answer) (tools.Answer, bool) {
	select {
	case a := <-ch:
		return a, true
	default:
		return tools.Answer{}, false
	}
}

// Prose typed at 10 characters a second through the moment a dialog
// opens lands in the prompt, every character; no key of it answers, not
// even after a pause mid-sentence; tab, then a deliberate key, does.
func TestTypingThroughADialogNeverAnswersIt(t *testing.T) {
	m := newTestModel(t, 100, 30)
	c := newClock(m)
	fakeRun(m, "first question")
	c.typeAt("Now tell me wh", 100*time.Millisecond)
	ans := openDialog(m, codeRequest())
	c.typeAt("y of that is, and explain", 100*time.Millisecond)
	c.now = c.now.Add(2 * time.Second) // a pause mid-sentence
	c.typeAt(" all of it", 100*time.Millisecond)
	c.after(time.Second)
	if a, ok := answered(ans); ok {
		t.Fatalf("typing answered the dialog: %+v", a)
	}
	if got, want := m.input.value(), "Now tell me why of that is, and explain all of it"; got != want {
		t.Fatalf("draft = %q, want %q", got, want)
	}
	if m.dialog.ed.mode != modeAsk || m.dialog.ed.external {
		t.Fatal("typing opened an editor")
	}
	if v := ansi.Strip(screen(t, m)); !strings.Contains(v, "Press tab to answer this dialog") {
		t.Fatalf("the dialog does not say how to answer it:\n%s", v)
	}
	c.now = c.now.Add(time.Second)
	c.key("tab")
	c.key("a")
	if _, ok := answered(ans); ok {
		t.Fatal("an answer acted before it stood")
	}
	c.after(DialogHold)
	if a, ok := answered(ans); !ok || a.Decision != tools.AllowOnce {
		t.Fatalf("tab then a: %+v %v", a, ok)
	}
}

// A key right after other keys is typing, even past the grace period; a
// key that another follows at typing speed is typing too, and both go to
// the prompt.
func TestQuietAndHoldDecideWhatIsDeliberate(t *testing.T) {
	m := newTestModel(t, 100, 30)
	c := newClock(m)
	fakeRun(m, "q")
	ans := openDialog(m, codeRequest())
	c.now = c.now.Add(DialogGrace)
	c.typeAt("x", 0)
	c.typeAt("s", 300*time.Millisecond) // quiet for less than DialogQuiet
	c.after(time.Second)
	if _, ok := answered(ans); ok || m.input.value() != "xs" || !m.dialog.typed {
		t.Fatalf("a key close after another answered (draft %q)", m.input.value())
	}
	c.key("tab")
	c.now = c.now.Add(time.Second)
	c.key("a")
	c.typeAt("nd", 80*time.Millisecond) // "and": the a was typing
	c.after(time.Second)
	if _, ok := answered(ans); ok || m.input.value() != "xsand" {
		t.Fatalf("a followed by typing answered (draft %q)", m.input.value())
	}
	c.key("tab")
	c.answerKey("d")
	if a, ok := answered(ans); !ok || a.Decision != tools.Deny {
		t.Fatalf("a deliberate d: %+v %v", a, ok)
	}
}

// A dialog that opens while the person is idle answers a deliberate key
// without tab; the keys name the grant: "this exact code" for the
// session, the whole tool always, after a second question.
func TestDialogNamesTheGrantAndAsksAgainForToolWideAlways(t *testing.T) {
	m := newTestModel(t, 140, 30)
	c := newClock(m)
	fakeRun(m, "q")
	ans := openDialog(m, codeRequest())
	v := strings.Join(strings.Fields(ansi.Strip(screen(t, m))), " ")
	for _, want := range []string{"[s] allow this exact code for this session", "[A] always allow code_interpreter", "(any arguments; asks again)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, v)
		}
	}
	c.answerKey("A")
	if _, ok := answered(ans); ok || m.dialog.ed.mode != modeAlways {
		t.Fatal("A did not ask again before a tool-wide grant")
	}
	if v := ansi.Strip(screen(t, m)); !strings.Contains(v, "with any arguments, in every session") {
		t.Fatalf("the second question:\n%s", v)
	}
	c.answerKey("y")
	if a, ok := answered(ans); !ok || a.Decision != tools.AllowAlways {
		t.Fatalf("y: %+v %v", a, ok)
	}
}

// Parallel calls show their place, and an edit's last approval shows the
// edited call's reason, not the model's.
func TestDialogShowsPlaceAndTheEditedReason(t *testing.T) {
	m := newTestModel(t, 120, 30)
	c := newClock(m)
	fakeRun(m, "q")
	req := tools.ConfirmRequest{
		Call: tools.Call{ID: "r1", Name: "file_read"}, Spec: tools.Spec{Name: "file_read", Description: "Reads."},
		Arguments: tools.Args{"path": "/etc/hosts"}, Reason: "reads /etc/hosts, outside the working directory",
		Scope:    tools.Scope{Kind: tools.ScopeDir, Value: "/etc", Words: "reads in /etc (not its subfolders)"},
		Position: 1, Of: 2, Validate: func(tools.Args) error { return nil },
		Recheck: func(a tools.Args) tools.Check {
			return tools.Check{Needed: true, Reason: "reads " + a.String("path") + ", outside the working directory",
				Scope: tools.Scope{Kind: tools.ScopeDir, Value: "/srv", Words: "reads in /srv (not its subfolders)"}}
		},
	}
	openDialog(m, req)
	if v := ansi.Strip(screen(t, m)); !strings.Contains(v, "(1 of 2)") || !strings.Contains(v, "allow reads in /etc (not its subfolders) for this session") {
		t.Fatalf("dialog:\n%s", v)
	}
	c.now = c.now.Add(time.Second)
	m.checkEdit(`{"path": "/srv/x"}`)
	v := ansi.Strip(screen(t, m))
	if !strings.Contains(v, "reads /srv/x, outside the working directory") || strings.Contains(v, "reads /etc/hosts") ||
		!strings.Contains(v, "allow reads in /srv") {
		t.Fatalf("the last approval shows the model's call:\n%s", v)
	}
}

// Prose typed into the focused Tools tab goes to the prompt and turns no
// tool on; A asks before a tool-wide always-grant.
func TestTypingIntoTheToolsTabChangesNothing(t *testing.T) {
	m := newTestModel(t, 120, 30)
	c := newClock(m)
	m.opts.Always = &fakeAlways{}
	press(m, "ctrl+t")
	c.now = c.now.Add(time.Second)
	press(m, "tab")
	if !m.pane.Focused() {
		t.Fatal("tab did not focus the pane")
	}
	before := strings.Join(m.enabled, ",")
	c.now = c.now.Add(time.Second)
	c.typeAt("just a test, Any idea?", 70*time.Millisecond)
	c.after(time.Second)
	if got := strings.Join(m.enabled, ","); got != before {
		t.Fatalf("typing changed the tools: %s -> %s", before, got)
	}
	if m.pane.Focused() || m.input.value() != "just a test, Any idea?" || m.tools.Question() != nil {
		t.Fatalf("focus %v, draft %q, question %+v", m.pane.Focused(), m.input.value(), m.tools.Question())
	}

	m.input.reset()
	press(m, "tab") // the prompt is empty: the pane again
	for m.tools.SetCursor(0); m.toolRows()[m.tools.Cursor()].Name != "web_search"; m.tools.SetCursor(m.tools.Cursor() + 1) {
	}
	c.answerKey("A")
	q := m.tools.Question()
	if q == nil || !strings.Contains(q.Text, "Always allow web_search, with any arguments, in every session?") {
		t.Fatalf("A did not ask: %+v", q)
	}
	c.answerKey("y")
	if m.tools.Question() != nil || !m.appr.always["web_search"] {
		t.Fatalf("y did not always-allow: %+v", m.appr.always)
	}
	for m.tools.SetCursor(0); m.toolRows()[m.tools.Cursor()].Name != "file_read"; m.tools.SetCursor(m.tools.Cursor() + 1) {
	}
	c.answerKey("A")
	if m.tools.Question() != nil || !strings.Contains(m.status, "file_read is approved per directory") {
		t.Fatalf("file_read offered a tool-wide grant: %+v %q", m.tools.Question(), m.status)
	}
}

// fakeAlways is an always-grant store in memory.
type fakeAlways struct{ grants []tools.Grant }

func (f *fakeAlways) AlwaysMatch(tool string, scope tools.Scope) (tools.Grant, bool, error) {
	for _, g := range f.grants {
		if g.Covers(tool, scope) {
			return g, true, nil
		}
	}
	return tools.Grant{}, false, nil
}

func (f *fakeAlways) AllowAlways(g tools.Grant) error { f.grants = append(f.grants, g); return nil }

func (f *fakeAlways) Names() ([]string, error) {
	var names []string
	for _, g := range f.grants {
		names = append(names, g.Tool)
	}
	return names, nil
}

func (f *fakeAlways) RevokeAll(tool string) (int, error) {
	n := 0
	kept := f.grants[:0]
	for _, g := range f.grants {
		if g.Tool == tool {
			n++
			continue
		}
		kept = append(kept, g)
	}
	f.grants = kept
	return n, nil
}
