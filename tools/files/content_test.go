package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// A secret is refused by what it holds, whatever its name: a key block or
// a token at the start of the file (after comments), not a document that
// quotes a key header further down.
func TestSecretContentIsRefusedByWhatItHolds(t *testing.T) {
	fakeHome(t)
	work := t.TempDir()
	t.Chdir(work)
	files := map[string]struct {
		content, holds string
	}{
		"notes.txt":     {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", "holds a private key"},
		"backup":        {"\n\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n", "holds a private key"},
		"old.asc":       {"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n", "holds a PGP private key"},
		"identity":      {"# created: 2026-01-01\n# public key: age1xyz\nAGE-SECRET-KEY-1QQQQQQQQQQQQQQQ\n", "holds an age private key"},
		"hf":            {"hf_" + strings.Repeat("a", 34) + "\n", "holds an API token"},
		"gh.txt":        {"ghp_" + strings.Repeat("B", 36), "holds an API token"},
		"openai":        {"sk-proj-" + strings.Repeat("x", 40) + "\n", "holds an API token"},
		"aws.txt":       {"AKIAIOSFODNN7EXAMPLE\n", "holds an API token"},
		"putty.txt":     {"PuTTY-User-Key-File-3: ssh-ed25519\n", "holds a private key"},
		"guide.md":      {"# Keys\n\nA key file starts with -----BEGIN RSA PRIVATE KEY-----.\n", ""},
		"hash.txt":      {"3f786850e387550fdab836ed7e6dc881de23001b\n", ""},
		"sk-notes.txt":  {"sk- is a prefix some services use\n", ""},
		"empty-ish.txt": {"\n\n# only comments\n", ""},
	}
	for name, f := range files {
		write(t, filepath.Join(work, name), f.content)
	}
	tool, _ := NewFileRead(tools.Deps{})
	var asked int
	yes := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
		asked++
		return tools.AllowOnce, nil
	})
	e, err := tools.NewExecutor([]tools.Tool{tool}, tools.ExecutorOptions{Confirmer: yes})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range files {
		r := e.Execute(context.Background(), tools.Call{Name: "file_read", Arguments: argsJSON(t, tools.Args{"path": name})})
		if f.holds == "" {
			if !r.Success {
				t.Errorf("%s was refused: %q", name, r.Content)
			}
			continue
		}
		if r.Success || r.Status != tools.StatusDenied || r.Content != "Access denied: "+name+" "+f.holds+"." {
			t.Errorf("%s: %+v, want it refused as it %s", name, r, f.holds)
		}
	}
	// Outside the working directory it is refused before anyone is asked.
	outside := t.TempDir()
	write(t, filepath.Join(outside, "k"), files["notes.txt"].content)
	r := e.Execute(context.Background(), tools.Call{Name: "file_read", Arguments: argsJSON(t, tools.Args{"path": filepath.Join(outside, "k")})})
	if r.Success || asked != 0 {
		t.Errorf("a key outside was asked about (%d) or read: %+v", asked, r)
	}
}

// A hard link to a sensitive file, made inside the working directory
// under an innocent name, is the sensitive file: refused.
func TestHardLinkToASensitiveFileIsRefused(t *testing.T) {
	home := fakeHome(t)
	work := filepath.Join(home, "project") // same file system as the home
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	for name, target := range map[string]string{
		"notes.txt":  ".ssh/id_ed25519",
		"config.txt": ".docker/config.json",
		"tok.txt":    ".cache/huggingface/token",
	} {
		if err := os.Link(filepath.Join(home, target), filepath.Join(work, name)); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
	}
	write(t, filepath.Join(work, "plain.txt"), "just notes")
	if err := os.Link(filepath.Join(work, "plain.txt"), filepath.Join(work, "plain-2.txt")); err != nil {
		t.Fatal(err)
	}
	f, _ := NewFileReadIn(nil)
	for name, holds := range map[string]string{
		"notes.txt": "holds SSH keys and configuration", "config.txt": containerReg, "tok.txt": "holds a Hugging Face token",
	} {
		if r := read(t, f, tools.Args{"path": name}); r.Success || r.Content != "Access denied: "+name+" "+holds+"." || leaks(r) {
			t.Errorf("hard link %s: %q", name, r.Content)
		}
		if ref := f.Refuse(tools.Args{"path": name}); ref == nil || ref.By != tools.ByProtected {
			t.Errorf("the gate does not refuse the hard link %s: %+v", name, ref)
		}
	}
	if r := read(t, f, tools.Args{"path": "plain-2.txt"}); !r.Success {
		t.Errorf("a hard link between ordinary files was refused: %q", r.Content)
	}
}
