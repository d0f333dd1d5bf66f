package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// An embedding model is refused before anything is sent.
func TestAskRefusesAnEmbeddingModel(t *testing.T) {
	srv := ot.New(t)
	srv.Model("nomic-embed-text", engine.CapEmbedding)
	srv.Default(et.Text("never"))
	_, errOut, code := runCLI(t, "", "ask", "--host", srv.URL, "--model", "nomic-embed-text", "hi")
	if code != ExitFailed || !strings.Contains(errOut, `"nomic-embed-text" is an embedding model`) || strings.Contains(errOut, "react") || len(srv.Chats()) != 0 {
		t.Fatalf("exit %d err %q, %d chats", code, errOut, len(srv.Chats()))
	}
}

// The Ollama engine pointed at an OpenAI-compatible address says which
// engine speaks it.
func TestOllamaEngineAtASlashV1AddressSaysUseOpenAI(t *testing.T) {
	srv := fakeOllama(t)
	_, errOut, code := runCLI(t, "", "ask", "--host", srv.URL+"/v1", "--model", "qwen3:8b", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "Use --engine openai for it") {
		t.Fatalf("exit %d err %q", code, errOut)
	}
}

// An endpoint that does not answer is named, with the endpoint's fix,
// not the default server's --host.
func TestDownEndpointIsNamedWithItsFix(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.toml")
	body := fmt.Sprintf("[[endpoints]]\nname = \"lab\"\nengine = \"ollama\"\nhost = %q\n", ot.ClosedURL(t))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "", "ask", "--config", cfg, "--model", "lab/qwen3", "hi")
	if code != ExitFailed || !strings.Contains(errOut, "endpoint lab: cannot reach Ollama") ||
		!strings.Contains(errOut, "correct the host of endpoint lab (config "+cfg+":1)") || strings.Contains(errOut, "--host") {
		t.Fatalf("exit %d err %q", code, errOut)
	}
}
