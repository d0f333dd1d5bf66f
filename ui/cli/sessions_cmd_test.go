package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// jarvis sessions is the workbench's /sessions from a script: list, show,
// export, search, rename and rm, each with --json.
func TestSessionsCommands(t *testing.T) {
	srv := sessionServer(t)
	db := filepath.Join(t.TempDir(), "j.db")
	g := []string{"--host", srv.URL, "--model", "qwen3:8b", "--db", db}
	out, errOut, code := runCLI(t, "", append([]string{"ask", "--save", "--json", "--tools", "none", "Plan a trip to Lisbon"}, g...)...)
	if code != ExitOK {
		t.Fatalf("ask --save: exit %d err %q", code, errOut)
	}
	trip := askJSONOut(t, out).Session
	runCLI(t, "", append([]string{"ask", "--session", trip, "--tools", "none", "And the weather?"}, g...)...)
	out, _, _ = runCLI(t, "", append([]string{"ask", "--save", "--json", "--tools", "none", "A packing list"}, g...)...)
	packing := askJSONOut(t, out).Session

	out, _, code = runCLI(t, "", "sessions", "list", "--db", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], packing) ||
		!strings.Contains(lines[2], "Plan a trip to Lisbon") || !strings.Contains(lines[2], " 4 ") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "", "sessions", "list", "--json", "--limit", "1", "--db", db)
	var list []sessions.Session
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ID != packing {
		t.Fatalf("list --json: %v %s", err, out)
	}

	out, _, code = runCLI(t, "", "sessions", "show", trip[:10], "--db", db)
	if code != ExitOK || !strings.Contains(out, "Plan a trip to Lisbon") || !strings.Contains(out, "Mild in May.") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "", "sessions", "show", trip, "--json", "--db", db)
	var shown struct {
		Session  sessions.Session   `json:"session"`
		Messages []sessions.Message `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Session.ID != trip || len(shown.Messages) != 4 || shown.Messages[3].Content != "Mild in May." {
		t.Fatalf("show --json: %v %s", err, out)
	}

	out, _, code = runCLI(t, "", "sessions", "search", "WEATHER", "--db", db)
	if code != ExitOK || !strings.HasPrefix(out, trip) || !strings.Contains(out, "#3 user: And the weather?") || strings.Count(out, "\n") != 2 {
		t.Fatalf("search: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "", "sessions", "search", "lisbon", "may", "--json", "--db", db)
	var found []sessions.Found
	if err := json.Unmarshal([]byte(out), &found); err != nil || len(found) != 1 || found[0].Session.ID != trip {
		t.Fatalf("search --json: %v %s", err, out)
	}
	if _, _, code := runCLI(t, "", "sessions", "search", "zanzibar", "--db", db); code != ExitFailed {
		t.Fatalf("search without a match: exit %d", code)
	}

	out, _, code = runCLI(t, "", "sessions", "rename", trip, "Lisbon", "in", "May", "--db", db)
	if code != ExitOK || out != "Renamed session "+trip+" to \"Lisbon in May\".\n" {
		t.Fatalf("rename: exit %d %q", code, out)
	}

	dir := t.TempDir()
	mine := filepath.Join(dir, "trip.md")
	os.WriteFile(mine, []byte("mine"), 0o600)
	out, _, code = runCLI(t, "", "sessions", "export", trip, mine, "--json", "--db", db)
	var res history.Export
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitOK || res.Path != filepath.Join(dir, "trip-2.md") || res.Asked != mine {
		t.Fatalf("export: exit %d %v %s", code, err, out)
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine" {
		t.Fatal("the export replaced a file")
	}
	if b, _ := os.ReadFile(res.Path); !strings.Contains(string(b), "Lisbon in May") {
		t.Fatalf("the export:\n%s", b)
	}

	_, errOut, code = runCLI(t, "", "sessions", "rm", packing, "nosuch", "--db", db)
	if code != ExitUsage || !strings.Contains(errOut, "jarvis sessions list") {
		t.Fatalf("rm with a wrong id: exit %d err %q", code, errOut)
	}
	out, _, code = runCLI(t, "", "sessions", "rm", packing, "--db", db)
	if code != ExitOK || !strings.HasPrefix(out, "Removed session "+packing+" (A packing list)") {
		t.Fatalf("rm: exit %d %q", code, out)
	}
	out, _, _ = runCLI(t, "", "sessions", "list", "--json", "--db", db)
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].Title != "Lisbon in May" {
		t.Fatalf("after rm: %s", out)
	}
}
