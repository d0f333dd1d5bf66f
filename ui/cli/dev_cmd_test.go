package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the server's goroutines may write to
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDevFakeOllamaServesTheWindowRulesAndLogsThem(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"dev", "fake-ollama", "--script", "../../engine/ollama/ollamatest/testdata/small-window.json", "--addr", "127.0.0.1:0", "--context-length", "1024"},
			IO{In: strings.NewReader(""), Out: outW, Err: &errb})
		outW.Close()
	}()
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v (stderr %q)", err, errb.String())
	}
	url = strings.TrimSpace(url)

	// The note's conversation on the script's 2,048-token model, with
	// the window lowered to 1,024 by the flag: cut silently, and logged.
	body := `{"model":"tinyj","stream":false,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"` +
		strings.Repeat("word ", 3000) + `"},{"role":"user","content":"second question"}]}`
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(answer), `"prompt_eval_count":12`) {
		t.Errorf("%d %s", resp.StatusCode, answer)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "SILENT CUT (2 messages") {
		if time.Now().After(deadline) {
			t.Fatalf("log = %q", errb.String())
		}
		time.Sleep(time.Millisecond)
	}
	if log := errb.String(); !strings.Contains(log, "POST /api/chat -> 200 model=tinyj load num_ctx=1024 prompt=12") {
		t.Errorf("log = %q", log)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit code %d", code)
	}
}

func TestDevFakeOllamaBadUse(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"dev", "fake-ollama"}, "--script FILE is required"},
		{[]string{"dev", "fake-ollama", "--script", "x.json", "--context-length", "-1"}, "--context-length must be a positive number"},
		{[]string{"dev", "fake-ollama", "--script", "no-such-script.json"}, "no-such-script.json"},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, "", c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
	}
}
