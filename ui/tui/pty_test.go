package tui_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/internal/jarvisbin"
)

// terminal is the built jarvis running in a pseudo-terminal, its output
// interpreted by a terminal emulator so tests read the screen a person
// would see.
type terminal struct {
	t    testing.TB
	ptmx *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	emu  *vt.Emulator
	done chan struct{}
	// bytes counts what the program wrote.
	bytes int
}

func buildJarvis(t testing.TB) string { return jarvisbin.Path(t) }

func startTerminal(t testing.TB, cols, rows int, args ...string) *terminal {
	t.Helper()
	return startTerminalIn(t, t.TempDir(), nil, cols, rows, args...)
}

// startTerminalIn runs jarvis with home as its home directory (where its
// config and database live, so a second start finds the first one's
// sessions) and env added to its environment.
func startTerminalIn(t testing.TB, home string, env []string, cols, rows int, args ...string) *terminal {
	t.Helper()
	return startTerminalAt(t, home, "", env, cols, rows, args...)
}

// startTerminalAt is startTerminalIn with jarvis started in the working
// directory dir ("" for the test's).
func startTerminalAt(t testing.TB, home, dir string, env []string, cols, rows int, args ...string) *terminal {
	t.Helper()
	bin := buildJarvis(t)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"JARVIS_THEME=dark",
	}, env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Skipf("no pseudo-terminal available: %v", err)
	}
	term := &terminal{t: t, ptmx: ptmx, cmd: cmd, emu: vt.NewEmulator(cols, rows), done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 64*1024)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				term.mu.Lock()
				term.emu.Write(buf[:n])
				term.bytes += n
				term.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	// The emulator answers the program's terminal queries (cursor
	// position, colours) like a real terminal would.
	go io.Copy(ptmx, term.emu)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
		// The emulator is not closed: its Close races with the Read blocked
		// in the forwarding goroutine, which simply ends with the test.
	})
	return term
}

func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.emu.String()
}

// waitFor waits until the screen contains every want, or fails with the
// screen as it is.
func (term *terminal) waitFor(timeout time.Duration, want ...string) string {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := term.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("screen never showed %q within %s:\n%s", missing, timeout, s)
		}
		// Short polls: the benchmarks time how fast things appear.
		time.Sleep(2 * time.Millisecond)
	}
}

// waitUntil waits until ok holds for the screen, or fails with the screen
// as it is.
func (term *terminal) waitUntil(timeout time.Duration, what string, ok func(screen string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := term.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %s within %s:\n%s", what, timeout, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (term *terminal) typeText(s string) {
	term.t.Helper()
	if _, err := term.ptmx.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

func TestEndToEndInPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.On(et.UserSays("15% of 340")).Reply(et.ToolCall("calculator", `{"expression":"15/100*340"}`))
	srv.On(et.ToolResult("calculator")).Reply(et.ToolCall("code_interpreter", `{"code":"print(340*0.15)"}`))
	srv.On(et.ToolResultContains("code_interpreter", "denied")).Reply(et.TextChunks("15% of 340 is ", "**51**. ", "I could not double-check it in Python because you denied the call."))

	term := startTerminal(t, 120, 40, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator,code_interpreter")
	term.waitFor(10*time.Second, "qwen3:8b", "Ask anything")
	term.typeText("What is 15% of 340?")
	term.typeText("\r")

	term.waitFor(10*time.Second, "Allow code_interpreter?", "print(340*0.15)", "[d/esc] deny")
	// Keys typed straight after the question are typing; answer as a
	// person who read the dialog does.
	pastGrace()
	term.typeText("d")

	s := term.waitFor(10*time.Second, "I could not double-check it", "ready")
	for _, want := range []string{
		"✓ calculator", "→ 51.0", // the calculator panel and its result
		"⊘ code_interpreter", "denied", // the denied call
		"15% of 340 is 51.",       // the final answer, rendered
		"2 tool calls",            // status bar totals
		"in · ", " out · $0.0000", // tokens and cost in the status bar
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	// The calculator panel shows its measured latency (µs or ms).
	if !strings.Contains(s, "µs · $0.0000") && !strings.Contains(s, "ms · $0.0000") {
		t.Errorf("no latency on the calculator panel")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("screen:\n%s", s)
	}

	// ctrl+c twice on an idle prompt quits.
	term.typeText("\x03")
	term.waitFor(5*time.Second, "press ctrl+c again to quit")
	term.typeText("\x03")
	select {
	case <-term.done:
	case <-time.After(10 * time.Second):
		t.Fatal("jarvis did not quit after ctrl+c twice")
	}
	if err := term.cmd.Wait(); err != nil {
		t.Fatalf("jarvis exited with %v", err)
	}
	// The session was saved as it went.
	if !bytes.Contains([]byte(s), []byte("What is 15% of 340?")) {
		t.Fatal("the question is not on screen")
	}
}

// quit leaves jarvis with ctrl+c twice and checks it ended cleanly.
func (term *terminal) quit() {
	term.t.Helper()
	term.typeText("\x03")
	term.waitFor(5*time.Second, "press ctrl+c again to quit")
	term.typeText("\x03")
	select {
	case <-term.done:
	case <-time.After(15 * time.Second):
		term.t.Fatal("jarvis did not quit after ctrl+c twice")
	}
	if err := term.cmd.Wait(); err != nil {
		term.t.Fatalf("jarvis exited with %v", err)
	}
}

// asT lets benchmarks share the terminal helpers.
func asT(b *testing.B) testing.TB { return b }
