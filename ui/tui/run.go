package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// runState is what a running turn has. active is set from startTurn to
// runDoneMsg; cancel is nil once the turn was cancelled and is stopping
// (the status bar says "cancelling…"). The confirmations it waits for are
// the dialog's queue (m.dialog), which cancelling denies.
type runState struct {
	active bool
	// id is the run's id on the bus (its events carry it); seq counts
	// the runs started, so a late answer of an earlier one is known.
	id  string
	seq int
	// start is when it started, model the model it runs with (the
	// current one may change under it).
	start  time.Time
	model  string
	cancel context.CancelFunc
	// question is the question it answers, current the answer it
	// streams into.
	question *userItem
	current  *assistantItem
	// usage is what it has used so far, until it is added to the totals.
	usage events.Usage
}

// runDoneMsg ends a run.
type runDoneMsg struct {
	runID  string
	result *agent.Result
	err    error
}

// sessionCreatedMsg reports the session a run created, and its lease.
type sessionCreatedMsg struct {
	runID, id string
	lease     *sessions.Lease
}

// startRun sends text to the agent, with the images attached to it. The
// run happens in a command; its events come back through the bus and its
// end as runDoneMsg.
func (m *model) startRun(text string) tea.Cmd {
	return m.startTurn(agent.Input{Text: text, Images: m.takeImages()}, nil)
}

// startTurn runs the agent on in. question is the question already shown
// when the run answers it again (in.Again); otherwise the run's question
// is added to the transcript.
func (m *model) startTurn(in agent.Input, question *userItem) tea.Cmd {
	if note := m.cannotSend(); note != "" {
		m.addNote(note, true)
		m.keepImages(in)
		return nil
	}
	if m.compacting {
		m.addNote("The conversation is being compacted; send when it is done.", true)
		m.keepImages(in)
		return nil
	}
	if note := m.heldNote("asked"); note != "" {
		m.addNote(note, true)
		m.keepImages(in)
		return nil
	}
	m.run.seq++
	m.run.id = fmt.Sprintf("chat-%d", m.run.seq)
	ctx, cancel := context.WithCancel(m.ctx)
	ctx = events.WithRun(ctx, events.RunInfo{ID: m.run.id})
	m.run.cancel, m.run.active, m.run.start, m.status = cancel, true, m.now(), ""
	m.run.usage, m.run.model = events.Usage{}, m.modelName
	if question == nil {
		question = &userItem{text: in.Text, images: in.Images}
		m.transcript.add(question)
	}
	m.run.question = question
	m.run.current = newAssistantItem()
	m.transcript.add(m.run.current)
	m.transcript.setLive(m.run.current)
	m.transcript.bottom()

	meta := m.setupMeta()
	m.recordSetup(meta)
	meta.Title = question.text
	rec := m.newRecorder(in, question, m.run.current, meta)
	// The audit log records the session, which the first message may
	// create while the run goes on.
	ctx = tools.WithSession(ctx, rec.session)
	turn := m.turn()
	turn.OnMessage = rec.record
	ag, err := turn.Build()
	if err != nil {
		cancel()
		m.run.active, m.run.cancel = false, nil
		m.convo.rec = nil
		m.run.current.note(explain(err), true)
		return nil
	}
	conv, runID := m.conv, m.run.id
	return tea.Batch(func() tea.Msg {
		res, err := ag.Answer(ctx, conv, in)
		return runDoneMsg{runID: runID, result: res, err: err}
	}, m.ensureTick())
}

// turn is how the next question is run: the session's model, agent,
// tools (kept across turns), system prompt, options and model view.
func (m *model) turn() app.Turn {
	return app.Turn{
		Engine: m.opts.Engine, Model: m.modelName, Agent: m.agentName, Executor: m.executor, Bus: m.opts.Bus,
		System: m.system, Options: m.engOpts, MaxTurns: m.opts.Config.MaxTurns, View: m.view,
		Price: m.priceAt(m.srvs.current),
	}
}

// cancelRun stops the running turn: the stream stops, running tools get
// their context cancelled, pending dialogs are denied.
func (m *model) cancelRun() {
	if !m.run.active || m.run.cancel == nil {
		return
	}
	m.run.cancel()
	m.run.cancel = nil
	m.dialog.denyAll()
}

// applyEvents folds a batch of events into the transcript and the log.
func (m *model) applyEvents(batch eventsMsg) tea.Cmd {
	var cmds []tea.Cmd
	for _, e := range batch {
		// Every tab sees every event: the Events tab logs it, the
		// Scheduler tab follows its tasks'.
		cmds = append(cmds, m.pane.Update(e))
		if e.Type == events.SchedulerTaskStart || e.Type == events.SchedulerTaskEnd {
			continue
		}
		if e.Run.ID != m.run.id || m.run.current == nil {
			continue
		}
		m.modelRunEvent(e)
		m.applyRunEvent(e)
	}
	return tea.Batch(append(cmds, m.ensureTick())...)
}

func (m *model) applyRunEvent(e events.Event) {
	cur := m.run.current
	switch e.Type {
	case events.Token:
		cur.appendText(e.Text)
	case events.Thinking:
		cur.appendThinking(e.Text)
	case events.TurnStart:
		cur.endCompacting()
		if c := e.Turn.Context; c != nil && c.Window > 0 {
			m.lastWindow, m.lastPrompt, m.lastEstimated = c.Window, c.PromptTokens, true
			m.windowStale = false
		}
	case events.TurnEnd:
		cur.endTurn(e.Turn)
		if m.run.active {
			m.run.usage.Add(e.Turn.Usage)
		}
		if c := e.Turn.Context; c != nil && c.Window > 0 {
			m.lastWindow, m.lastPrompt, m.lastEstimated = c.Window, c.PromptTokens, c.Estimated
		}
	case events.ContextCompacting:
		cur.compacting = &compactLine{running: true, c: agent.Compaction{Replaced: e.Turn.Context.Replaced}}
		cur.add(cur.compacting)
		cur.text = nil
	case events.ContextCompacted:
		c := e.Turn.Context
		done := agent.Compaction{Replaced: c.Replaced, Before: c.Before, After: c.After, Kept: c.Kept, LeftOut: c.LeftOut, Summary: e.Text}
		if cur.compacting == nil {
			cur.compacting = &compactLine{}
			cur.add(cur.compacting)
		}
		cur.compacting.finish(done)
		cur.compacting, cur.text = nil, nil
	case events.ConfirmAsk:
		p := cur.panel(e.Tool.Tool, e.Tool.CallID, e.Tool.Index, e.Tool.Arguments, m.specs[e.Tool.Tool].CostEstimate)
		p.state = panelWaiting
		p.version++
	case events.ToolCallStart:
		p := cur.panel(e.Tool.Tool, e.Tool.CallID, e.Tool.Index, e.Tool.Arguments, m.specs[e.Tool.Tool].CostEstimate)
		p.state, p.started = panelRunning, e.Time
		p.args = e.Tool.Arguments // what runs: the person may have edited them
		p.version++
	case events.ToolCallEnd:
		p := cur.panel(e.Tool.Tool, e.Tool.CallID, e.Tool.Index, e.Tool.Arguments, m.specs[e.Tool.Tool].CostEstimate)
		p.state = statusOf(e.Tool.Status)
		p.latency, p.cost = e.Tool.LatencySeconds, e.Tool.CostUSD
		p.setResult(e.Tool.Result)
		p.diff, p.live = e.Tool.Diff, nil
		p.version++
		if m.run.active {
			// Counted live; the run's end counts its stored results.
			m.toolCalls++
			m.run.usage.ToolCostUSD += e.Tool.CostUSD
		}
	case events.ToolOutput:
		if p, ok := cur.panels[e.Tool.CallID]; ok && p.state == panelRunning {
			p.addLive(e.Text)
		}
	case events.ToolCallDenied, events.ToolCallError:
		p := cur.panel(e.Tool.Tool, e.Tool.CallID, e.Tool.Index, e.Tool.Arguments, m.specs[e.Tool.Tool].CostEstimate)
		p.state = statusOf(e.Tool.Status)
		p.setResult(e.Tool.Result)
		p.version++
		if m.run.active {
			m.toolCalls++
		}
		m.tellToolOff(cur, e)
	case events.Notice:
		cur.endCompacting()
		cur.note(say(e.Text), false)
	case events.Error:
		cur.endCompacting()
		cur.note(errorText(e.Err, e.Text), true)
	case events.RunEnd:
		cur.endCompacting()
		cur.finish(e.Turn.Usage, e.Turn.Turn)
	}
}

// tellToolOff says, once a run, how to turn on a tool the model called
// that exists but is off in this session: the panel shows what the model
// was told ("Unknown tool"), which is true for the model and no help to
// the person, who may well have configured the server for this.
func (m *model) tellToolOff(cur *assistantItem, e events.Event) {
	name := e.Tool.Tool
	if e.Type != events.ToolCallError || !strings.HasPrefix(e.Tool.Result, tools.UnknownToolPrefix) ||
		!m.opts.Registry.Has(name) || cur.offTold[name] {
		return
	}
	if cur.offTold == nil {
		cur.offTold = map[string]bool{}
	}
	cur.offTold[name] = true
	note := fmt.Sprintf("%s is off in this session, so the model was told it does not exist: /tools +%s turns it on "+
		"(or space on it in the Tools tab, %s)", name, name, m.pane.KeyOf(m.tools))
	if server, _, ok := strings.Cut(name, mcp.Separator); ok && m.isMCPTool(name) {
		note += fmt.Sprintf(", and /tools +%s__* all of %s's tools", server, server)
	}
	cur.note(safe.Text(note+"."), false)
}

// errorText is an error as the transcript shows it: the engine's errors
// already say what to do; a cancelled run says only that.
func errorText(err error, text string) string {
	if err == nil {
		return say(text)
	}
	if errors.Is(err, context.Canceled) {
		return "Cancelled."
	}
	return explain(err)
}

// finishRun takes the conversation back and adds the run to the totals.
func (m *model) finishRun(msg runDoneMsg) tea.Cmd {
	if msg.runID != m.run.id {
		return nil
	}
	if m.run.cancel != nil {
		m.run.cancel()
	}
	m.run.active, m.run.cancel = false, nil
	m.run.usage = events.Usage{}
	m.takeRun(msg)
	var cmds []tea.Cmd
	if msg.result != nil {
		m.totals.Add(msg.result.Usage)
		if m.run.current != nil && !m.run.current.done {
			m.run.current.finish(msg.result.Usage, msg.result.Turns)
		}
		// The agent reports the model it used (it may resolve a name);
		// a /model typed during the run wins over it.
		if msg.result.Model != "" && m.modelName == m.run.model {
			m.modelName = msg.result.Model
		}
	}
	if errors.Is(msg.err, engine.ErrUnreachable) {
		// The server went away during the run: say so in the header and
		// look for it again, as at startup.
		cmds = append(cmds, m.serverDown(msg.err))
	}
	if m.title == "" && len(m.conv.Messages) > 0 {
		m.title = format.OneLine(m.conv.Messages[0].Content, 40)
	}
	if m.mcpDirty {
		m.mcpDirty = false
		closeOld, err := m.rebuildTools(m.enabled, false)
		if err != nil {
			m.addNote(explain(err), true)
		}
		m.clampPane()
		cmds = append(cmds, closeOld)
	}
	// current stays: events of this run still in flight (the bridge and
	// this message race) keep landing on it.
	if m.run.current != nil {
		m.lastReply = m.run.current
	}
	m.countToolTokens() // the run may have calibrated the counts
	cmds = append(cmds, m.refreshModelState(), m.releaseMemoryLater(m.releaseAfter))
	if m.pane.Showing(m.ctxTab) {
		cmds = append(cmds, m.refreshContext(true))
	}
	return tea.Batch(cmds...)
}
