package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/tools"
)

type auditJSON struct {
	Time      time.Time      `json:"time"`
	Tool      string         `json:"tool"`
	Decision  string         `json:"decision"`
	By        string         `json:"by"`
	Source    string         `json:"source"`
	Args      map[string]any `json:"args"`
	AskedArgs map[string]any `json:"asked_args"`
	Reason    string         `json:"reason"`
	Grant     string         `json:"grant"`
}

func readAudit(t *testing.T, db string, args ...string) []auditJSON {
	t.Helper()
	out, errOut, code := runCLI(t, "", append([]string{"audit", "--json", "--db", db}, args...)...)
	if code != ExitOK {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	var entries []auditJSON
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("audit --json is not an array of entries: %v\n%s", err, out)
	}
	return entries
}

// tools run decides through the policy and the audit log says how: with
// no terminal a call is denied and nothing runs, --yes allows it, an
// always-approval allows it without --yes until it is revoked, and a
// secret in the arguments never reaches the log.
func TestToolsRunFollowsThePolicyAndIsAudited(t *testing.T) {
	db := filepath.Join(t.TempDir(), "j.db")
	// channel_send needs confirmation and fails harmlessly (no channel
	// configured) when it runs.
	args := `{"channel":"ops","message":"deploy https://user:hunter22@example.com/hook?token=abcdef123456"}`
	_, errOut, code := runCLI(t, "", "tools", "run", "channel_send", args, "--db", db)
	if code != ExitFailed || !strings.Contains(errOut, "no confirmation callback") {
		t.Fatalf("without a terminal: exit %d, %q", code, errOut)
	}
	runCLI(t, "", "tools", "run", "channel_send", args, "--yes", "--db", db)

	entries := readAudit(t, db)
	if len(entries) != 2 {
		t.Fatalf("entries = %+v", entries)
	}
	if e := entries[0]; e.Tool != "channel_send" || e.Decision != "denied" || e.By != "no terminal" || e.Source != "tools run" {
		t.Errorf("first entry = %+v", e)
	}
	if e := entries[1]; e.Decision != "allowed" || e.By != "yes to all" || e.Time.IsZero() {
		t.Errorf("second entry = %+v", e)
	}
	for _, e := range entries {
		msg, _ := e.Args["message"].(string)
		if strings.Contains(msg, "hunter22") || strings.Contains(msg, "abcdef123456") || !strings.Contains(msg, "example.com") {
			t.Errorf("a secret reached the audit log, or the URL was lost: %q", msg)
		}
	}
	if got := readAudit(t, db, "--tool", "calculator"); len(got) != 0 {
		t.Errorf("--tool calculator lists %+v", got)
	}
	if got := readAudit(t, db, "--since", "1h"); len(got) != 2 {
		t.Errorf("--since 1h lists %d", len(got))
	}
	out, _, code := runCLI(t, "", "audit", "--db", db, "--tool", "channel_send")
	if code != ExitOK || !strings.Contains(out, "no terminal") || !strings.Contains(out, "yes to all") {
		t.Errorf("the table: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "", "audit", "--db", db, "--since", "yesterday"); code != ExitUsage || !strings.Contains(errOut, "24h") {
		t.Errorf("a bad --since: exit %d %q", code, errOut)
	}
}

func TestApprovalsListAndRevoke(t *testing.T) {
	db := filepath.Join(t.TempDir(), "j.db")
	h, err := store.Open(db, "tui")
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	out, _, code := runCLI(t, "", "approvals", "list", "--db", db)
	if code != ExitOK || !strings.Contains(out, "Nothing is always allowed") {
		t.Fatalf("empty list: exit %d %q", code, out)
	}
	// An always-approval, as the workbench's dialog records it.
	if h, err = store.Open(db, "tui"); err != nil {
		t.Fatal(err)
	}
	s := approvals.New(h)
	s.Source = "tui"
	if err := s.AllowAlways(tools.Grant{Tool: "channel_send", Scope: tools.Scope{Kind: tools.ScopeChannel, Value: "ops", Words: "messages to channel ops"}}); err != nil {
		t.Fatal(err)
	}
	h.Close()

	args := `{"channel":"ops","message":"hi"}`
	runCLI(t, "", "tools", "run", "channel_send", args, "--db", db)
	out, _, _ = runCLI(t, "", "approvals", "list", "--json", "--db", db)
	var rows []struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Name != "channel_send" || rows[0].Source != "tui" {
		t.Fatalf("list --json = %q (%v)", out, err)
	}
	if out, _, code := runCLI(t, "", "approvals", "revoke", "channel_send", "--db", db); code != ExitOK || !strings.Contains(out, "Revoked channel_send: messages to channel ops; those calls ask for confirmation again") {
		t.Fatalf("revoke: exit %d %q", code, out)
	}
	runCLI(t, "", "tools", "run", "channel_send", args, "--db", db)
	entries := readAudit(t, db)
	if len(entries) != 2 || entries[0].By != "always-approval" || entries[0].Decision != "allowed" ||
		entries[1].By != "no terminal" || entries[1].Decision != "denied" {
		t.Fatalf("before and after the revocation: %+v", entries)
	}
	if _, errOut, code := runCLI(t, "", "approvals", "revoke", "channel_send", "--db", db); code != ExitFailed || !strings.Contains(errOut, "not always-allowed") {
		t.Fatalf("revoking what is not approved: exit %d %q", code, errOut)
	}
}

// The config keeps the last word: confirm = true asks even when the tool
// is always allowed, and the list says so.
func TestConfigConfirmOverridesAnAlwaysApproval(t *testing.T) {
	dir := t.TempDir()
	db, cfg := filepath.Join(dir, "j.db"), filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[tool.channel_send]\nconfirm = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := store.Open(db, "tui")
	if err != nil {
		t.Fatal(err)
	}
	if err := approvals.New(h).AllowAlways(tools.Grant{Tool: "channel_send", Scope: tools.Scope{Kind: tools.ScopeChannel, Value: "ops"}}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	_, errOut, code := runCLI(t, "", "tools", "run", "channel_send", `{"channel":"ops","message":"hi"}`, "--db", db, "--config", cfg)
	if code != ExitFailed || !strings.Contains(errOut, "no confirmation callback") {
		t.Fatalf("an always-approval beat the config: exit %d %q", code, errOut)
	}
	out, _, _ := runCLI(t, "", "approvals", "list", "--db", db, "--config", cfg)
	if !strings.Contains(out, "asks anyway") {
		t.Fatalf("the list does not say the config overrides it:\n%s", out)
	}
}
