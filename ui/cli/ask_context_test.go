package cli

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// ask --json says what the run took of the window, and every request
// carries the window the person set.
func TestAskJSONReportsTheContext(t *testing.T) {
	srv := fakeOllama(t)
	out, errOut, code := runCLI(t, "", "ask", "--json", "--host", srv.URL, "--model", "qwen3:8b", "--tools", "calculator", "--num-ctx", "8192", "What is 15% of 340?")
	res := decodeAsk(t, out)
	if code != ExitOK || res.Context.Window != 8192 || res.Context.PromptTokens <= 0 {
		t.Fatalf("exit %d, context %+v, stderr %q", code, res.Context, errOut)
	}
	for _, r := range srv.Requests() {
		if r.Chat != nil && r.NumCtx != 8192 {
			t.Fatalf("request %d sent num_ctx %d", r.Seq, r.NumCtx)
		}
	}
}

// A question too big for the window is refused before anything is sent:
// exit 1, and the message names the sizes and what to do.
func TestAskRefusesAMessageThatCannotFit(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tiny", Capabilities: []string{engine.CapCompletion}, ContextLength: 2048})
	huge := strings.Repeat("word ", 3100)
	out, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "tiny", "--agent", "simple", huge)
	if code != ExitFailed {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"your message is about", "tiny runs with a 2,048-token window", "--num-ctx"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr %q does not say %q", errOut, want)
		}
	}
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			t.Fatal("the request was sent")
		}
	}
}
