package cli

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// TestPullOnATerminalRedrawsOneLine runs `jarvis models pull` in a
// pseudo-terminal: the progress is one line redrawn in place (the layer,
// the total, the speed, the time left), a finished layer stays as a line
// of its own, and ctrl+c stops the download with exit status 130.
func TestPullOnATerminalRedrawsOneLine(t *testing.T) {
	srv := ot.New(t)
	srv.Pullable(ot.ModelSpec{Name: "big"}, ot.PullSpec{Layers: []int64{300_000_000, 4_000_000_000}, Steps: 400, Interval: 10 * time.Millisecond})
	cmd := jarvisCommand(t, "models", "pull", "big", "--host", srv.URL)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 20})
	if err != nil {
		t.Skipf("no pseudo-terminal available: %v", err)
	}
	defer ptmx.Close()
	var mu sync.Mutex
	var raw bytes.Buffer
	emu := vt.NewEmulator(120, 20)
	go io.Copy(ptmx, emu)
	go func() {
		buf := make([]byte, 32*1024)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				mu.Lock()
				raw.Write(buf[:n])
				emu.Write(buf[:n])
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return emu.String()
	}
	// Wait for the second layer's live line with a speed and a time left.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(screen(), "total ") || !strings.Contains(screen(), " left") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no live progress line:\n%s", screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s := screen()
	lines := nonEmptyLines(s)
	if len(lines) != 3 || lines[0] != "pulling manifest" || !strings.Contains(lines[1], " 100% 300 MB/300 MB") {
		t.Fatalf("screen:\n%s", s)
	}
	live := lines[2]
	for _, want := range []string{"pulling ", "/4.0 GB", " · total ", "/4.3 GB", "MB/s", " left"} {
		if !strings.Contains(live, want) {
			t.Fatalf("live line %q lacks %q", live, want)
		}
	}
	mu.Lock()
	redraws := bytes.Count(raw.Bytes(), []byte("\r"))
	clears := bytes.Count(raw.Bytes(), []byte("\x1b[K"))
	mu.Unlock()
	if redraws < 3 || clears < 3 {
		t.Fatalf("the line was not redrawn in place: %d carriage returns, %d clears", redraws, clears)
	}
	// A later screen shows the same line moved on, not a new line.
	time.Sleep(300 * time.Millisecond)
	if later := nonEmptyLines(screen()); len(later) != 3 || later[2] == live {
		t.Fatalf("the live line did not move on in place:\n%s", screen())
	}

	ptmx.Write([]byte{3}) // ctrl+c
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitSignal {
			t.Fatalf("jarvis ended with %v, want exit status 130", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("ctrl+c did not stop the download")
	}
	time.Sleep(100 * time.Millisecond)
	end := screen()
	if !strings.Contains(end, "the download stopped after") || !strings.Contains(end, "'jarvis models pull big' resumes") || !strings.Contains(end, "jarvis: interrupted") {
		t.Fatalf("screen after ctrl+c:\n%s", end)
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}
