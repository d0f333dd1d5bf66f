package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

func TestMemoryForgetDirectory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	sibling := dir + "-old" // shares the directory's name as a prefix
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sibling, "old.md"), []byte("Old notes about the move."), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, sibling} {
		if _, errOut, code := mem(t, db, "index", d); code != ExitOK {
			t.Fatalf("index %s: %q", d, errOut)
		}
	}
	out, errOut, code := mem(t, db, "forget", "--source", dir)
	if code != ExitOK || out != "Forgot 2 documents (2 sources) under "+dir+".\n" {
		t.Fatalf("forget --source DIR: %d %q %q", code, out, errOut)
	}
	if out, _, _ = mem(t, db, "list"); !strings.Contains(out, filepath.Join(sibling, "old.md")) || strings.Contains(out, filepath.Join(dir, "todo.md")) {
		t.Errorf("list after forgetting the directory: %q", out)
	}
	if _, errOut, code = mem(t, db, "forget", "--source", dir); code != ExitFailed || !strings.Contains(errOut, "nor indexed under it") {
		t.Errorf("forgetting it again: %d %q", code, errOut)
	}
}

func TestMemoryIndexSkipsCredentialStores(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := memTree(t)
	for rel, content := range map[string]string{".docker/config.json": `{"auths":{}}`, ".bash_history": "export TOKEN=x"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code := mem(t, db, "index", dir)
	if code != ExitOK || !strings.Contains(out, filepath.Join(dir, ".docker", "config.json")+" (sensitive file (holds container registry credentials))") ||
		!strings.Contains(out, filepath.Join(dir, ".bash_history")+" (sensitive file (holds a command history))") {
		t.Errorf("index: %d %q", code, out)
	}
}

func TestMemoryIndexMaxFileSize(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("finches ", 256)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := mem(t, db, "index", big, "--max-file-size", "1KiB")
	if code != ExitFailed || !strings.Contains(errOut, "cannot index "+big+": too large (2048 bytes, max 1024)") {
		t.Errorf("--max-file-size 1KiB: %d %q %q", code, out, errOut)
	}
	if out, errOut, code = mem(t, db, "index", big, "--max-file-size", "4kB"); code != ExitOK || !strings.HasPrefix(out, "Indexed 1 chunks") {
		t.Errorf("--max-file-size 4kB: %d %q %q", code, out, errOut)
	}
	for _, bad := range []string{"lots", "0", "1GiB"} {
		if _, errOut, code = mem(t, db, "index", big, "--max-file-size", bad); code != ExitUsage || !strings.Contains(errOut, "--max-file-size") {
			t.Errorf("--max-file-size %s: %d %q", bad, code, errOut)
		}
	}

	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[memory]\nmax_file_bytes = 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = runCLI(t, "", "--config", cfg, "--db", db, "memory", "index", big); code != ExitFailed || !strings.Contains(errOut, "max 1000)") {
		t.Errorf("[memory] max_file_bytes: %d %q", code, errOut)
	}
	if err := os.WriteFile(cfg, []byte("[memory]\nmax_file_bytes = -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = runCLI(t, "", "--config", cfg, "--db", db, "memory", "index", big); code != ExitUsage || !strings.Contains(errOut, `key "memory.max_file_bytes"`) {
		t.Errorf("a negative max_file_bytes: %d %q", code, errOut)
	}
}

func TestMemoryIndexReportsEmbeddingFailures(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3:8b", engine.CapCompletion, engine.CapTools)
	db := filepath.Join(t.TempDir(), "jarvis.db")
	dir := t.TempDir()
	note := filepath.Join(dir, "note.md")
	if err := os.WriteFile(note, []byte("Notes about otters and their dams."), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	// The server has no such embedding model: every embedding fails.
	if err := os.WriteFile(cfg, []byte("host = \""+srv.URL+"\"\n[memory]\nembed_model = \"no-such-embedder\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		out, errOut, code := runCLI(t, "", "--config", cfg, "--db", db, "memory", "index", dir)
		if code != ExitOK || !strings.Contains(out, "Files: 1 indexed, 0 unchanged") ||
			!strings.Contains(out, "Stored without embeddings (found by keyword search only; the next run embeds them again):\n  "+note+" (embedding with no-such-embedder failed") {
			t.Errorf("run %d: %d %q %q", i+1, code, out, errOut)
		}
	}
}
