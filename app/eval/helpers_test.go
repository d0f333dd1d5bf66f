package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine/ollama"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// fakeModel is the model of the test scripts.
const fakeModel = "evalbot"

// scripted starts a fake server playing the script file in testdata, its
// "{root}" replaced by the scratch root the runner will use.
func scripted(t testing.TB, file, root string) *ollamatest.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ollamatest.ParseScript([]byte(strings.ReplaceAll(string(data), "{root}", root)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	srv := ollamatest.New(t)
	srv.Use(sc)
	return srv
}

type runOpts struct {
	agent  string
	repeat int
	bus    events.Publisher
}

// runSuite runs suite against the fake server at srv with the built-in
// tools, in root.
func runSuite(t testing.TB, srv *ollamatest.Server, suite *Suite, root string, o runOpts) *Report {
	t.Helper()
	r := newRunner(t, srv, suite, root, o)
	if err := r.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func newRunner(t testing.TB, srv *ollamatest.Server, suite *Suite, root string, o runOpts) *Runner {
	t.Helper()
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if o.agent == "" {
		o.agent = "orchestrator"
	}
	r, err := New(Config{
		Suite: suite, Targets: []Target{{Engine: eng, EngineName: "ollama", Model: fakeModel, Agent: o.agent}},
		Repeat: o.repeat, Tools: BuiltinTools(builtin.Deps{}), ScratchDir: root, Bus: o.bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// builtinSuite returns the built-in suite, checked against the built-in
// tools.
func mustBuiltin(t testing.TB) *Suite {
	t.Helper()
	s, err := Builtin(builtin.Registry(builtin.Deps{}).Names())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func caseByID(t testing.TB, r Result, id string) CaseResult {
	t.Helper()
	for _, c := range r.Cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %q in the result", id)
	return CaseResult{}
}
