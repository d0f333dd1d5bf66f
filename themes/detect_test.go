//go:build unix

package themes

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// childEnv makes a re-executed test binary run detectChild on its
// terminal instead of the tests.
const childEnv = "JARVIS_THEMES_DETECT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(detectChild())
	}
	os.Exit(m.Run())
}

// detectChild runs Detect on its terminal, then reports the answer and how
// many bytes of the terminal's reply were left unread in its input (they
// would reach the program as key presses).
func detectChild() int {
	bg := Detect(os.Stdout)
	left := 0
	fds := []unix.PollFd{{Fd: int32(os.Stdin.Fd()), Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 200); n > 0 {
		unix.SetNonblock(int(os.Stdin.Fd()), true)
		buf := make([]byte, 256)
		k, _ := os.Stdin.Read(buf)
		left = max(k, 0)
	}
	fmt.Printf("bg=%s left=%d\r\n", bg, left)
	return 0
}

func TestDetectCOLORFGBG(t *testing.T) {
	// Not a terminal: only the environment can tell.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv("NO_COLOR", "")
	cases := map[string]string{
		"15;0":         Dark,
		"0;15":         Light,
		"0;7":          Light,
		"15;8":         Dark,
		"12;4":         Dark,
		"0;default;15": Light,
		"7;default;0":  Dark,
		"0;255":        Light, // 256-colour white
		"15;234":       Dark,  // 256-colour dark grey
		"15;default":   Dark,  // says nothing: the default
		"nonsense":     Dark,
		"":             Dark,
	}
	for v, want := range cases {
		t.Setenv("COLORFGBG", v)
		if got := Detect(f); got != want {
			t.Errorf("COLORFGBG=%q: Detect = %s, want %s", v, got, want)
		}
		if th, _ := Get(Auto); th.Name != want {
			t.Errorf("COLORFGBG=%q: Get(auto) = %s after Detect", v, th.Name)
		}
	}
	// NO_COLOR does not hide what COLORFGBG says.
	t.Setenv("NO_COLOR", "1")
	t.Setenv("COLORFGBG", "0;15")
	if got := Detect(f); got != Light {
		t.Errorf("NO_COLOR with COLORFGBG=0;15: %s", got)
	}
	if got := Detect(nil); got != Light {
		t.Errorf("nil output with COLORFGBG=0;15: %s", got)
	}
	detected.Store("")
}

// runDetectChild starts the test binary on a new pseudo-terminal (its
// controlling terminal) with env added, answers a background query with
// reply, and returns the child's report and whether it asked.
func runDetectChild(t *testing.T, env []string, reply string) (report string, asked bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "CI", "COLORFGBG", "NO_COLOR", "TERM", childEnv:
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, append(env, childEnv+"=1", "TERM=xterm-256color")...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
		}
	}()
	r := bufio.NewReader(tty)
	var seen strings.Builder
	for {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("child output ended: %v; got %q", err, seen.String())
		}
		seen.WriteByte(b)
		s := seen.String()
		// termenv asks for the background (OSC 11) and then the cursor
		// position, which every terminal answers.
		if strings.HasSuffix(s, "\x1b[6n") {
			asked = strings.Contains(s, "\x1b]11;?")
			tty.WriteString(reply + "\x1b[1;1R")
		}
		if i := strings.Index(s, "bg="); i >= 0 && strings.HasSuffix(s, "\r\n") {
			report = strings.TrimSpace(s[i:])
			break
		}
	}
	cmd.Wait()
	return report, asked
}

// TestDetectAsksTheTerminal runs Detect on a real pseudo-terminal that
// answers like xterm, and checks that the answer is read whole, leaving
// nothing in the input for the program.
func TestDetectAsksTheTerminal(t *testing.T) {
	for reply, want := range map[string]string{
		"\x1b]11;rgb:ffff/ffff/ffff\x1b\\": "bg=light left=0",
		"\x1b]11;rgb:1e1e/1e1e/1e1e\x07":   "bg=dark left=0",
	} {
		got, asked := runDetectChild(t, nil, reply)
		if !asked || got != want {
			t.Errorf("terminal answering %q: asked %v, report %q, want %q", reply, asked, got, want)
		}
	}
}

func TestDetectDoesNotAskWithNO_COLOR(t *testing.T) {
	got, asked := runDetectChild(t, []string{"NO_COLOR=1"}, "")
	if asked || got != "bg=dark left=0" {
		t.Errorf("NO_COLOR: asked %v, report %q", asked, got)
	}
	got, asked = runDetectChild(t, []string{"COLORFGBG=0;15"}, "")
	if asked || got != "bg=light left=0" {
		t.Errorf("COLORFGBG: asked %v, report %q", asked, got)
	}
}
