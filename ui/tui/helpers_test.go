package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/internal/jarvisbin"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) {
	// Golden files hold plain text: no colour codes, whatever the terminal.
	lipgloss.SetColorProfile(termenv.Ascii)
	code := m.Run()
	jarvisbin.Remove()
	os.Exit(code)
}

// stubEngine is an engine that is never reached: model-level tests feed
// events directly.
type stubEngine struct{ engine.InferenceEngine }

func (stubEngine) Host() string { return "http://127.0.0.1:11434" }

var testTime = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// newTestModel builds a model at a fixed size and time.
func newTestModel(t testing.TB, width, height int) *model {
	t.Helper()
	cfg, err := config.Load(config.Flags{ConfigPath: writeEmptyConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = "qwen3:8b"
	reg := builtin.Registry(builtin.Deps{})
	m, err := newModel(context.Background(), Options{
		Config: cfg, Engine: stubEngine{}, Registry: reg, Theme: "dark", Bus: events.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return testTime }
	m.releaseAfter = 0 // no timers behind the commands tests inspect
	m.server = serverState{checked: true, online: true, version: "0.17.4"}
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return m
}

func writeEmptyConfig(t testing.TB) string {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, nil, 0o644)
	return p
}

// fakeRun puts the model in the state of a run started for question, as
// startRun does, without an agent: the test then feeds events.
func fakeRun(m *model, question string) events.RunInfo {
	m.run.seq++
	m.run.id = "chat-test"
	m.run.active, m.run.start = true, testTime.Add(-1500*time.Millisecond)
	m.run.cancel = func() {}
	m.run.model = m.modelName
	m.run.question = &userItem{text: question}
	m.transcript.add(m.run.question)
	m.run.current = newAssistantItem()
	m.transcript.add(m.run.current)
	m.transcript.setLive(m.run.current)
	return events.RunInfo{ID: m.run.id, Agent: "orchestrator"}
}

func feed(m *model, evs ...events.Event) {
	for i := range evs {
		if evs[i].Time.IsZero() {
			evs[i].Time = testTime.Add(-time.Second)
		}
	}
	m.Update(eventsMsg(evs))
}

func tok(run events.RunInfo, s string) events.Event {
	return events.Event{Type: events.Token, Run: run, Text: s}
}

func turnEnd(run events.RunInfo, n int, content string, calls int) events.Event {
	return events.Event{Type: events.TurnEnd, Run: run, Turn: &events.TurnPayload{Turn: n, Model: "qwen3:8b", Content: content, ToolCalls: calls,
		Usage: events.Usage{PromptTokens: 120, OutputTokens: 42, TokensPerSec: 38.5, WallSeconds: 1.2}}}
}

func toolStart(run events.RunInfo, id, name string, args map[string]any, parallel int) events.Event {
	return events.Event{Type: events.ToolCallStart, Run: run, Tool: &events.ToolPayload{Tool: name, CallID: id, Arguments: args, Parallel: parallel}}
}

func toolEnd(run events.RunInfo, id, name string, args map[string]any, status tools.Status, result string, latency float64) events.Event {
	return events.Event{Type: events.ToolCallEnd, Run: run, Tool: &events.ToolPayload{Tool: name, CallID: id, Arguments: args,
		Success: status == tools.StatusOK, Status: string(status), Result: result, LatencySeconds: latency}}
}

// press sends one key by its name as Bubble Tea spells it ("ctrl+c",
// "pgdown", "a") and returns the command it gave.
func press(m *model, name string) tea.Cmd {
	var k tea.KeyMsg
	switch name {
	case "ctrl+c":
		k = tea.KeyMsg{Type: tea.KeyCtrlC}
	case "ctrl+d":
		k = tea.KeyMsg{Type: tea.KeyCtrlD}
	case "ctrl+u":
		k = tea.KeyMsg{Type: tea.KeyCtrlU}
	case "ctrl+e":
		k = tea.KeyMsg{Type: tea.KeyCtrlE}
	case "ctrl+t":
		k = tea.KeyMsg{Type: tea.KeyCtrlT}
	case "pgup":
		k = tea.KeyMsg{Type: tea.KeyPgUp}
	case "pgdown":
		k = tea.KeyMsg{Type: tea.KeyPgDown}
	case "up":
		k = tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		k = tea.KeyMsg{Type: tea.KeyDown}
	case "home":
		k = tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		k = tea.KeyMsg{Type: tea.KeyEnd}
	case "esc":
		k = tea.KeyMsg{Type: tea.KeyEsc}
	case "enter":
		k = tea.KeyMsg{Type: tea.KeyEnter}
	case "tab":
		k = tea.KeyMsg{Type: tea.KeyTab}
	case "f4":
		k = tea.KeyMsg{Type: tea.KeyF4}
	default:
		k = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)}
	}
	if k.String() != name {
		panic("key helper: " + name + " is sent as " + k.String())
	}
	_, cmd := m.Update(k)
	return cmd
}

// send types a slash command (or any line) and sends it.
func send(m *model, line string) tea.Cmd {
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(line)})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	return cmd
}

// quits reports whether cmd (batches included) asks to quit. tea.Quit
// answers at once; a command still running after a moment (a tick for a
// status message) is not a quit.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		switch msg := msg.(type) {
		case tea.QuitMsg:
			return true
		case tea.BatchMsg:
			for _, c := range msg {
				if quits(c) {
					return true
				}
			}
		}
		return false
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

// screen renders the model and checks the frame's size.
func screen(t testing.TB, m *model) string {
	t.Helper()
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != m.height {
		t.Fatalf("frame has %d lines, want %d:\n%s", len(lines), m.height, v)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > m.width {
			t.Fatalf("line %d is %d cells wide (terminal %d): %q", i, w, m.width, l)
		}
	}
	return v
}

// golden compares got with testdata/NAME.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui/tui -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("screen differs from %s (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
