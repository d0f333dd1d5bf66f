package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// live is a model wired to a real engine (the fake Ollama server), a real
// agent and a real session store, driven synchronously: commands run in
// the test's goroutine and the bus events are fed back before the run's end.
type live struct {
	t   testing.TB
	m   *model
	sub *events.Subscription
}

func newLive(t testing.TB, srv *ot.Server, dbPath string, cont bool) *live {
	t.Helper()
	return newLiveWith(t, srv, dbPath, cont, config.Flags{}, nil)
}

// lives are the workbenches each database has had in a test. A new one
// on a database stands for a restart: the ones before have ended, and
// their sessions' leases with them (newLiveAlongside keeps them: two
// workbenches at once).
var lives struct {
	sync.Mutex
	on map[string][]*live
}

// restarted ends the leases of the workbenches l's database had.
func restarted(l *live, dbPath string) {
	lives.Lock()
	defer lives.Unlock()
	if lives.on == nil {
		lives.on = map[string][]*live{}
	}
	for _, old := range lives.on[dbPath] {
		old.m.dropLease()
	}
	lives.on[dbPath] = append(lives.on[dbPath], l)
	l.t.Cleanup(func() {
		lives.Lock()
		defer lives.Unlock()
		delete(lives.on, dbPath)
	})
}

// newLiveAlongside is a second workbench on the database while the
// first one still runs.
func newLiveAlongside(t testing.TB, srv *ot.Server, dbPath string, cont bool) *live {
	t.Helper()
	return newLiveOn(t, srv, dbPath, cont, config.Flags{}, nil, false)
}

// newLiveWith is newLive with command-line flags, and a hook that changes
// the configuration after the defaults of these tests (model qwen3:8b,
// the calculator) were set where no flag set them.
func newLiveWith(t testing.TB, srv *ot.Server, dbPath string, cont bool, flags config.Flags, setup func(*config.Config)) *live {
	t.Helper()
	return newLiveOn(t, srv, dbPath, cont, flags, setup, true)
}

func newLiveOn(t testing.TB, srv *ot.Server, dbPath string, cont bool, flags config.Flags, setup func(*config.Config), restart bool) *live {
	t.Helper()
	flags.ConfigPath = writeEmptyConfig(t)
	cfg, err := config.Load(flags)
	if err != nil {
		t.Fatal(err)
	}
	if flags.Model == "" {
		cfg.Model = "qwen3:8b"
	}
	if flags.Tools == nil {
		cfg.Tools = []string{"calculator"}
	}
	if setup != nil {
		setup(cfg)
	}
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var store_ SessionStore
	if dbPath != "" {
		db, err := store.Open(dbPath, "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// The writes still queued land before the file goes away.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := db.Queue().Close(ctx); err != nil {
				t.Error(err)
			}
			db.Close()
		})
		store_ = NewSessionStore(sessions.New(db))
	}
	bus := events.New()
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: eng, Registry: builtin.Registry(builtin.Deps{}),
		Theme: "dark", Bus: bus, Sessions: store_, Continue: cont})
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, m: m, sub: bus.Subscribe(100000)}
	if restart && dbPath != "" {
		restarted(l, dbPath)
	}
	m.send = func(msg tea.Msg) { l.update(msg) }
	m.now = time.Now
	// Commands run in line here: a status message's timer would hold the
	// test for its whole life.
	m.statusTimer = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.releaseAfter = 0 // nor the release's
	l.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return l
}

// do runs cmd (and what it leads to) to completion.
func (l *live) do(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			l.do(c)
		}
		return
	case tickMsg, nil:
		return // timers are not followed in these tests
	case runDoneMsg:
		l.drain()
	}
	l.update(msg)
}

// drain feeds the events published so far.
func (l *live) drain() {
	var batch eventsMsg
	for {
		select {
		case e := <-l.sub.C:
			batch = append(batch, e)
		default:
			if len(batch) > 0 {
				l.update(batch)
			}
			return
		}
	}
}

func (l *live) update(msg tea.Msg) {
	_, cmd := l.m.Update(msg)
	l.do(cmd)
}

func (l *live) typeLine(s string) {
	l.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
	l.update(tea.KeyMsg{Type: tea.KeyEnter})
}

func (l *live) screen() string { return screen(l.t, l.m) }

func fakeServer(t *testing.T) *ot.Server {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
	srv.Default(et.Text("ok"))
	return srv
}

func TestSessionIsSavedAndContinued(t *testing.T) {
	srv := fakeServer(t)
	dbPath := filepath.Join(t.TempDir(), "j.db")
	l := newLive(t, srv, dbPath, false)
	l.do(l.m.Init())
	l.typeLine("What is 15% of 340?")
	s := l.screen()
	if !strings.Contains(s, "15% of 340 is 51.") || !strings.Contains(s, "✓ calculator") {
		t.Fatalf("answer not on screen:\n%s", s)
	}
	if l.m.sessionID == "" {
		t.Fatal("no session was created")
	}
	// Export the session as markdown.
	out := filepath.Join(t.TempDir(), "s.md")
	l.typeLine("/export " + out)
	md, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(md), "What is 15% of 340?") || !strings.Contains(string(md), "calculator") {
		t.Fatalf("export: %v\n%s", err, md)
	}

	// A new TUI with --continue reopens it, conversation included.
	l2 := newLive(t, srv, dbPath, true)
	l2.do(l2.m.Init())
	s = l2.screen()
	if !strings.Contains(s, "What is 15% of 340?") || !strings.Contains(s, "15% of 340 is 51.") || !strings.Contains(s, "Opened session") {
		t.Fatalf("continued session not shown:\n%s", s)
	}
	if len(l2.m.conv.Messages) != 4 || l2.m.sessionID != l.m.sessionID {
		t.Fatalf("conversation not restored: %d messages, session %q", len(l2.m.conv.Messages), l2.m.sessionID)
	}
	// The next question goes on in the same conversation.
	l2.typeLine("thanks")
	chats := srv.Chats()
	if last := chats[len(chats)-1]; len(last.Messages) < 6 {
		t.Fatalf("the continued conversation was not sent: %d messages", len(last.Messages))
	}
}

func TestServerDownStillOpensAndRetries(t *testing.T) {
	cfg, _ := config.Load(config.Flags{ConfigPath: writeEmptyConfig(t)})
	eng, _ := ollama.New(ot.ClosedURL(t))
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: eng, Registry: builtin.Registry(builtin.Deps{}), Theme: "dark", Bus: events.New()})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	_, retry := m.Update(m.checkServer(0)())
	if retry == nil {
		t.Fatal("no retry scheduled after a failed check")
	}
	s := screen(t, m)
	if !strings.Contains(s, "Start it with") || !strings.Contains(s, "keeps checking") || !strings.Contains(s, "○") {
		t.Fatalf("screen:\n%s", s)
	}
	// The workbench stays usable: commands and the tools pane work.
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	if s := screen(t, m); !strings.Contains(s, "### calculator") {
		t.Fatalf("tools pane:\n%s", s)
	}
}

func TestSlashCommandsAndCompletion(t *testing.T) {
	m := newTestModel(t, 100, 30)
	typeIn := func(s string) { m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}) }
	typeIn("/mod")
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if v := m.input.value(); v != "/model " {
		t.Fatalf("completion gave %q", v)
	}
	m.input.reset()
	typeIn("/tools calculator,th")
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if v := m.input.value(); v != "/tools calculator,think" {
		t.Fatalf("argument completion gave %q", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if strings.Join(m.enabled, ",") != "calculator,think" {
		t.Fatalf("enabled = %v", m.enabled)
	}
	typeIn("/tools nope")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if s := screen(t, m); !strings.Contains(s, `unknown tool "nope"`) {
		t.Fatalf("bad tool name not reported:\n%s", s)
	}
	typeIn("/agent react")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	typeIn("/agent genius")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.agentName != "react" || !strings.Contains(screen(t, m), `Unknown agent "genius"`) {
		t.Fatalf("agent = %s", m.agentName)
	}
	typeIn("/theme light")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.themeName != "light" {
		t.Fatalf("theme = %s", m.themeName)
	}
	typeIn("/frobnicate")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if !strings.Contains(screen(t, m), "Unknown command /frobnicate") {
		t.Fatal("unknown command not reported")
	}
	// History: up brings back the previous prompt.
	m.Update(tea.KeyMsg{Type: tea.KeyUp})
	if v := m.input.value(); v != "/frobnicate" {
		t.Fatalf("history up gave %q", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if v := m.input.value(); v != "" {
		t.Fatalf("history down gave %q", v)
	}
}

func TestQuitNeedsCtrlCTwiceAndEscCancels(t *testing.T) {
	m := newTestModel(t, 100, 30)
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); cmd == nil || !strings.Contains(screen(t, m), "press ctrl+c again") {
		t.Fatal("first ctrl+c must arm quitting and say so")
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("second ctrl+c must quit")
	}
	m2 := newTestModel(t, 100, 30)
	fakeRun(m2, "long question")
	cancelled := false
	m2.run.cancel = func() { cancelled = true }
	m2.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if !cancelled || !strings.Contains(screen(t, m2), "cancelling") {
		t.Fatal("esc did not cancel the running turn")
	}
}

func TestScrollingLeavesAndResumesFollowMode(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "long")
	feed(m, tok(run, strings.Repeat("line\n", 200)))
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	if m.transcript.follow {
		t.Fatal("page up must leave follow mode")
	}
	before := m.transcript.view(m.renderCtx(m.transcriptWidth()))
	feed(m, tok(run, strings.Repeat("more\n", 50)))
	screen(t, m)
	if after := m.transcript.view(m.renderCtx(m.transcriptWidth())); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatal("new content moved a scrolled-up view")
	}
	if !strings.Contains(screen(t, m), "scrolled") {
		t.Fatal("the status bar does not say the view is scrolled")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnd})
	if !m.transcript.follow {
		t.Fatal("end must resume follow mode")
	}
	m.Update(tea.MouseMsg{Button: tea.MouseButtonWheelUp})
	if m.transcript.follow {
		t.Fatal("wheel up must leave follow mode")
	}
}
