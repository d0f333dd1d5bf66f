package sdk_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jarvis-workbench/jarvis/app"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/sdk"
	"github.com/jarvis-workbench/jarvis/store/audit"
	"github.com/jarvis-workbench/jarvis/tools"
)

// launches counts the calls that reached the guarded tool.
var launches atomic.Int32

// launchTool needs confirmation: nothing may run it unasked.
type launchTool struct{}

func (launchTool) Spec() tools.Spec {
	return tools.Spec{Name: "launch", Description: "Launches the thing.", Category: "custom",
		Parameters: tools.Params(tools.StringParam("target", "what to launch", true)), RequiresConfirmation: true}
}

func (launchTool) Execute(_ context.Context, a tools.Args) tools.Result {
	launches.Add(1)
	return tools.OK("launched " + a.String("target"))
}

func init() {
	if err := sdk.Register("launch", func(tools.Deps) (tools.Tool, error) { return launchTool{}, nil }); err != nil {
		panic(err)
	}
}

// fixture is a fake server whose model calls launch when asked to, a
// scratch config and database, and a Jarvis on them.
type fixture struct {
	srv    *ollamatest.Server
	dir    string
	config string
	db     string
}

func newFixture(t *testing.T, config string) *fixture {
	t.Helper()
	srv := ollamatest.New(t)
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("launch")).Reply(et.ToolCall("launch", `{"target":"rocket"}`))
	srv.On(et.ToolResult("launch")).Reply(et.Text("Finished."))
	dir := t.TempDir()
	f := &fixture{srv: srv, dir: dir, config: filepath.Join(dir, "config.toml"), db: filepath.Join(dir, "jarvis.db")}
	if err := os.WriteFile(f.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) open(t *testing.T) *sdk.Jarvis {
	t.Helper()
	j, err := sdk.New(context.Background(), sdk.Options{Engine: "ollama", Host: f.srv.URL, Model: "qwen3", ConfigPath: f.config, DBPath: f.db})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// auditEntries reads the audit log once j is closed.
func (f *fixture) auditEntries(t *testing.T) []audit.Entry {
	t.Helper()
	db, err := app.OpenDB(f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := audit.New(db).List(context.Background(), audit.Filter{Tool: "launch"})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func ask(t *testing.T, j *sdk.Jarvis, o sdk.AskOptions) tools.Result {
	t.Helper()
	o.Tools = []string{"launch"}
	res, err := j.Ask(context.Background(), "launch the rocket", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolResults) != 1 || res.Content != "Finished." {
		t.Fatalf("result %+v", res)
	}
	return res.ToolResults[0]
}

func TestACallNeedingConfirmationIsDeniedUnlessApproved(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	before := launches.Load()

	// Nobody to ask: denied, not run.
	if r := ask(t, j, sdk.AskOptions{}); r.Status != tools.StatusDenied || launches.Load() != before {
		t.Fatalf("without approval: %+v", r)
	}
	// Yes approves.
	if r := ask(t, j, sdk.AskOptions{Yes: true}); !r.Success || r.Content != "launched rocket" {
		t.Fatalf("with Yes: %+v", r)
	}
	// A callback that says no denies; one that says yes allows, once.
	var asked []string
	no := func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		asked = append(asked, req.Spec.Name+" "+req.Arguments.String("target"))
		return tools.Deny, nil
	}
	if r := ask(t, j, sdk.AskOptions{Confirm: no}); r.Status != tools.StatusDenied {
		t.Fatalf("callback denied: %+v", r)
	}
	if !slices.Equal(asked, []string{"launch rocket"}) {
		t.Fatalf("the callback was asked %q", asked)
	}
	once := func(context.Context, tools.ConfirmRequest) (tools.Decision, error) { return tools.AllowOnce, nil }
	if r := ask(t, j, sdk.AskOptions{Confirm: once}); !r.Success {
		t.Fatalf("callback allowed once: %+v", r)
	}
	if r := ask(t, j, sdk.AskOptions{}); r.Status != tools.StatusDenied {
		t.Fatalf("an approval given once held for the next question: %+v", r)
	}
	// "Allow for the session" holds for this Jarvis's later questions.
	session := func(context.Context, tools.ConfirmRequest) (tools.Decision, error) { return tools.AllowSession, nil }
	ask(t, j, sdk.AskOptions{Confirm: session})
	if r := ask(t, j, sdk.AskOptions{}); !r.Success {
		t.Fatalf("after allow-for-session: %+v", r)
	}
	// A callback that panics denies, saying why.
	boom := func(context.Context, tools.ConfirmRequest) (tools.Decision, error) { panic("bug") }
	j2 := f.open(t)
	if r := ask(t, j2, sdk.AskOptions{Confirm: boom}); r.Status != tools.StatusDenied || !strings.Contains(r.Content, "bug") {
		t.Fatalf("panicking callback: %+v", r)
	}
	if err := j2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j2.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := launches.Load()-before, int32(4); got != want {
		t.Fatalf("the tool ran %d times, want %d", got, want)
	}

	// Every decision is in the audit log, as the program's.
	var decisions []string
	for _, e := range f.auditEntries(t) {
		if e.Source != tools.SourceSDK {
			t.Errorf("entry from source %q, want %q", e.Source, tools.SourceSDK)
		}
		decisions = append(decisions, e.Decision+" by "+e.By)
	}
	want := []string{
		"denied by nobody to ask", "allowed by yes to all", "denied by person", "allowed by person",
		"denied by nobody to ask", "allowed by person", "allowed by session approval", "denied by person",
	}
	if !slices.Equal(decisions, want) {
		t.Fatalf("audit log:\n%q\nwant\n%q", decisions, want)
	}
}

func TestEventsAreThoseTheWorkbenchDraws(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	defer j.Close()
	var seen []events.Type
	ask(t, j, sdk.AskOptions{Yes: true, OnEvent: func(e events.Event) { seen = append(seen, e.Type) }})
	for _, want := range []events.Type{events.TurnStart, events.ToolCallStart, events.ConfirmAnswer, events.ToolCallEnd, events.Token, events.TurnEnd} {
		if !slices.Contains(seen, want) {
			t.Errorf("no %s event among %v", want, seen)
		}
	}
}

func TestTheResultCarriesUsageModelTurnsAndContext(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	defer j.Close()
	res, err := j.Ask(context.Background(), "launch the rocket", sdk.AskOptions{Tools: []string{"launch"}, Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "qwen3" || res.Turns != 2 || res.Agent != "orchestrator" || res.Usage.PromptTokens == 0 || res.Context.Window == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestZeroOptionsReadWhatTheCommandReads(t *testing.T) {
	f := newFixture(t, "")
	for _, k := range []string{"JARVIS_CONFIG", "JARVIS_ENGINE", "JARVIS_TOOLS", "JARVIS_AGENT", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	// The default config file, then the environment, as `jarvis` reads them.
	cfgHome := filepath.Join(f.dir, "xdg")
	if err := os.MkdirAll(filepath.Join(cfgHome, "jarvis"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "jarvis", "config.toml"), []byte("model = \"qwen3\"\ntools = [\"launch\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("OLLAMA_HOST", f.srv.URL)
	t.Setenv("JARVIS_DB", f.db)
	t.Setenv("JARVIS_MODEL", "")
	j, err := sdk.New(context.Background(), sdk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	// Tools: nil takes the configured ones.
	res, err := j.Ask(context.Background(), "launch the rocket", sdk.AskOptions{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolResults) != 1 || res.ToolResults[0].Content != "launched rocket" || res.Model != "qwen3" {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(f.db); err != nil {
		t.Fatalf("the database named by JARVIS_DB was not used: %v", err)
	}
}

func TestBadInputIsAnError(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	defer j.Close()
	ctx := context.Background()
	_, err := j.Ask(ctx, "launch", sdk.AskOptions{Tools: []string{"lanch"}})
	var unknown *tools.UnknownToolError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), `did you mean "launch"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := j.Ask(ctx, "launch", sdk.AskOptions{Agent: "planner"}); err == nil || !strings.Contains(err.Error(), "planner") {
		t.Fatalf("unknown agent: %v", err)
	}
	if _, err := j.Ask(ctx, "  ", sdk.AskOptions{}); err == nil {
		t.Fatal("an empty question was asked")
	}

	bad := newFixture(t, "model = \"qwen3\"\n\n[[commands]]\nname = \"grep_notes\"\ndescription = \"Search.\"\nargv = [\"grep\", \"{word}\"]\n")
	_, err = sdk.New(ctx, sdk.Options{ConfigPath: bad.config, DBPath: bad.db})
	if err == nil || !strings.Contains(err.Error(), bad.config+":6") || !strings.Contains(err.Error(), "{word} names no parameter") {
		t.Fatalf("config error: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sdk.New(cancelled, sdk.Options{ConfigPath: f.config, DBPath: f.db}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled New: %v", err)
	}
}

func TestRegisterRefusesNamesTaken(t *testing.T) {
	factory := func(tools.Deps) (tools.Tool, error) { return launchTool{}, nil }
	for name, want := range map[string]string{
		"launch":      "already registered",
		"my_tool":     "already registered",
		"calculator":  "built-in",
		"file_read":   "built-in",
		"notes__grep": "MCP",
		"bad name":    "cannot name a tool",
	} {
		if err := sdk.Register(name, factory); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Register(%q) = %v, want an error with %q", name, err, want)
		}
	}
}

func TestRegisteredToolsAreListed(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	defer j.Close()
	got := j.Tools()
	for _, want := range []string{"calculator", "launch", "my_tool"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s missing from %v", want, got)
		}
	}
}

func TestQuestionsCanBeAskedAtOnce(t *testing.T) {
	f := newFixture(t, "")
	j := f.open(t)
	defer j.Close()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			res, err := j.Ask(context.Background(), "launch the rocket", sdk.AskOptions{Tools: []string{"launch"}, Yes: true})
			if err == nil && (len(res.ToolResults) != 1 || !res.ToolResults[0].Success) {
				err = errors.New("the tool did not run: " + res.Content)
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
