package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// The model servers of the workbench: the default one (Options.Engine)
// and the named endpoints of the config, whose models are chosen as
// NAME/MODEL. The current model's server is m.opts.Engine, which /model
// switches; the header, the runs and the checks all use it.

// servers is what the model knows of its servers.
type servers struct {
	def   *app.Server
	named []*app.Server
	// current is the endpoint of the current model ("" the default).
	current string
	// prev is the model /model switched from, to go back to when the
	// new one turns out not to be on its server.
	prev, prevEndpoint string
}

// find returns the endpoint called name ("" the default server).
func (s *servers) find(name string) (*app.Server, bool) {
	if name == "" {
		return s.def, true
	}
	for _, e := range s.named {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

func (s *servers) all() []*app.Server { return append([]*app.Server{s.def}, s.named...) }

// initServers sets up the servers from the options and puts the
// configured model (which may be NAME/MODEL) on its own.
func (m *model) initServers() {
	def := m.opts.Server
	if def == nil {
		d, _ := engine.DriverFor(config.DefaultEngine)
		def = &app.Server{Kind: d.Kind, Driver: d}
	}
	def = &app.Server{Name: "", Kind: def.Kind, Driver: def.Driver, Engine: m.opts.Engine, Err: def.Err}
	m.srvs = servers{def: def, named: m.opts.Endpoints}
	if ep, name := m.opts.Config.SplitModel(m.modelName); ep != "" {
		m.useServer(ep, name)
	}
}

// useServer makes model on endpoint the current model: the runs, the
// checks and the header go to that server from now on.
func (m *model) useServer(endpoint, model string) {
	e, _ := m.srvs.find(endpoint)
	if endpoint != m.srvs.current || m.opts.Engine != e.Engine {
		// Another server: another view of the conversation (the window
		// and calibration are the server's), with the person's /ctx.
		m.opts.Engine = e.Engine
		m.view = agent.NewModelView(e.Engine, model, m.view.Options())
		m.server = serverState{}
	}
	m.srvs.current = endpoint
	m.modelName, m.missing = model, ""
	m.view.SetModel(model)
	m.lastWindow = 0
	m.mstate.reset()
}

// modelRef is the current model as /model takes it: NAME/MODEL on an
// endpoint.
func (m *model) modelRef() string { return config.JoinModel(m.srvs.current, m.modelName) }

// currentServer is the current model's server.
func (m *model) currentServer() *app.Server {
	if e, ok := m.srvs.find(m.srvs.current); ok {
		return e
	}
	return m.srvs.def
}

// serverName names the current server in messages: its kind's label and
// version ("Ollama 0.17.4"), or the version it reports alone for servers
// whose version string names them.
func (m *model) serverName(version string) string {
	d := m.currentServer().Driver
	switch {
	case version == "":
		if d.CanPull {
			return d.Label
		}
		return "the " + d.Label
	case d.CanPull:
		return d.Label + " " + version
	}
	return version
}

// catalogModel is one model of one server, as /model lists it.
type catalogModel struct {
	endpoint, name string
	// caps is nil when the server did not say.
	caps []string
}

func (c catalogModel) ref() string { return config.JoinModel(c.endpoint, c.name) }

// chats reports whether the model can answer (an embedding-only model
// cannot); a model whose capabilities are unknown is taken to.
func (c catalogModel) chats() bool {
	return c.caps == nil || slices.Contains(c.caps, engine.CapCompletion) || !slices.Contains(c.caps, engine.CapEmbedding)
}

// catalog is the models of every server, from the last listing.
type catalog struct {
	loaded bool
	models []catalogModel
	// errs are the servers that could not be listed, by endpoint.
	errs map[string]error
	// seq numbers the listings started, applied the one shown: a
	// listing that started before the one shown is not shown over it.
	seq, applied int
}

// lookup finds name on endpoint; listed says the endpoint was listed.
func (c *catalog) lookup(endpoint, name string) (cm catalogModel, found, listed bool) {
	if !c.loaded {
		return catalogModel{}, false, false
	}
	if _, failed := c.errs[endpoint]; failed {
		return catalogModel{}, false, false
	}
	for _, x := range c.models {
		if x.endpoint == endpoint && (x.name == name || engine.SameModel(x.name, name)) {
			return x, true, true
		}
	}
	return catalogModel{}, false, true
}

// catalogMsg is a fresh listing; show asks for it to be shown (/model
// without a name).
type catalogMsg struct {
	seq    int
	models []catalogModel
	errs   map[string]error
	show   bool
}

// refreshCatalog lists the models of every server, side by side, with
// their capabilities (cached by the engines after the first listing).
func (m *model) refreshCatalog(show bool) tea.Cmd {
	m.catalog.seq++
	seq, eps := m.catalog.seq, m.srvs.all()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out := catalogMsg{seq: seq, errs: map[string]error{}, show: show}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, e := range eps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				list, err := listWithCaps(ctx, e)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					out.errs[e.Name] = err
					return
				}
				out.models = append(out.models, list...)
			}()
		}
		wg.Wait()
		order := map[string]int{}
		for i, e := range eps {
			order[e.Name] = i
		}
		sort.SliceStable(out.models, func(i, j int) bool { return order[out.models[i].endpoint] < order[out.models[j].endpoint] })
		return out
	}
}

// listWithCaps lists one server's models, asking four at a time what
// each can do.
func listWithCaps(ctx context.Context, e *app.Server) ([]catalogModel, error) {
	if e.Err != nil {
		return nil, e.Err
	}
	infos, err := e.Engine.ListModels(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]catalogModel, len(infos))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, info := range infos {
		out[i] = catalogModel{endpoint: e.Name, name: info.Name}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if caps, err := e.Engine.Capabilities(ctx, info.Name); err == nil {
				out[i].caps = caps
			}
		}()
	}
	wg.Wait()
	return out, nil
}

func (m *model) applyCatalog(msg catalogMsg) {
	if msg.seq > m.catalog.applied {
		m.catalog = catalog{loaded: true, models: msg.models, errs: msg.errs, seq: m.catalog.seq, applied: msg.seq}
	}
	if msg.show {
		m.addNote(m.catalogText(), false)
	}
}

// catalogText is /model's list: every server's models with what each can
// do, the current one marked, and the servers that could not be listed.
func (m *model) catalogText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Model: %s. Switch with /model NAME (tab completes).", orNone(m.modelRef()))
	for _, e := range m.srvs.all() {
		where := "The server at " + hostOf(e.Engine)
		if e.Name != "" {
			where = "Endpoint " + e.Name + " (" + hostOf(e.Engine) + ")"
		}
		if err, failed := m.catalog.errs[e.Name]; failed {
			fmt.Fprintf(&b, "\n%s could not be listed: %s", where, strings.TrimSuffix(explain(err), "."))
			continue
		}
		var rows []string
		for _, c := range m.catalog.models {
			if c.endpoint != e.Name {
				continue
			}
			mark := "  "
			if c.endpoint == m.srvs.current && (c.name == m.modelName || engine.SameModel(c.name, m.modelName)) {
				mark = "▸ "
			}
			row := mark + c.ref()
			switch {
			case c.caps == nil:
				row += " (capabilities unknown: the server does not say)"
			case !c.chats():
				row += " (" + strings.Join(c.caps, ", ") + "; cannot chat)"
			default:
				row += " (" + strings.Join(c.caps, ", ") + ")"
			}
			if mark != "  " && m.mstate.state == stateLoaded {
				row += " · loaded: " + loadedText(m.mstate.info, m.now())
			}
			rows = append(rows, row)
		}
		if len(rows) == 0 {
			fmt.Fprintf(&b, "\n%s has no models.", where)
			continue
		}
		fmt.Fprintf(&b, "\n%s has %s:\n%s", where, format.Count(len(rows), "model"), strings.Join(rows, "\n"))
	}
	return b.String()
}

func hostOf(e engine.InferenceEngine) string {
	return strings.TrimPrefix(strings.TrimPrefix(e.Host(), "http://"), "https://")
}

// modelCommand is /model: without a name, the list of every server's
// models; with one, a switch to it, refused for a model that is not on
// its server (with an offer to download it from Ollama) or cannot chat.
func (m *model) modelCommand(arg string) tea.Cmd {
	if arg == "" {
		return m.refreshCatalog(true)
	}
	endpoint, name := m.opts.Config.SplitModel(arg)
	e, _ := m.srvs.find(endpoint)
	if e.Err != nil {
		m.addNote(e.Err.Error(), true)
		return nil
	}
	known, found, listed := m.catalog.lookup(endpoint, name)
	_, pulls := e.Engine.(engine.Puller)
	switch {
	case found && !known.chats():
		m.addNote(fmt.Sprintf("%s is an embedding model (%s): it cannot chat, so the model stays %s.", arg, strings.Join(known.caps, ", "), orNone(m.modelRef())), true)
		return nil
	case listed && !found && pulls:
		// Ollama names models exactly: the listing is the answer.
		m.notOnServer(endpoint, name, true)
		return nil
	}
	m.srvs.prev, m.srvs.prevEndpoint = m.modelName, m.srvs.current
	m.useServer(endpoint, name)
	note := "Model set to " + m.modelRef()
	if found && known.caps != nil {
		note += " (" + strings.Join(known.caps, ", ") + ")"
	}
	m.addNote(note+".", false)
	return tea.Batch(m.checkModel(name), m.refreshModelState())
}

// modelCompletions are the models /model may switch to: every server's,
// as NAME/MODEL for the endpoints', without the ones that cannot chat.
func (m *model) modelCompletions() []string {
	if !m.catalog.loaded {
		return m.server.models
	}
	var out []string
	for _, c := range m.catalog.models {
		if c.chats() {
			out = append(out, c.ref())
		}
	}
	return out
}

// notOnServer says a model is not on its server, in the workbench's
// words, and offers to download it where the server can (Ollama).
// switchTo says the download, once done, makes it the current model.
func (m *model) notOnServer(endpoint, name string, switchTo bool) {
	e, _ := m.srvs.find(endpoint)
	ref := config.JoinModel(endpoint, name)
	text := fmt.Sprintf("%s is not on the server at %s.", ref, hostOf(e.Engine))
	if _, ok := e.Engine.(engine.Puller); ok {
		text += fmt.Sprintf(" Press ctrl+p to download it (or /pull %s), or pick another with /model (tab lists them).", ref)
		m.pull.offer = &pullTarget{endpoint: endpoint, model: name, switchTo: switchTo}
		m.layout()
	} else {
		var served []string
		for _, c := range m.catalog.models {
			if c.endpoint == endpoint && c.chats() {
				served = append(served, c.ref())
			}
		}
		text += " This server serves only the models it was started with"
		if len(served) > 0 {
			text += ": " + strings.Join(served, ", ")
		}
		text += ". Pick one with /model."
	}
	if m.modelName != "" && !(endpoint == m.srvs.current && name == m.modelName) {
		text += " The model stays " + m.modelRef() + "."
	}
	m.addNote(text, true)
}

// modelMissing handles a check that found the current model missing:
// back to the model /model switched from, if any, with the offer.
func (m *model) modelMissing(err error) bool {
	var nf *engine.ModelNotFoundError
	if !errors.As(err, &nf) || nf.Model != m.modelName {
		return false
	}
	endpoint, name := m.srvs.current, m.modelName
	if m.srvs.prev != "" && !(m.srvs.prev == name && m.srvs.prevEndpoint == endpoint) {
		m.useServer(m.srvs.prevEndpoint, m.srvs.prev)
		m.srvs.prev, m.srvs.prevEndpoint = "", ""
		m.notOnServer(endpoint, name, true)
		return true
	}
	m.notOnServer(endpoint, name, false)
	m.missing = m.modelRef()
	return true
}

// refusesEmbedding handles a check that found the current model cannot
// chat: back to the model before it, if any.
func (m *model) refusesEmbedding(caps []string) bool {
	if caps == nil || slices.Contains(caps, engine.CapCompletion) || !slices.Contains(caps, engine.CapEmbedding) {
		return false
	}
	ref := m.modelRef()
	if m.srvs.prev != "" {
		m.useServer(m.srvs.prevEndpoint, m.srvs.prev)
		m.srvs.prev, m.srvs.prevEndpoint = "", ""
		m.addNote(fmt.Sprintf("%s is an embedding model (%s): it cannot chat, so the model stays %s.", ref, strings.Join(caps, ", "), m.modelRef()), true)
		return true
	}
	m.addNote(fmt.Sprintf("%s is an embedding model (%s): it cannot chat. Pick a chat model with /model (tab lists them).", ref, strings.Join(caps, ", ")), true)
	m.missing = ref
	return true
}

// serversUpdate handles the messages of the servers' parts: listings,
// downloads, the model's state, the terminal's focus.
func (m *model) serversUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case catalogMsg:
		m.applyCatalog(msg)
		return nil, true
	case pullProgressMsg:
		m.applyPullProgress(msg)
		return nil, true
	case pullDoneMsg:
		return m.finishPull(msg), true
	case modelStateMsg:
		return m.applyModelState(msg), true
	case modelStateTickMsg:
		return m.modelStateTick(), true
	case unloadedMsg:
		return m.applyUnloaded(msg), true
	case tea.FocusMsg:
		return m.focusChanged(true), true
	case tea.BlurMsg:
		return m.focusChanged(false), true
	}
	return nil, false
}

// priceAt prices a run's replies by the prices of the endpoint its model
// is on ("" the default server's).
func (m *model) priceAt(endpoint string) func(model string, in, out int) float64 {
	cfg := m.opts.Config
	return func(model string, in, out int) float64 { return cfg.PriceAt(endpoint, model).Cost(in, out) }
}

// fixedWindowNote is what /ctx says on a server that fixes the window when
// it loads the model (every OpenAI-compatible one): nothing is reloaded,
// jarvis only records the size, capped at what the server says it runs
// with.
func (m *model) fixedWindowNote(n int, w agent.Window) string {
	if n == 0 {
		return fmt.Sprintf("jarvis takes the window from the server again: %s tokens, %s. Nothing is reloaded: the server fixed its window when it loaded the model.", groupInt(w.Tokens), say(w.Source))
	}
	if w.Asked > 0 {
		return m.view.CapNotice(w) + " Nothing is reloaded: the server fixed its window when it loaded the model."
	}
	return fmt.Sprintf("jarvis now takes the window to be %s tokens and fits every request to it. Nothing is reloaded: the server fixed its window when it loaded the model, so %s should be the size it runs with (llama-server -c, vllm serve --max-model-len, LM Studio's context length).", groupInt(n), groupInt(n))
}
