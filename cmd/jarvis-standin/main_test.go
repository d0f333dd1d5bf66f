package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logFile is the command's stderr: a file, which the server's goroutines
// may write while the test reads it.
type logFile struct{ *os.File }

func (l logFile) String() string {
	b, _ := os.ReadFile(l.Name())
	return string(b)
}

// start runs the command until the test ends and returns its URL and its
// log.
func start(t *testing.T, args ...string) (string, logFile) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	errb := logFile{f}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, outW, errb)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit code %d; stderr %q", code, errb.String())
		}
	})
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v (stderr %q)", err, errb.String())
	}
	return strings.TrimSpace(url), errb
}

func waitForLog(t *testing.T, log logFile, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", want, log.String())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestServesTheOllamaWindowRulesAndLogsThem(t *testing.T) {
	url, log := start(t, "--script", "../../engine/ollama/ollamatest/testdata/small-window.json", "--addr", "127.0.0.1:0", "--context-length", "1024")
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
	waitForLog(t, log, "SILENT CUT (2 messages")
	if !strings.Contains(log.String(), "POST /api/chat -> 200 model=tinyj load num_ctx=1024 prompt=12") {
		t.Errorf("log = %q", log.String())
	}
}

func TestServesAnOpenAICompatibleScript(t *testing.T) {
	url, log := start(t, "--script", "../../engine/openai/openaitest/testdata/llama-server.json", "--addr", "127.0.0.1:0")
	resp, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	props, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(props), `"n_ctx":8192`) {
		t.Errorf("/props: %s", props)
	}
	resp, err = http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"qwen3-8b","messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(answer), `"object":"chat.completion"`) {
		t.Errorf("%d %s", resp.StatusCode, answer)
	}
	waitForLog(t, log, "POST /v1/chat/completions -> 200 model=qwen3-8b by rule")
}

func TestBadUse(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "--script FILE is required"},
		{[]string{"--script", "x.json", "--context-length", "-1"}, "--context-length must be a positive number"},
		{[]string{"--script", "no-such-script.json"}, "no-such-script.json"},
		{[]string{"--script", "../../engine/ollama/ollamatest/testdata/demo.json", "extra"}, "takes no arguments"},
		{[]string{"--script", "../../engine/openai/openaitest/testdata/llama-server.json", "--context-length", "2048"}, `its models' "window" in the script`},
		{[]string{"--no-such-flag"}, "flag provided but not defined"},
	} {
		var errb bytes.Buffer
		if code := run(context.Background(), c.args, io.Discard, &errb); code != exitUsage || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errb.String())
		}
	}
}
