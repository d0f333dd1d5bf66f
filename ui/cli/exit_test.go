package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// SIGTERM stops jarvis with 143, ctrl+c with 130, as shells report them;
// ask --json says which.
func TestSignalsExitAsShellsReportThem(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	srv.Default(et.Hang())
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		word string
	}{{syscall.SIGTERM, 143, "terminated"}, {syscall.SIGINT, 130, "interrupted"}} {
		before := len(srv.Chats())
		cmd := jarvisCommand(t, "--host", srv.URL, "ask", "--json", "--model", "qwen3:8b", "--tools", "none", "wait for it")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for len(srv.Chats()) == before {
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(c.sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			t.Fatalf("%v: %v, want exit %d; stderr %q", c.sig, err, c.code, errb.String())
		}
		var res struct{ Error string }
		if json.Unmarshal(out.Bytes(), &res); res.Error != c.word || !strings.Contains(errb.String(), "jarvis: "+c.word) {
			t.Fatalf("%v: JSON %s, stderr %q", c.sig, out.String(), errb.String())
		}
	}
}

// A run stopped by a signal ends with the signal's status also when the
// command reports the stop itself.
func TestStopCauseGivesTheStatus(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalled(syscall.SIGTERM))
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"ask", "--host", ot.ClosedURL(t), "--model", "m", "hi"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 143 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// Input on stdin past ask's limit is refused with the limit named.
func TestAskSaysTheLimitOfStdin(t *testing.T) {
	_, errOut, code := runCLI(t, strings.Repeat("a", maxPiped+1), "ask", "--host", ot.ClosedURL(t), "--model", "m", "hi")
	if code != ExitUsage || !strings.Contains(errOut, "the input on stdin is larger than 1 MiB") {
		t.Fatalf("exit %d err %q", code, errOut)
	}
}
