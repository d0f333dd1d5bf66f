package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/internal/jarvisbin"
)

// These tests run the built jarvis the way a person does: in a terminal
// (a pseudo-terminal whose output a terminal emulator interprets), or with
// stdout into a pipe, against the fake Ollama server playing
// testdata/hostile.json, whose reply holds a screen clear, a window title,
// a clipboard write (OSC 52), an 8-bit CSI and a bare carriage return,
// split between chunks.

// hostileReply is the reply the script streams, joined.
const hostileReply = "Safe start. \x1b[2J\x1b[Htitle\x1b]0;pwned\a clip\x1b]52;c;aGFja2Vk\a c1\u009b31m over\rXX safe end.\n"

// hostileVisible is what a terminal must show of it.
const hostileVisible = "Safe start. title clip c131m overXX safe end."

// buildJarvis builds the binary once per test run (not in -short).
func buildJarvis(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	return jarvisbin.Path(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	jarvisbin.Remove()
	os.Exit(code)
}

func hostileServer(t *testing.T) *ot.Server {
	t.Helper()
	sc, err := ot.LoadScript(filepath.Join("testdata", "hostile.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := ot.New(t)
	srv.Use(sc)
	return srv
}

// jarvisCommand is the built jarvis with a clean environment of its own.
func jarvisCommand(t testing.TB, args ...string) *exec.Cmd {
	home := t.TempDir()
	cmd := exec.Command(buildJarvis(t), args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
	}
	return cmd
}

// terminalRun is what a command put on a terminal: the bytes as they came,
// the screen an emulator made of them, and what the emulator was told to
// do besides drawing.
type terminalRun struct {
	raw    []byte
	screen string
	titles []string
	bells  int
}

// runInTerminal runs jarvis with stdin, stdout and stderr on one
// pseudo-terminal and returns once it has exited.
func runInTerminal(t *testing.T, args ...string) terminalRun {
	t.Helper()
	cmd := jarvisCommand(t, args...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 160, Rows: 30})
	if err != nil {
		t.Skipf("no pseudo-terminal available: %v", err)
	}
	defer ptmx.Close()
	var run terminalRun
	var mu sync.Mutex // the emulator's callbacks run inside Write
	var raw bytes.Buffer
	emu := vt.NewEmulator(160, 30)
	emu.SetCallbacks(vt.Callbacks{
		Title: func(s string) { run.titles = append(run.titles, s) },
		Bell:  func() { run.bells++ },
	})
	// The emulator answers the terminal queries a program makes, like a
	// real terminal, so nothing waits for an answer that never comes.
	go io.Copy(ptmx, emu)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32*1024)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				mu.Lock()
				raw.Write(buf[:n])
				emu.Write(buf[:n])
				mu.Unlock()
			}
			if err != nil { // EIO once jarvis has exited
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("jarvis: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("jarvis %v did not finish; it wrote %q", args, raw.Bytes())
	}
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end after jarvis exited")
	}
	mu.Lock()
	defer mu.Unlock()
	run.raw = raw.Bytes()
	run.screen = emu.String()
	return run
}

// jarvisSequences are the only sequences jarvis itself writes in headless
// commands: the colours of its tool lines, notes and usage line, and the
// question for the background colour (OSC 11) and the cursor position that
// Bubble Tea's initialisation asks every terminal at start.
var jarvisSequences = regexp.MustCompile(`\x1b\[(0|2|31|32|33)m|\x1b\]11;\?\x1b\\|\x1b\[6n`)

// assertNothingButText fails when the bytes that reached the terminal hold
// anything a terminal acts on other than jarvis's own sequences and line ends
// (the terminal turns each newline into CR LF).
func (r terminalRun) assertNothingButText(t *testing.T) {
	t.Helper()
	rest := strings.ReplaceAll(jarvisSequences.ReplaceAllString(string(r.raw), ""), "\r\n", "\n")
	for i, c := range []byte(rest) {
		if c < 0x20 && c != '\n' || c == 0x7f || c == 0xc2 && i+1 < len(rest) && rest[i+1] < 0xa0 {
			t.Fatalf("the terminal received control byte %#x at %d: %q", c, i, rest)
		}
	}
	if len(r.titles) > 0 || r.bells > 0 {
		t.Fatalf("the terminal was told to set its title to %q and to ring %d times", r.titles, r.bells)
	}
}

func TestAskOnATerminalShowsTheTextAndNothingElse(t *testing.T) {
	srv := hostileServer(t)
	run := runInTerminal(t, "--host", srv.URL, "ask", "--model", "qwen3:8b", "--tools", "none", "be hostile")
	run.assertNothingButText(t)
	// A clear would have wiped "Safe start.", a carriage return put XX over
	// "ov", an 8-bit CSI eaten "31m".
	for _, want := range []string{hostileVisible, "Σ 1 turn · ", " tok/s · ", " · $0.0000"} {
		if !strings.Contains(run.screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, run.screen)
		}
	}
	if t.Failed() {
		t.Logf("raw: %q", run.raw)
	}
}

func TestToolsRunOnATerminalShowsTheTextAndNothingElse(t *testing.T) {
	args, err := json.Marshal(map[string]string{"thought": hostileReply})
	if err != nil {
		t.Fatal(err)
	}
	run := runInTerminal(t, "tools", "run", "think", string(args))
	run.assertNothingButText(t)
	for _, want := range []string{
		"→ think ",                         // the call, its arguments as JSON (ESC escaped, C1 removed)
		"✓ think ", " → " + hostileVisible, // its end, with the result's preview
		"\n" + hostileVisible + "\n", // the result on stdout
	} {
		if !strings.Contains(run.screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, run.screen)
		}
	}
	if t.Failed() {
		t.Logf("raw: %q", run.raw)
	}
}

func TestAskIntoAPipePassesTheTextThrough(t *testing.T) {
	srv := hostileServer(t)
	cmd := jarvisCommand(t, "--host", srv.URL, "ask", "--model", "qwen3:8b", "--tools", "none", "be hostile")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.Bytes())
	}
	if string(out) != hostileReply {
		t.Fatalf("stdout = %q, want the reply byte for byte: %q", out, hostileReply)
	}
	// Without a terminal on stderr there is no usage line.
	if stderr.Len() != 0 {
		t.Fatalf("stderr = %q, want nothing", stderr.Bytes())
	}

	cmd = jarvisCommand(t, "--host", srv.URL, "ask", "--json", "--model", "qwen3:8b", "--tools", "none", "be hostile")
	out, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Content string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Content != hostileReply {
		t.Fatalf("content = %q, want %q", res.Content, hostileReply)
	}
	for _, escaped := range []string{`\u001b[2J`, `\u001b]52;c;`, `\u0007`, `\u009b31m`, `over\rXX`} {
		if !bytes.Contains(out, []byte(escaped)) {
			t.Errorf("the JSON lacks %s:\n%s", escaped, out)
		}
	}
	if i := bytes.IndexAny(out, "\x1b\a\r\u009b"); i >= 0 {
		t.Fatalf("the JSON holds a raw control at %d: %q", i, out)
	}
}
