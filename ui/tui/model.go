package tui

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/schedtab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/contexttab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/eventstab"
	"github.com/jarvis-workbench/jarvis/ui/tui/tabs/toolstab"
)

// Minimum terminal size; below it the TUI says so instead of garbling.
const (
	MinWidth  = 60
	MinHeight = 20
)

// model is the one top-level Bubble Tea model.
type model struct {
	opts Options
	ctx  context.Context
	send func(tea.Msg)
	// firstPaint is the terminal Init paints the first frame on (see
	// firstpaint.go); nil paints nothing.
	firstPaint terminalOut
	// releaseAfter is how long after a run the idle workbench returns
	// freed memory (see idlememory.go); 0 never, as in model tests.
	releaseAfter time.Duration
	now          func() time.Time

	width, height int
	st            *styles
	themeName     string
	md            *markdown
	// frameBytes is the size of the last frame View made.
	frameBytes int

	transcript *transcript
	input      *inputBox
	pane       *tabs.Pane
	sched      *schedtab.Tab
	evals      evalState
	dialog     dialog
	overlays   overlayStack
	sessions   sessionsOverlay
	suggest    []string

	// The side pane's tabs the model feeds (sched above is the
	// Scheduler tab's component, nil when the scheduler does not run).
	tools  *toolstab.Tab
	log    *eventstab.Tab
	ctxTab *contexttab.Tab

	// What the next run uses.
	modelName, agentName, system string
	enabled                      []string
	// offered is enabled as rebuildTools last expanded it (its patterns
	// replaced by the tools they matched), for enabledTools: the header
	// and the Tools tab read it every frame.
	offered, offeredFor []string
	engOpts             engine.Options
	executor            *tools.Executor
	// view is the model's side of the conversation: its window and
	// calibration carry over from run to run.
	view *agent.ModelView
	// ctxSeq numbers the Context tab's counts (and compactions), so a
	// late answer never replaces a newer one; compactItem is the
	// transcript's line of a /compact in progress.
	ctxSeq      int
	compactItem *compactLine
	// srvs are the model servers (the current model's is opts.Engine),
	// catalog their models; pull is the download component, mstate the
	// current model's state on its server, missing the model found not
	// to be there (or unable to chat).
	srvs    servers
	catalog catalog
	pull    pullBar
	mstate  modelState
	missing string
	// toolTokens is what each tool's definition costs in the prompt (the
	// Tools tab shows it).
	toolTokens map[string]int
	// The window as the last request took it (the header's word on it).
	// windowStale says it was another conversation's or window's (after
	// /new, opening a session, /ctx, /compact): the next estimate of the
	// next request (contextMsg) takes its place.
	lastWindow, lastPrompt int
	lastEstimated          bool
	windowStale            bool
	compacting             bool
	// ctxSet is the window the person set for this session (/ctx,
	// --num-ctx, a reopened session's), 0 when none: the session saves it.
	ctxSet    int
	approvals *tools.Approvals
	appr      approvalState
	specs     map[string]tools.Spec
	// grantKinds say what a grant of each tool covers (the Tools tab's A).
	grantKinds map[string]tools.ScopeKind

	// The conversation is owned by the running agent between startRun and
	// runDoneMsg; the model only touches it when idle.
	conv      *agent.Conversation
	convo     convoState
	lease     leaseState
	sessionID string
	title     string
	totals    events.Usage
	toolCalls int

	// MCP servers: a change signal rebuilds the tools (mcpDirty when it
	// came during a run).
	mcpChanges <-chan struct{}
	mcpStop    func()
	mcpDirty   bool
	mcpDown    map[string]bool // servers whose failure the transcript was told (mcp.go)
	mcpOffSaid bool            // the servers with their tools off were told (mcp.go)

	run       runState
	lastReply *assistantItem

	expand, showThinking bool
	mouse                bool
	// lastTypedAt is when the last key was typed as text; held is an
	// answer waiting to stand, paneTyped the printable keys the focused
	// side pane took in the current run of typing (see guard.go).
	lastTypedAt time.Time
	held        *heldKey
	paneTyped   []tea.KeyMsg
	quitArmed   time.Time
	// saves is the write queue's state; quitting is set while quitting
	// waits for it (until quitBy).
	saves      store.QueueState
	quitting   bool
	quitBy     time.Time
	ticking    bool
	server     serverState
	helpScroll int
	// status is a transient message in the status bar; statusSeq tells
	// the tick that clears it whether a newer message replaced it.
	status    string
	statusSeq int
	// statusTimer schedules the end of a status message (tea.Tick; tests
	// that run commands in line leave it out).
	statusTimer func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
}

func newModel(ctx context.Context, opts Options) (*model, error) {
	cfg := opts.Config
	st, md, err := loadTheme(opts.Theme)
	if err != nil {
		return nil, err
	}
	engOpts, _ := cfg.EngineOptions()
	m := &model{
		opts: opts, ctx: ctx, now: time.Now, send: func(tea.Msg) {}, releaseAfter: releaseMemoryAfter,
		st: st, themeName: opts.Theme, md: md,
		transcript: newTranscript(), input: newInputBox(),
		modelName: cfg.Model, agentName: cfg.Agent, system: cfg.System, engOpts: engOpts,
		enabled: slices.Clone(cfg.Tools), approvals: tools.NewApprovals(),
		conv: &agent.Conversation{}, convo: newConvoState(), mouse: !opts.NoMouse,
		view:        agent.NewModelView(opts.Engine, cfg.Model, cfg.ViewOptions()),
		statusTimer: tea.Tick,
		ctxSet:      flagWindow(cfg),
	}
	if opts.Scheduler != nil {
		m.sched = schedtab.New(schedtab.Options{Scheduler: opts.Scheduler, Validate: opts.ValidateTask, ToolNames: opts.Registry.Names})
	}
	m.pane = m.newPane()
	m.initServers()
	closeSpare, err := m.rebuildTools(m.enabled, true)
	if err != nil {
		return nil, err
	}
	if closeSpare != nil {
		closeSpare() // before the program starts: no frame waits for it
	}
	return m, nil
}

// rebuildTools builds the executor for names (the session's approvals are
// kept) and refreshes the specs the side pane lists. An MCP tool whose
// server is still starting stays enabled and joins when it appears.
//
// A tool that stays enabled keeps its instance, so a change of tools does
// not restart the REPL and lose its variables; fresh builds every tool
// anew (another conversation). MCP tools are always taken from the
// registry: a restarted server offers new instances. The tools left out
// are closed by the returned command, off the UI goroutine: closing a
// REPL waits for its process to end.
func (m *model) rebuildTools(names []string, fresh bool) (tea.Cmd, error) {
	held := map[string]tools.Tool{}
	if m.executor != nil && !fresh {
		for _, t := range m.executor.Tools() {
			if name := t.Spec().Name; !m.isMCPTool(name) {
				held[name] = t
			}
		}
	}
	var list, built []tools.Tool
	// fail closes what was built for nothing; nothing has run it, so
	// closing it here is instant.
	fail := func(err error) (tea.Cmd, error) {
		if c := closeTools(built...); c != nil {
			c()
		}
		return nil, err
	}
	// A pattern stands for the tools it matches now; it stays in the
	// list, so the tools of a server that comes up later join it then.
	expanded := m.opts.Registry.Expand(names)
	for _, n := range expanded {
		if t, ok := held[n]; ok {
			list = append(list, t)
			continue
		}
		if !m.opts.Registry.Has(n) && m.mcpPending(n) {
			continue
		}
		t, err := m.opts.Registry.Build(n, m.opts.ToolDeps)
		if err != nil {
			return fail(err)
		}
		list, built = append(list, t), append(built, t)
	}
	if m.appr.policy == nil || m.appr.policy.Approvals() != m.approvals {
		m.appr.policy = m.newPolicy() // a new session starts with no approvals of its own
	}
	exec, err := app.NewExecutor(list, m.appr.policy, m.opts.Bus)
	if err != nil {
		return fail(err)
	}
	// Kept is by what would be closed, not by the wrapper: a tool built
	// again over the same instance (an MCP tool) must stay open. A closer
	// that cannot be compared cannot be told apart, so it is left open
	// until the program ends.
	kept := map[io.Closer]bool{}
	for _, t := range list {
		if c := closerOf(t); c != nil && reflect.ValueOf(c).Comparable() {
			kept[c] = true
		}
	}
	var spare []tools.Tool
	if m.executor != nil {
		for _, t := range m.executor.Tools() {
			if c := closerOf(t); c != nil && reflect.ValueOf(c).Comparable() && !kept[c] {
				spare = append(spare, t)
			}
		}
	}
	m.executor, m.enabled = exec, names
	m.offered, m.offeredFor = expanded, names
	m.noteEnabled(expanded)
	m.specs, m.grantKinds = map[string]tools.Spec{}, map[string]tools.ScopeKind{}
	for _, t := range exec.Tools() {
		s := t.Spec()
		m.specs[s.Name], m.grantKinds[s.Name] = s, tools.GrantKind(t)
	}
	// The specs of the tools that are off, for the Tools tab: built to be
	// read, never run, and closed with the rest.
	for _, n := range m.opts.Registry.Names() {
		if _, ok := m.specs[n]; ok {
			continue
		}
		if t, err := m.opts.Registry.Build(n, m.opts.ToolDeps); err == nil {
			m.specs[n], m.grantKinds[n] = t.Spec(), tools.GrantKind(t)
			spare = append(spare, t)
		}
	}
	m.countToolTokens()
	return closeTools(spare...), nil
}

// countToolTokens estimates what each tool costs in the prompt, with the
// view's calibration. It is local arithmetic (no server), done when the
// tools change and after each run.
func (m *model) countToolTokens() {
	specs := make([]tools.Spec, 0, len(m.specs))
	for _, s := range m.specs {
		specs = append(specs, s)
	}
	defs := make([]engine.ToolDef, len(specs))
	for i, s := range specs {
		defs[i] = engine.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	m.toolTokens = m.view.ToolTokens(defs)
}

// closeTools returns a command that ends the tools that hold processes (a
// REPL); nil when there are none to close.
func closeTools(list ...tools.Tool) tea.Cmd {
	var closers []io.Closer
	for _, t := range list {
		if c := closerOf(t); c != nil {
			closers = append(closers, c)
		}
	}
	if len(closers) == 0 {
		return nil
	}
	return func() tea.Msg {
		for _, c := range closers {
			c.Close()
		}
		return nil
	}
}

// closerOf finds an io.Closer under any settings wrappers of t.
func closerOf(t tools.Tool) io.Closer {
	for {
		if c, ok := t.(io.Closer); ok {
			return c
		}
		u, ok := t.(interface{ Unwrap() tools.Tool })
		if !ok {
			return nil
		}
		t = u.Unwrap()
	}
}

// shutdown runs after the program ends: stop the run, answer dialogs, end
// tool processes.
func (m *model) shutdown() {
	if m.run.cancel != nil {
		m.run.cancel()
	}
	m.cancelEval()
	if m.mcpStop != nil {
		m.mcpStop()
	}
	m.stopPull()
	m.pane.Close()
	m.dialog.denyAll()
	m.dropLease()
	if m.executor != nil {
		if c := closeTools(m.executor.Tools()...); c != nil {
			c()
		}
	}
}

func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.paintFirstFrame(), m.checkServer(0), m.loadAlways(), m.refreshCatalog(false), m.refreshModelState()}
	if m.opts.Continue && m.opts.Sessions != nil {
		cmds = append(cmds, m.loadLastSession())
	}
	cmds = append(cmds, m.pane.Init(), m.releaseMemoryLater(startupSettles))
	if m.opts.MCP != nil {
		ch, stop := m.opts.MCP.Subscribe()
		m.mcpStop = stop
		m.mcpChanges = ch
		cmds = append(cmds, m.waitMCP())
	}
	return tea.Batch(cmds...)
}

func (m *model) renderCtx(width int) renderCtx {
	return renderCtx{width: width, st: m.st, md: m.md, expand: m.expand, thinking: m.showThinking, now: m.now()}
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		m.clampViews()
		return m, nil
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	case tea.MouseMsg:
		return m, m.handleMouse(msg)
	case eventsMsg:
		return m, m.applyEvents(msg)
	case confirmRequestMsg:
		m.dialog.push(msg, m.now())
		m.overlays.push(confirmOverlay{m})
		return m, m.ensureTick()
	case confirmGoneMsg:
		m.dialog.remove(msg.callID, m.now())
		return m, nil
	case editorDoneMsg:
		return m, m.editorDone(msg)
	case contentsDoneMsg:
		return m, m.contentsDone(msg)
	case changesMsg:
		m.showChanges(msg)
		return m, nil
	case alwaysMsg:
		m.applyAlways(msg)
		return m, nil
	case alwaysDoneMsg:
		return m, m.alwaysDone(msg)
	case runDoneMsg:
		return m, m.finishRun(msg)
	case releaseMemoryMsg:
		return m, m.releaseMemory(msg)
	case tickMsg:
		m.ticking = false
		if m.quitting && !m.now().Before(m.quitBy) {
			return m, tea.Quit
		}
		return m, tea.Batch(m.commitHeld(), m.ensureTick())
	case saveStateMsg:
		return m, m.applySaveState(store.QueueState(msg))
	case contextMsg:
		m.applyContext(msg)
		return m, nil
	case compactDoneMsg:
		return m, m.finishCompact(msg)
	case ctxSetMsg:
		return m, m.ctxSetDone(msg)
	case serverMsg:
		return m, m.handleServer(msg)
	case sessionCreatedMsg:
		if msg.runID == m.run.id || m.sessionID == "" {
			m.sessionID = msg.id
			m.takeLease(msg.lease)
		} else {
			msg.lease.Release()
		}
		return m, nil
	case leaseTriedMsg:
		return m, m.leaseTried(msg)
	case sessionLoadedMsg:
		return m, m.openSession(msg)
	case sessionListMsg:
		m.showSessions(msg)
		return m, nil
	case noticeMsg:
		m.addNote(msg.text, msg.isErr)
		return m, nil
	case statusMsg:
		return m, m.setStatus(string(msg))
	case statusClearMsg:
		if msg.id == m.statusSeq {
			m.status = ""
		}
		return m, nil
	case mcpChangedMsg:
		return m, m.mcpChanged()
	case dialogBoxResult:
		return m, m.dialogBoxDone(msg)
	case inputResult:
		if c, ok := msg.msg.(clipboardMsg); ok {
			if c.err != nil {
				return m, m.setStatus(nothingPasted(c.err))
			}
			// As a terminal's paste: an image's path offers the image.
			return m, tea.Batch(m.input.update(c.key()), m.pasted(c.text))
		}
		return m, m.input.update(msg.msg)
	}
	if cmd, ok := m.convoMsg(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.evalUpdate(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.serversUpdate(msg); ok {
		return m, cmd
	}
	// What is left may be a tab's own (the results of its commands).
	return m, m.pane.Update(msg)
}

// ensureTick keeps a 100 ms tick going while something moves on screen
// (a run, a tool timer, a dialog's grace period), and lets it stop when
// nothing does, so an idle TUI uses no CPU.
func (m *model) ensureTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	active := m.run.active || m.quitting || m.dialog.inGrace(m.now()) || m.held != nil
	if !active {
		return nil
	}
	m.ticking = true
	return tick()
}

// noticeMsg and statusMsg let commands report back.
type noticeMsg struct {
	text  string
	isErr bool
}
type statusMsg string

// statusClearMsg ends the status message numbered id, unless a newer one
// replaced it.
type statusClearMsg struct{ id int }

// statusTTL is how long a transient status message stays.
const statusTTL = 5 * time.Second

// setStatus shows a transient message in the status bar for statusTTL.
func (m *model) setStatus(text string) tea.Cmd { return m.setStatusFor(text, statusTTL) }

func (m *model) setStatusFor(text string, d time.Duration) tea.Cmd {
	m.statusSeq++
	m.status = safe.Text(format.OneLine(text, 0))
	id := m.statusSeq
	return m.statusTimer(d, func(time.Time) tea.Msg { return statusClearMsg{id: id} })
}

// clampViews keeps scroll positions and cursors in range after the screen
// changed size.
func (m *model) clampViews() {
	if m.width < MinWidth || m.height < MinHeight {
		return
	}
	m.dialog.clampScroll(m.st, m.width, m.transcript.height)
	m.clampPane()
	m.clampHelp()
	if n := len(m.sessions.list); n > 0 {
		m.sessions.cursor = min(max(m.sessions.cursor, 0), n-1)
	}
}

func (m *model) addNote(text string, isErr bool) {
	m.transcript.add(&noteItem{text: say(text), isErr: isErr})
}

// layout sizes the components for the window.
func (m *model) layout() {
	if m.width < MinWidth || m.height < MinHeight {
		return
	}
	m.input.setWidth(m.transcriptWidth())
	m.transcript.height = m.bodyHeight()
	m.pane.Resize(m.paneWidth(), m.transcript.height)
}

func (m *model) paneWidth() int {
	if !m.pane.Visible {
		return 0
	}
	return min(max(m.width*38/100, 30), 64)
}

func (m *model) transcriptWidth() int {
	if w := m.paneWidth(); w > 0 {
		return m.width - w - 1
	}
	return m.width
}

func (m *model) bodyHeight() int {
	h := m.height - 1 /*header*/ - 1 /*status*/ - (m.input.ta.Height() + 1) /*input + rule*/ - m.chipRows()
	if len(m.suggest) > 0 {
		h--
	}
	h -= m.pull.height()
	return max(h, 1)
}

// stateText is the left part of the status bar.
func (m *model) stateText() string {
	switch {
	case m.dialog.open():
		return "waiting for your approval"
	case m.run.active && m.run.cancel == nil:
		return "cancelling…"
	case m.run.active:
		if name := m.runningTool(); name != "" {
			return "running " + name + " · " + elapsed(m.now().Sub(m.run.start))
		}
		what := "waiting for the model"
		if m.run.current != nil {
			what = m.run.current.activity()
		}
		return what + " · " + elapsed(m.now().Sub(m.run.start)) + " · esc cancels"
	case m.savingText() != "":
		return m.savingText()
	case m.status != "":
		return m.status
	}
	return "ready"
}

func (m *model) runningTool() string {
	if m.run.current == nil {
		return ""
	}
	for _, p := range m.run.current.panels {
		if p.state == panelRunning {
			return p.tool
		}
	}
	return ""
}

// totalsText is the session's totals, the run in progress included, so
// the status bar moves while a long run goes on.
func (m *model) totalsText() string {
	t := m.totals
	t.Add(m.run.usage)
	return fmt.Sprintf("%s in · %s out · %s · %s", format.Tokens(t.PromptTokens),
		format.Tokens(t.OutputTokens), format.Cost(t.CostUSD+t.ToolCostUSD, false), format.Count(m.toolCalls, "tool call"))
}

func (m *model) hostText() string {
	h := m.opts.Engine.Host()
	h = strings.TrimPrefix(strings.TrimPrefix(h, "http://"), "https://")
	return h
}
