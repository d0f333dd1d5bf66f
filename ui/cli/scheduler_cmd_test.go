package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// sched runs `jarvis --db DB scheduler ARGS...`.
func sched(t *testing.T, db string, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, "", append([]string{"--db", db, "scheduler"}, args...)...)
}

var createdRe = regexp.MustCompile(`^Created task ([0-9a-f]{16}) \((.+)\)\.\nNext run: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+) \((in .+)\)\nRuns on (.+) with the (\w+) agent, time limit (.+)\.\n$`)

func createTask(t *testing.T, db string, args ...string) string {
	t.Helper()
	out, errOut, code := sched(t, db, append([]string{"create"}, args...)...)
	m := createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil {
		t.Fatalf("create %v: code %d out %q err %q", args, code, out, errOut)
	}
	return m[1]
}

func TestSchedulerCreatePrintsIDAndNextRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	out, _, code := sched(t, db, "create", "Check", "the", "build", "--type", "interval", "--value", "1h")
	m := createdRe.FindStringSubmatch(out)
	if code != ExitOK || m == nil || m[2] != "every 1h" || m[4] != "in 1h" {
		t.Fatalf("create: %d %q", code, out)
	}

	out, _, _ = sched(t, db, "create", "Standup notes", "--type", "cron", "--value", "0 9 * * 1-5", "--tz", "Europe/Paris")
	m = createdRe.FindStringSubmatch(out)
	if m == nil || m[2] != "cron 0 9 * * 1-5 (Europe/Paris)" || !regexp.MustCompile(` 09:00:00 CES?T$`).MatchString(m[3]) {
		t.Errorf("cron in a zone: %q", out)
	}

	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	out, _, _ = sched(t, db, "create", "Call Sam", "--type", "once", "--value", at.Format("2006-01-02T15:04:05"), "--tz", "UTC", "--json")
	var task tasks.Task
	if err := json.Unmarshal([]byte(out), &task); err != nil || !task.NextRun.Equal(at) || task.Metadata["created_by"] != "cli" || task.TimeZone != "UTC" {
		t.Errorf("once --json: %q (%v)", out, err)
	}
}

func TestSchedulerCreateRejectsInvalidTasks(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"p", "--type", "cron", "--value", "0 25 * * *"}, `the hour field "25" is wrong`},
		{[]string{"p", "--type", "cron", "--value", "0 9 * * 7"}, "day-of-week"},
		{[]string{"p", "--type", "interval", "--value", "-5"}, "at least 1 second"},
		{[]string{"p", "--type", "once", "--value", "2020-01-01T09:00:00Z"}, "already passed"},
		{[]string{"p", "--type", "hourly", "--value", "1"}, "unknown schedule type"},
		{[]string{"p", "--type", "interval", "--value", "60", "--agent", "wizard"}, `unknown agent "wizard"`},
		{[]string{"p", "--type", "interval", "--value", "60", "--tools", "calculator,telepathy"}, `unknown tool "telepathy"`},
		{[]string{"p", "--type", "interval", "--value", "60", "--tools", "calculator", "--approve", "file_read"}, "not one of the task's tools"},
		{[]string{"p", "--type", "interval", "--value", "60", "--tz", "Europe/Pari"}, "unknown time zone"},
		{[]string{"p", "--value", "60"}, "--type and --value are required"},
		{[]string{"--type", "interval", "--value", "60"}, "requires at least 1 arg"},
	}
	for _, c := range cases {
		out, errOut, code := sched(t, db, append([]string{"create"}, c.args...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: code %d out %q err %q, want exit 2 and %q", c.args, code, out, errOut, c.msg)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("invalid creates made the database")
	}
}

func TestSchedulerCreateWarnsAboutUnapprovedTools(t *testing.T) {
	// Any built-in tool that needs confirmation will do.
	var confirmTool string
	reg := builtin.Registry(builtin.Deps{})
	for _, n := range reg.Names() {
		if tool, err := reg.Build(n, builtin.Deps{}.ToolDeps()); err == nil && tool.Spec().RequiresConfirmation {
			confirmTool = n
			break
		}
	}
	if confirmTool == "" {
		t.Skip("no built-in tool needs confirmation")
	}
	db := filepath.Join(t.TempDir(), "jarvis.db")
	_, errOut, code := sched(t, db, "create", "p", "--type", "interval", "--value", "60", "--tools", confirmTool)
	if code != ExitOK || !strings.Contains(errOut, confirmTool+" needs confirmation and was not approved") || !strings.Contains(errOut, "--approve "+confirmTool) {
		t.Errorf("no warning: %d %q", code, errOut)
	}
	_, errOut, _ = sched(t, db, "create", "p", "--type", "interval", "--value", "60", "--tools", confirmTool, "--approve", confirmTool)
	if strings.Contains(errOut, "confirmation") {
		t.Errorf("warned about an approved tool: %q", errOut)
	}
}

func TestSchedulerListPauseResumeCancel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jarvis.db")
	a := createTask(t, db, "Water the plants", "--type", "interval", "--value", "90m")
	b := createTask(t, db, "Weekly report", "--type", "cron", "--value", "@weekly", "--tz", "UTC")

	out, _, code := sched(t, db, "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("list: %q", out)
	}
	if !strings.HasPrefix(lines[3], "No jarvis process is serving this database") {
		t.Errorf("list does not say nothing serves the database: %q", lines[3])
	}
	for _, col := range []string{"STATUS", "SCHEDULE", "NEXT RUN", "LAST RUN", "SERVER", "PROMPT"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %s: %q", col, lines[0])
		}
	}
	// Soonest next run first.
	if !strings.HasPrefix(lines[1], a) || !strings.Contains(lines[1], "every 1h30m") || !strings.Contains(lines[1], "in 1h30m (") ||
		!strings.Contains(lines[1], "never") || !strings.Contains(lines[1], "Water the plants") {
		t.Errorf("row: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], b) || !strings.Contains(lines[2], "cron @weekly (UTC)") {
		t.Errorf("row: %q", lines[2])
	}

	out, _, code = sched(t, db, "pause", a[:6])
	if code != ExitOK || out != "Task "+a+" paused.\n" {
		t.Errorf("pause: %d %q", code, out)
	}
	out, _, _ = sched(t, db, "list", "--status", "paused", "--json")
	var list []tasks.Task
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ID != a || !list[0].NextRun.IsZero() {
		t.Errorf("paused --json: %q %v", out, err)
	}
	out, _, code = sched(t, db, "resume", a)
	if code != ExitOK || !strings.HasPrefix(out, "Task "+a+" resumed. Next run: ") || !strings.HasSuffix(out, "(in 1h30m).\n") {
		t.Errorf("resume: %d %q", code, out)
	}
	out, _, code = sched(t, db, "cancel", a)
	if code != ExitOK || out != "Task "+a+" cancelled.\n" {
		t.Errorf("cancel: %d %q", code, out)
	}
	_, errOut, code := sched(t, db, "resume", a)
	if code != ExitFailed || !strings.Contains(errOut, "is cancelled; only a paused task can be resumed") {
		t.Errorf("resume cancelled: %d %q", code, errOut)
	}
	out, _, _ = sched(t, db, "list", "--status", "active")
	if strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Errorf("active list: %q", out)
	}
	if out, _, _ := sched(t, db, "list", "--status", "completed"); out != "No completed tasks. Create one with 'jarvis scheduler create PROMPT --type interval --value 1h'.\n" {
		t.Errorf("empty filtered list: %q", out)
	}

	_, errOut, code = sched(t, db, "pause", "ffffffffffffffff")
	if code != ExitFailed || !strings.Contains(errOut, "Task not found: ffffffffffffffff") {
		t.Errorf("unknown id: %d %q", code, errOut)
	}
	_, errOut, code = sched(t, db, "list", "--status", "sleeping")
	if code != ExitUsage || !strings.Contains(errOut, "unknown task status") {
		t.Errorf("bad status: %d %q", code, errOut)
	}
	if _, _, code = sched(t, db, "pause"); code != ExitUsage {
		t.Errorf("pause without id: %d", code)
	}
}

func TestSchedulerLogs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jarvis.db")
	id := createTask(t, db, "Tidy the downloads", "--type", "interval", "--value", "60", "--tz", "UTC", "--tools", "calculator")

	out, _, code := sched(t, db, "logs", id)
	if code != ExitOK || !strings.Contains(out, "Task "+id+" (active, every 1m): Tidy the downloads") || !strings.Contains(out, "No runs yet.") {
		t.Errorf("logs without runs: %q", out)
	}

	// Record two runs the way the scheduler does.
	h, err := store.Open(db, "test")
	if err != nil {
		t.Fatal(err)
	}
	st := tasks.New(h)
	start := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	by := tasks.Claimant{Owner: "test", Process: tasks.Process{PID: 4242, Command: "scheduler run"},
		Server: tasks.Server{Engine: "ollama", Host: "http://127.0.0.1:11434"}}
	c, _ := st.ClaimManual(id, start, by)
	st.Finish(c, tasks.Finish{At: start.Add(1500 * time.Millisecond), Success: true, Result: "Removed 12 files.\nKept 3.", Model: "qwen3:8b"})
	c, _ = st.ClaimManual(id, start.Add(time.Hour), by)
	st.Finish(c, tasks.Finish{At: start.Add(time.Hour + 2*time.Second), Error: "model unavailable", DeniedTools: []string{"code_interpreter"}})
	h.Close()

	out, _, code = sched(t, db, "logs", id[:5], "-n", "10")
	if code != ExitOK {
		t.Fatalf("logs: %d", code)
	}
	// Newest first, each run with the process and server it ran on.
	want := []string{
		"Last 2 runs, newest first:",
		"run 2  2025-06-01 11:00:00 UTC  failed  2.00s  (by hand)",
		"  by scheduler run (pid 4242) on ollama http://127.0.0.1:11434",
		"  error: model unavailable",
		"  denied: code_interpreter (these tools need confirmation and were not approved for this task; create the task with --approve code_interpreter to allow them)",
		"run 1  2025-06-01 10:00:00 UTC  success  1.50s  (by hand)",
		"  by scheduler run (pid 4242) on ollama http://127.0.0.1:11434 · qwen3:8b",
		"  result: Removed 12 files. Kept 3.",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w+"\n")
		if i < 0 {
			t.Fatalf("logs lack %q after offset %d:\n%s", w, at, out)
		}
		at += i + len(w)
	}
	if !strings.Contains(out, "Server: ollama ") || !strings.Contains(out, "time limit 10m (default)") {
		t.Errorf("logs do not say the task's server and limit:\n%s", out)
	}
	out, _, _ = sched(t, db, "logs", id, "-n", "1", "--json")
	var runs []tasks.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].ID != 2 || runs[0].DeniedTools[0] != "code_interpreter" {
		t.Errorf("logs --json -n 1: %q %v", out, err)
	}
	if _, errOut, code := sched(t, db, "logs", id, "-n", "0"); code != ExitUsage || !strings.Contains(errOut, "-n must be at least 1") {
		t.Errorf("-n 0: %d %q", code, errOut)
	}
}
