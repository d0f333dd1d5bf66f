package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	oat "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools/builtin"
)

// serversLive is a live workbench on a default Ollama (srv) with an
// OpenAI-compatible endpoint "lab" (when lab is not nil), started with
// model (which may be lab/NAME, or "" to let it pick).
func serversLive(t *testing.T, srv *ot.Server, lab *oat.Server, model string) *live {
	t.Helper()
	body := ""
	if lab != nil {
		body = "[[endpoints]]\nname = \"lab\"\nengine = \"openai\"\nhost = \"" + lab.BaseURL + "\"\n"
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Flags{ConfigPath: p})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model, cfg.Tools = model, []string{"calculator"}
	eng, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var eps []*app.Server
	if lab != nil {
		le, err := openai.New(lab.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := engine.DriverFor("openai")
		eps = append(eps, &app.Server{Name: "lab", Kind: "openai", Driver: d, Engine: le})
	}
	bus := events.New()
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: eng, Endpoints: eps, Registry: builtin.Registry(builtin.Deps{}), Theme: "dark", Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, m: m, sub: bus.Subscribe(100000)}
	m.send = func(msg tea.Msg) { l.update(msg) }
	m.now = time.Now
	m.releaseAfter = 0 // commands run in line: its timer would hold the test
	l.update(tea.WindowSizeMsg{Width: 120, Height: 40})
	l.do(m.Init())
	return l
}

func modelsServer(t *testing.T) *ot.Server {
	t.Helper()
	srv := fakeServer(t)
	srv.Model("nomic-embed-text", engine.CapEmbedding)
	srv.Model("llama3.2", engine.CapCompletion)
	// Progress lines far enough apart for each to be drawn (the workbench
	// draws at most ten a second).
	srv.Pullable(ot.ModelSpec{Name: "qwen3:14b", Capabilities: []string{"completion", "tools"}},
		ot.PullSpec{Layers: []int64{9_000_000_000, 1_000_000}, Steps: 4, Interval: 110 * time.Millisecond})
	return srv
}

func labServer(t *testing.T) *oat.Server {
	t.Helper()
	lab := oat.New(t, oat.VLLM)
	lab.AddModel(oat.ModelSpec{Name: "qwen3-32b", Window: 16384})
	lab.Default(et.Text("from the lab"))
	return lab
}

func header(t *testing.T, l *live) string { return strings.SplitN(l.screen(), "\n", 2)[0] }

func TestModelListsEveryServerAndSwitchesAcrossThem(t *testing.T) {
	srv, lab := modelsServer(t), labServer(t)
	l := serversLive(t, srv, lab, "qwen3:8b")
	l.typeLine("/model")
	s := l.screen()
	for _, want := range []string{
		"Model: qwen3:8b.",
		"The server at " + strings.TrimPrefix(srv.URL, "http://") + " has 3 models:",
		"▸ qwen3:8b (completion, tools)",
		"nomic-embed-text:latest (embedding; cannot chat)",
		"Endpoint lab (" + strings.TrimPrefix(lab.BaseURL, "http://") + ") has 1 model:",
		"lab/qwen3-32b (capabilities unknown: the server does not say)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("/model lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("screen:\n%s", s)
	}
	// Tab lists the models of every server, but no embedding model.
	comps := l.m.completions("model", "")
	if strings.Join(comps, ",") != "qwen3:8b,llama3.2:latest,lab/qwen3-32b" && !(len(comps) == 3 && contains(comps, "lab/qwen3-32b") && !contains(comps, "nomic-embed-text:latest")) {
		t.Fatalf("completions = %v", comps)
	}
	if contains(comps, "nomic-embed-text:latest") {
		t.Fatalf("an embedding model is offered: %v", comps)
	}

	l.typeLine("/model lab/qwen3-32b")
	if l.m.modelName != "qwen3-32b" || l.m.modelRef() != "lab/qwen3-32b" || l.m.opts.Engine.Host() != lab.BaseURL {
		t.Fatalf("model %q on %s", l.m.modelRef(), l.m.opts.Engine.Host())
	}
	if h := header(t, l); !strings.Contains(h, "lab/qwen3-32b @ "+strings.TrimPrefix(lab.BaseURL, "http://")) {
		t.Fatalf("header: %s", h)
	}
	l.typeLine("hello")
	if !strings.Contains(l.screen(), "from the lab") || len(lab.Chats()) != 1 || lab.Chats()[0].Model != "qwen3-32b" {
		t.Fatalf("the question did not go to the lab:\n%s", l.screen())
	}
	// /ctx on a server that fixed its window records it, reloads nothing.
	l.typeLine("/ctx 16384")
	if s := l.screen(); !strings.Contains(s, "jarvis now takes the window to be 16,384 tokens") || !strings.Contains(s, "Nothing is reloaded") {
		t.Fatalf("/ctx on the lab:\n%s", s)
	}
	// Back to the default server with a bare name.
	l.typeLine("/model llama3.2")
	if l.m.modelRef() != "llama3.2" || l.m.opts.Engine.Host() != srv.URL {
		t.Fatalf("model %q on %s", l.m.modelRef(), l.m.opts.Engine.Host())
	}
	l.typeLine("/ctx 8192")
	if s := l.screen(); !strings.Contains(s, "The window is now 8,192 tokens.") {
		t.Fatalf("/ctx on Ollama:\n%s", s)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestModelRefusesMissingAndEmbeddingModelsInTheWorkbenchsWords(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:8b")
	l.typeLine("/model doesnotexist")
	s := l.screen()
	if l.m.modelRef() != "qwen3:8b" {
		t.Fatalf("the model changed to %q", l.m.modelRef())
	}
	for _, want := range []string{
		"doesnotexist is not on the server at " + strings.TrimPrefix(srv.URL, "http://") + ".",
		"Press ctrl+p to download it (or /pull doesnotexist), or pick",
		"another with /model (tab lists them). The model stays qwen3:8b.",
		"⇣ doesnotexist is not on the server · ctrl+p downloads it · esc dismisses",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(s, "ollama pull") || strings.Contains(s, "--model") {
		t.Errorf("command-line advice in the workbench")
	}
	if t.Failed() {
		t.Fatalf("screen:\n%s", s)
	}
	// esc dismisses the offer; nothing was downloaded.
	l.update(tea.KeyMsg{Type: tea.KeyEsc})
	if l.m.pull.offer != nil || strings.Contains(l.screen(), "ctrl+p downloads it ·") {
		t.Fatal("esc left the offer")
	}
	for _, r := range srv.Requests() {
		if r.Pull != nil {
			t.Fatal("a download started unasked")
		}
	}
	l.typeLine("/model nomic-embed-text")
	if s := l.screen(); l.m.modelRef() != "qwen3:8b" || !strings.Contains(s, "nomic-embed-text is an embedding model (embedding): it cannot chat, so the model stays qwen3:8b.") {
		t.Fatalf("embedding model: model %q\n%s", l.m.modelRef(), s)
	}
}

func TestPullInTheWorkbenchShowsProgressAndSwitches(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:8b")
	l.typeLine("/model qwen3:14b")
	// While the download runs, the bar is above the prompt.
	var during []string
	send := l.m.send
	l.m.send = func(msg tea.Msg) {
		send(msg)
		if p, ok := msg.(pullProgressMsg); ok && p.p.Total > 1_000_000 && p.p.Completed > 0 && p.p.Completed < p.p.Total {
			during = append(during, l.screen())
		}
	}
	l.update(tea.KeyMsg{Type: tea.KeyCtrlP})
	if len(during) == 0 {
		t.Fatal("no screen while the download was part way")
	}
	var bar string
	for _, line := range strings.Split(during[0], "\n") {
		if strings.Contains(line, "⇣ qwen3:14b") {
			bar = line
		}
	}
	for _, want := range []string{"█", "░", "%", " GB/9.0 GB", "/s", "left", "esc stops"} {
		if !strings.Contains(bar, want) {
			t.Fatalf("progress line %q lacks %q", bar, want)
		}
	}
	s := l.screen()
	if !strings.Contains(s, "Downloaded qwen3:14b (9.0 GB in") || !strings.Contains(s, "It is the model now.") || l.m.modelRef() != "qwen3:14b" {
		t.Fatalf("after the download (model %q):\n%s", l.m.modelRef(), s)
	}
	if strings.Contains(s, "⇣ qwen3:14b") {
		t.Fatal("the bar stayed after the download")
	}
	if !contains(l.m.completions("model", ""), "qwen3:14b") {
		t.Fatalf("the new model is not offered: %v", l.m.completions("model", ""))
	}
	// The server's error, as it said it.
	l.typeLine("/pull no-such-model")
	if s := l.screen(); !strings.Contains(s, "The server could not download no-such-model: pull model manifest: file does not exist") {
		t.Fatalf("pull error:\n%s", s)
	}
}

func TestEscStopsADownload(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:8b")
	send := l.m.send
	l.m.send = func(msg tea.Msg) {
		send(msg)
		if p, ok := msg.(pullProgressMsg); ok && p.p.Total > 1_000_000 && p.p.Completed >= p.p.Total/4 && l.m.pull.active != nil && !l.m.pull.stopped {
			l.update(tea.KeyMsg{Type: tea.KeyEsc})
		}
	}
	l.typeLine("/pull qwen3:14b")
	s := l.screen()
	// Stopped part way (where exactly depends on which lines were drawn).
	if !strings.Contains(s, "The download of qwen3:14b stopped after ") || !strings.Contains(s, " GB of 9.0 GB; the server keeps what it has, and /pull qwen3:14b resumes") ||
		strings.Contains(s, "after 9.0 GB of 9.0 GB") || strings.Contains(s, "Downloaded") {
		t.Fatalf("screen:\n%s", s)
	}
	if l.m.modelRef() != "qwen3:8b" || l.m.pull.active != nil {
		t.Fatalf("model %q, active %v", l.m.modelRef(), l.m.pull.active)
	}
}

func TestHeaderShowsTheModelsStateAndUnloadFreesIt(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:8b")
	if h := header(t, l); !strings.Contains(h, "qwen3:8b @ "+strings.TrimPrefix(srv.URL, "http://")+" · cold") {
		t.Fatalf("header before any question: %s", h)
	}
	// A question to a cold model waits for it to load.
	run := fakeRun(l.m, "q")
	feed(l.m, events.Event{Type: events.RunStart, Run: run})
	if h := header(t, l); !strings.Contains(h, " · loading…") {
		t.Fatalf("header while loading: %s", h)
	}
	feed(l.m, tok(run, "first words"))
	if h := header(t, l); !strings.Contains(h, " · loaded") {
		t.Fatalf("header once answering: %s", h)
	}
	l.m.run.active, l.m.run.id = false, ""
	l.typeLine("What is 15% of 340?")
	if h := header(t, l); !strings.Contains(h, " · loaded") || l.m.mstate.info.ContextLength == 0 {
		t.Fatalf("header after a run: %s (%+v)", h, l.m.mstate.info)
	}
	l.typeLine("/model")
	if s := l.screen(); !strings.Contains(s, "▸ qwen3:8b (completion, tools) · loaded:") {
		t.Fatalf("/model does not say the model is loaded:\n%s", s)
	}
	l.typeLine("/unload")
	if s := l.screen(); !strings.Contains(s, "Unloaded qwen3:8b: the server freed its memory") || !strings.Contains(header(t, l), " · cold") {
		t.Fatalf("after /unload:\n%s", s)
	}
	var unloaded bool
	for _, r := range srv.Requests() {
		unloaded = unloaded || r.Unloaded
	}
	if !unloaded {
		t.Fatal("no keep_alive 0 request reached the server")
	}
}

// The state is read on a slow timer only while the workbench is in
// front: a blur stops it, a focus reads at once.
func TestModelStateTimerFollowsFocus(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:8b")
	m := l.m
	m.mstate.every = time.Hour
	if cmd := m.armStateTimer(); cmd == nil {
		t.Fatal("no timer while in front")
	}
	if _, cmd := m.Update(tea.BlurMsg{}); cmd != nil {
		t.Fatal("a blur read the state")
	}
	if _, cmd := m.Update(modelStateTickMsg{}); cmd != nil {
		t.Fatal("the timer read the state in the background")
	}
	if cmd := m.armStateTimer(); cmd != nil {
		t.Fatal("a timer was started in the background")
	}
	_, cmd := m.Update(tea.FocusMsg{})
	if cmd == nil {
		t.Fatal("coming back to the front did not read the state")
	}
	if msg, ok := cmd().(modelStateMsg); !ok || msg.err != nil {
		t.Fatalf("focus read: %#v", msg)
	}
	// Reads between ticks (each run's end makes one) start no second
	// tick: a tick cannot be stopped, so each would hold a goroutine for
	// the whole period.
	if cmd := m.armStateTimer(); cmd == nil {
		t.Fatal("no timer once back in front")
	}
	for range 3 {
		if _, cmd := m.Update(cmd().(modelStateMsg)); cmd != nil {
			t.Fatal("a read while a tick is pending started another")
		}
	}
	_, cmd = m.Update(modelStateTickMsg{})
	if cmd == nil {
		t.Fatal("the tick did not read the state")
	}
	if _, again := m.Update(cmd().(modelStateMsg)); again == nil {
		t.Fatal("the read after a tick did not arm the next")
	}
	// A server that does not list its loaded models is never asked.
	m.opts.Engine = stubEngine{}
	if m.refreshModelState() != nil {
		t.Fatal("a state read for a server without /api/ps")
	}
}

func TestQuestionWithTheServerDownSaysTheServerIsDown(t *testing.T) {
	cfg, _ := config.Load(config.Flags{ConfigPath: writeEmptyConfig(t)})
	cfg.Model = ""
	eng, _ := ollama.New(ot.ClosedURL(t))
	m, err := newModel(context.Background(), Options{Config: cfg, Engine: eng, Registry: builtin.Registry(builtin.Deps{}), Theme: "dark", Bus: events.New()})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(m.checkServer(0)())
	send(m, "hello?")
	s := screen(t, m)
	if !strings.Contains(s, "is not answering, so nothing was sent") || strings.Contains(s, "No model is set") {
		t.Fatalf("screen:\n%s", s)
	}
}

func TestConfiguredModelMissingAtStartIsOffered(t *testing.T) {
	srv := modelsServer(t)
	l := serversLive(t, srv, nil, "qwen3:14b")
	s := l.screen()
	if !strings.Contains(s, "qwen3:14b is not on the server at") || !strings.Contains(s, "ctrl+p downloads it") || strings.Contains(s, "ollama pull") {
		t.Fatalf("screen:\n%s", s)
	}
	l.typeLine("hi")
	if s := l.screen(); !strings.Contains(s, "qwen3:14b is not on the server, so nothing was sent. ctrl+p downloads it") {
		t.Fatalf("a question to the missing model:\n%s", s)
	}
	if len(srv.Chats()) != 0 {
		t.Fatal("the question was sent")
	}
	l.update(tea.KeyMsg{Type: tea.KeyCtrlP})
	if s := l.screen(); !strings.Contains(s, "Downloaded qwen3:14b") || l.m.modelRef() != "qwen3:14b" {
		t.Fatalf("after ctrl+p:\n%s", s)
	}
	l.typeLine("hi")
	if len(srv.Chats()) != 1 {
		t.Fatal("the question did not go once the model was there")
	}
}
