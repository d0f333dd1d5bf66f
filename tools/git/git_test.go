package git

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// repo makes a repository in a temporary working directory, with a
// committed file, and returns it.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, ".gitconfig-test"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	run("config", "user.name", "Test Person")
	run("config", "user.email", "test@example.invalid")
	os.WriteFile("main.go", []byte("package main\n"), 0o644)
	run("add", "main.go")
	run("commit", "-q", "-m", "first")
	return dir
}

func call(t *testing.T, e *tools.Executor, name string, args map[string]any) tools.Result {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	b, _ := json.Marshal(args)
	return e.Execute(context.Background(), tools.Call{ID: "c", Name: name, Arguments: string(b)})
}

func TestReadsDoNotAskAndCommitAsksShowingTheFiles(t *testing.T) {
	dir := repo(t)
	var asked []tools.ConfirmRequest
	e, err := tools.NewExecutor([]tools.Tool{NewStatus(tools.Deps{}), NewDiff(tools.Deps{}), NewLog(tools.Deps{}), NewCommit(tools.Deps{})},
		tools.ExecutorOptions{Confirmer: tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
			asked = append(asked, req)
			return tools.AllowOnce, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=1\n"), 0o644)
	if r := call(t, e, "git_status", nil); !r.Success || !strings.Contains(r.Content, "## main") || !strings.Contains(r.Content, " M main.go") {
		t.Fatalf("status = %+v", r)
	}
	if r := call(t, e, "git_diff", nil); !r.Success || !strings.Contains(r.Content, "+func main() {}") {
		t.Fatalf("diff = %+v", r)
	}
	if r := call(t, e, "git_diff", map[string]any{"ref": "--output=/tmp/x"}); r.Success {
		t.Fatalf("an option given as a ref must be refused: %+v", r)
	}
	if len(asked) != 0 {
		t.Fatalf("reads inside the working directory must not ask: %+v", asked)
	}
	r := call(t, e, "git_commit", map[string]any{"message": "Add main", "files": []string{"main.go"}})
	if !r.Success || r.Metadata["commit"] == nil {
		t.Fatalf("commit = %+v", r)
	}
	if len(asked) != 1 || asked[0].Reason != "commits 1 file" || asked[0].Scope.Kind != tools.ScopeArgs {
		t.Fatalf("asked = %+v", asked)
	}
	if r := call(t, e, "git_log", map[string]any{"count": 1}); !strings.Contains(r.Content, "Add main") || !strings.Contains(r.Content, "Test Person") {
		t.Fatalf("log = %+v", r)
	}
	if r := call(t, e, "git_commit", map[string]any{"message": "x", "files": []string{".env"}}); r.Status != tools.StatusDenied {
		t.Fatalf("committing a secret: %+v", r)
	}
	if r := call(t, e, "git_commit", map[string]any{"message": "nothing"}); r.Success || !strings.Contains(r.Content, "git commit failed") {
		t.Fatalf("an empty commit must fail saying so: %+v", r)
	}
}

func TestDiffLeavesOutSensitiveFiles(t *testing.T) {
	dir := repo(t)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=1\n"), 0o644)
	exec.Command("git", "add", ".env").Run()
	exec.Command("git", "commit", "-qm", "env").Run()
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // x\n"), 0o644)
	e, _ := tools.NewExecutor([]tools.Tool{NewDiff(tools.Deps{})}, tools.ExecutorOptions{})
	r := call(t, e, "git_diff", nil)
	if strings.Contains(r.Content, "TOKEN") || !strings.Contains(r.Content, "main.go") || !strings.Contains(r.Content, "The diff of .env is left out") {
		t.Fatalf("diff = %q", r.Content)
	}
}

func TestThePersonsHooksRun(t *testing.T) {
	dir := repo(t)
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte("#!/bin/sh\necho 'pre-commit: no commits on Fridays' >&2\nexit 1\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // y\n"), 0o644)
	e, _ := tools.NewExecutor([]tools.Tool{NewCommit(tools.Deps{})}, tools.ExecutorOptions{Confirmer: tools.AllowAll})
	r := call(t, e, "git_commit", map[string]any{"message": "m", "files": []string{"main.go"}})
	if r.Success || !strings.Contains(r.Content, "no commits on Fridays") {
		t.Fatalf("the hook's refusal must reach the model: %+v", r)
	}
}
