package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/tools"
)

// notesConfig is the README's grep_notes over a notes directory of its own.
func notesConfig(t *testing.T, extra string) (config, notes string) {
	t.Helper()
	dir := t.TempDir()
	notes = filepath.Join(dir, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk\nCall the Bank\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config = filepath.Join(dir, "config.toml")
	body := `
[[commands]]
name = "grep_notes"
description = "Search my notes for a word; prints matching lines."
argv = ["grep", "-rin", "--", "{word}", "` + notes + `"]
success_codes = [0, 1]
[commands.parameters.word]
type = "string"
description = "The word to look for"
required = true
` + extra
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return config, notes
}

func TestCommandToolsAreToolsLikeAnyOther(t *testing.T) {
	config, notes := notesConfig(t, "")
	db := filepath.Join(t.TempDir(), "jarvis.db")

	out, errOut, code := runCLI(t, "", "--config", config, "--db", db, "tools", "list")
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "grep_notes ") {
			line = l
		}
	}
	if code != ExitOK || !strings.Contains(line, "command") || !strings.Contains(line, "yes") {
		t.Fatalf("tools list: code %d, line %q\n%s%s", code, line, out, errOut)
	}
	out, _, code = runCLI(t, "", "--config", config, "--db", db, "tools", "describe", "grep_notes")
	if code != ExitOK || !strings.Contains(out, "Search my notes for a word") || !strings.Contains(out, "word") {
		t.Fatalf("describe: %s", out)
	}

	// Confirmation is on: with nobody at a terminal it is refused ...
	_, errOut, code = runCLI(t, "", "--config", config, "--db", db, "tools", "run", "grep_notes", `{"word":"bank"}`)
	if code != ExitFailed || !strings.Contains(errOut, "requires confirmation") {
		t.Fatalf("without --yes: code %d %s", code, errOut)
	}
	// ... and --yes runs it, the argument one literal word.
	out, errOut, code = runCLI(t, "", "--config", config, "--db", db, "tools", "run", "--yes", "grep_notes", `{"word":"bank"}`)
	if code != ExitOK || out != filepath.Join(notes, "todo.txt")+":2:Call the Bank\n" {
		t.Fatalf("with --yes: code %d out %q err %s", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "--config", config, "--db", db, "tools", "run", "--yes", "grep_notes", `{"word":"milk; echo pwned"}`)
	if code != ExitOK || out != "(no output)\n" {
		t.Fatalf("a hostile word: code %d out %q", code, out)
	}
}

func TestAskRunsACommandTheModelCalls(t *testing.T) {
	srv := ot.New(t)
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("milk")).Reply(et.ToolCall("grep_notes", `{"word":"milk"}`))
	srv.On(et.ToolResultContains("grep_notes", "buy milk")).Reply(et.Text("Your todo list says to buy milk."))
	config, _ := notesConfig(t, "")
	out, errOut, code := runCLI(t, "", "--config", config, "--db", filepath.Join(t.TempDir(), "jarvis.db"), "--host", srv.URL, "--model", "qwen3",
		"ask", "--json", "--yes", "--tools", "grep_notes", "What do my notes say about milk?")
	var res askResultJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitOK {
		t.Fatalf("code %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(res.ToolResults) != 1 || !res.ToolResults[0].Success || res.ToolResults[0].Status != tools.StatusOK || res.Content != "Your todo list says to buy milk." {
		t.Fatalf("%+v", res)
	}
}

func TestABadCommandIsAConfigError(t *testing.T) {
	config, _ := notesConfig(t, `
[[commands]]
name = "broken"
description = "d"
argv = ["no-such-program-for-jarvis"]
`)
	_, errOut, code := runCLI(t, "", "--config", config, "tools", "list")
	if code != ExitUsage || !strings.Contains(errOut, config+":15") || !strings.Contains(errOut, "not on PATH") {
		t.Fatalf("code %d: %s", code, errOut)
	}
}
