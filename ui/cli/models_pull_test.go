package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// pullServer has qwen3:8b and offers two models for download: llama3.2
// (two layers) and broken, whose download fails after it starts.
func pullServer(t *testing.T) *ot.Server {
	t.Helper()
	srv := fakeOllama(t)
	srv.Pullable(ot.ModelSpec{Name: "llama3.2", Capabilities: []string{"completion", "tools"}},
		ot.PullSpec{Layers: []int64{2_000_000_000, 500_000}, Steps: 8})
	srv.Pullable(ot.ModelSpec{Name: "broken"}, ot.PullSpec{Error: "max retries exceeded: EOF"})
	return srv
}

func TestPullIntoAPipeWritesPlainLines(t *testing.T) {
	srv := pullServer(t)
	out, errOut, code := runCLI(t, "", "models", "pull", "llama3.2", "--host", srv.URL)
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	first, second := lines[1][:len("pulling ")+12], ""
	for _, l := range lines {
		if strings.HasPrefix(l, "pulling ") && !strings.HasPrefix(l, first) && l != "pulling manifest" {
			second = l[:len("pulling ")+12]
			break
		}
	}
	want := []string{
		"pulling manifest",
		first + "   0% 0 B/2.0 GB",
		first + "  25% 500 MB/2.0 GB",
		first + "  50% 1.0 GB/2.0 GB",
		first + "  75% 1.5 GB/2.0 GB",
		first + " 100% 2.0 GB/2.0 GB",
		second + "   0% 0 B/500 kB",
		second + "  25% 125 kB/500 kB",
		second + "  50% 250 kB/500 kB",
		second + "  75% 375 kB/500 kB",
		second + " 100% 500 kB/500 kB",
		"verifying sha256 digest",
		"writing manifest",
		"success",
		"llama3.2 is on the server (2.0 GB,",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), errOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want %q…", i, lines[i], w)
		}
	}
	if strings.ContainsAny(errOut, "\r\x1b") {
		t.Fatalf("a pipe got terminal sequences: %q", errOut)
	}
	// The model is there now, and chats.
	out, _, code = runCLI(t, "", "models", "--host", srv.URL)
	if code != ExitOK || !strings.Contains(out, "llama3.2:latest") {
		t.Fatalf("models after the pull: %s", out)
	}
}

func TestPullErrorsAreTheServersOwn(t *testing.T) {
	srv := pullServer(t)
	_, errOut, code := runCLI(t, "", "models", "pull", "no-such-model", "--host", srv.URL)
	if code != ExitFailed || !strings.Contains(errOut, "jarvis: the server could not pull no-such-model: pull model manifest: file does not exist\n") {
		t.Fatalf("unknown name: exit %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "models", "pull", "broken", "--host", srv.URL)
	if code != ExitFailed || !strings.Contains(errOut, "jarvis: the server could not pull broken: max retries exceeded: EOF\n") {
		t.Fatalf("failed download: exit %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "models", "pull", "qwen3", "--host", ot.ClosedURL(t))
	if code != ExitFailed || !strings.Contains(errOut, "ollama serve") {
		t.Fatalf("server down: exit %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "models", "pull", "--host", srv.URL)
	if code != ExitUsage || !strings.Contains(errOut, "Usage: jarvis models pull NAME") {
		t.Fatalf("no name: exit %d %q", code, errOut)
	}
}

func TestPullInterruptedExits130AndTheServerKeepsWhatItHas(t *testing.T) {
	srv := fakeOllama(t)
	srv.Pullable(ot.ModelSpec{Name: "big"}, ot.PullSpec{Layers: []int64{4_000_000_000}, Steps: 100, Interval: 20 * time.Millisecond})
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errw := &cancelOn{mark: " 25% ", cancel: cancel} // ctrl+c a quarter of the way
	code := run(ctx, []string{"models", "pull", "big", "--host", srv.URL}, IO{In: strings.NewReader(""), Out: &out, Err: errw})
	if code != exitSignal {
		t.Fatalf("exit %d\n%s", code, errw.String())
	}
	if !strings.Contains(errw.String(), "jarvis: the download stopped after 1.0 GB of 4.0 GB; the server keeps what it has, and 'jarvis models pull big' resumes it.") ||
		!strings.HasSuffix(errw.String(), "jarvis: interrupted\n") {
		t.Fatalf("stderr:\n%s", errw.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var cancelled bool
		for _, r := range srv.Requests() {
			cancelled = cancelled || r.PullCancelled
		}
		if cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not see the download stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, _, code := runCLI(t, "", "models", "show", "big", "--host", srv.URL); code != ExitFailed {
		t.Fatal("an interrupted download left the model in place")
	}
}

func TestModelsPsShowAndUnload(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{"completion", "tools", "thinking"}, Size: 5_200_000_000,
		Family: "qwen3", ParameterSize: "8.2B", Quantization: "Q4_K_M", ContextLength: 40960,
		Parameters: map[string]any{"temperature": 0.6, "top_k": 20}})
	srv.Default(et.Text("ok"))
	out, errOut, code := runCLI(t, "", "models", "ps", "--host", srv.URL)
	if code != ExitOK || !strings.Contains(out, "No model is loaded on the server at "+srv.URL) {
		t.Fatalf("ps before a request: exit %d %q %q", code, out, errOut)
	}
	if out, _, _ := runCLI(t, "", "models", "unload", "qwen3:8b", "--host", srv.URL); !strings.Contains(out, "qwen3:8b is not loaded; nothing to free.") {
		t.Fatalf("unload of a model not loaded: %q", out)
	}
	if _, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "qwen3:8b", "--num-ctx", "8192", "hi"); code != ExitOK {
		t.Fatalf("ask: %s", errOut)
	}
	out, _, code = runCLI(t, "", "models", "ps", "--host", srv.URL)
	if code != ExitOK || !strings.Contains(out, "NAME") || !strings.Contains(out, "qwen3:8b") || !strings.Contains(out, "8,192 tokens") || !strings.Contains(out, " (in ") {
		t.Fatalf("ps: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "", "models", "ps", "--json", "--host", srv.URL)
	var ps []engine.LoadedModel
	if err := json.Unmarshal([]byte(out), &ps); err != nil || len(ps) != 1 || ps[0].ContextLength != 8192 || ps[0].SizeBytes <= 5_200_000_000 || ps[0].VRAMBytes == 0 || ps[0].ExpiresAt.IsZero() {
		t.Fatalf("ps --json: %v %s", err, out)
	}
	out, _, code = runCLI(t, "", "models", "show", "qwen3:8b", "--host", srv.URL)
	for _, want := range []string{"Capabilities  completion, tools, thinking", "Context       40,960 tokens (the model's maximum", "Parameters    8.2B",
		"Quantization  Q4_K_M", "Loaded        yes:", "window 8,192 tokens", "Default parameters:", "temperature 0.6", "Chat template:"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	if code != ExitOK || t.Failed() {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "", "models", "show", "--json", "qwen3:8b", "--host", srv.URL)
	var shown struct {
		Name          string   `json:"name"`
		Capabilities  []string `json:"capabilities"`
		ContextLength int      `json:"context_length"`
		Template      string   `json:"template"`
		Loaded        *struct {
			ContextLength int `json:"context_length"`
		} `json:"loaded"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.ContextLength != 40960 || shown.Template == "" || shown.Loaded == nil || shown.Loaded.ContextLength != 8192 {
		t.Fatalf("show --json: %v %s", err, out)
	}
	if _, errOut, code := runCLI(t, "", "models", "show", "absent", "--host", srv.URL); code != ExitFailed || !strings.Contains(errOut, `model "absent" is not available`) {
		t.Fatalf("show absent: exit %d %q", code, errOut)
	}
	out, _, code = runCLI(t, "", "models", "unload", "--host", srv.URL, "--model", "qwen3:8b")
	if code != ExitOK || !strings.Contains(out, "Unloaded qwen3:8b: the server freed its memory") {
		t.Fatalf("unload: exit %d %q", code, out)
	}
	if out, _, _ := runCLI(t, "", "models", "ps", "--host", srv.URL); !strings.Contains(out, "No model is loaded") {
		t.Fatalf("ps after unload: %s", out)
	}
	var unloaded bool
	for _, r := range srv.Requests() {
		unloaded = unloaded || r.Unloaded && r.KeepAlive != nil && r.KeepAlive.Duration == 0
	}
	if !unloaded {
		t.Fatal("no keep_alive 0 request reached the server")
	}
	if _, errOut, code := runCLI(t, "", "models", "unload", "--host", srv.URL); code != ExitUsage || !strings.Contains(errOut, "no model given") {
		t.Fatalf("unload without a model: exit %d %q", code, errOut)
	}
}
