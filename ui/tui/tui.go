// Package tui is jarvis's terminal workbench: a Bubble Tea program where a
// person chats with a local model, watches every tool call as a live panel
// (arguments, timer, result, latency, cost), approves the calls that can do
// harm, and inspects what the model is told about its tools, the event log
// and the scheduler in a side pane.
//
// The shape follows what keeps Bubble Tea apps fast and changeable: one
// top-level model; components are plain structs the model calls; no IO in
// Update (runs, database writes and server checks happen in commands or
// goroutines and report back as messages); everything the agent does
// arrives as bus events, merged by a bridge goroutine into ~30 ms batches so
// a fast stream costs a few renders a second, not one per token.
package tui

import (
	"context"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

// Options configure the TUI. ui/cli fills them from the configuration.
type Options struct {
	Config *config.Config
	// Engine is the default server's engine, Server the default server
	// (its kind and driver; nil: the default kind's), and Endpoints the
	// named servers of the config, whose models /model takes as
	// NAME/MODEL.
	Engine    engine.InferenceEngine
	Server    *app.Server
	Endpoints []*app.Server
	Registry  *tools.Registry
	ToolDeps  tools.Deps
	// Sessions persists conversations; nil keeps them in memory only.
	Sessions SessionStore
	// Saves is the database's write queue the sessions' writes go
	// through; nil when there is no database.
	Saves SaveQueue
	// Theme is a theme name already resolved (never "auto": detection must
	// happen before the program owns the terminal).
	Theme string
	// Continue reopens the most recent session.
	Continue bool
	// Scheduler is the running scheduler the Scheduler tab shows and
	// drives; nil leaves the tab saying it is not running.
	Scheduler SchedulerView
	// ValidateTask checks a new task's agent and tools (the form's errors).
	ValidateTask func(agent string, tools []string) error
	// MCP runs the configured MCP servers; their tools join the registry as
	// the servers come up. Nil when none are configured.
	MCP *mcp.Manager
	// Eval lets /eval run evaluations; nil leaves it saying so.
	Eval *EvalSetup
	// Bus carries every event; the TUI subscribes to it. Nil makes one.
	Bus *events.Bus
	// Always keeps the always-allowed tools; nil offers no "always allow".
	// Audit receives every confirmation decision; nil records none.
	Always AlwaysStore
	Audit  tools.AuditLog

	// In and Out default to the terminal; tests and the benchmark set them.
	In  io.Reader
	Out io.Writer
	// NoMouse starts with mouse capture off.
	NoMouse bool
}

// Run opens the TUI and returns when the person quits.
func Run(ctx context.Context, opts Options) error {
	if opts.Bus == nil {
		opts.Bus = events.New()
	}
	m, err := newModel(ctx, opts)
	if err != nil {
		return err
	}
	// 30 frames a second: token batches arrive every 30 ms anyway, and
	// Bubble Tea's frame ticker runs even when nothing changes, so at 60 an
	// idle workbench spends about 1% of a core on wake-ups.
	// Focus reports let the model's state be read on a slow timer only
	// while the workbench is in front.
	progOpts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(framesPerSecond), tea.WithReportFocus()}
	m.mstate.every = stateEvery
	if !opts.NoMouse {
		progOpts = append(progOpts, tea.WithMouseCellMotion())
	}
	if opts.In != nil {
		progOpts = append(progOpts, tea.WithInput(opts.In))
	}
	if opts.Out != nil {
		progOpts = append(progOpts, tea.WithOutput(opts.Out))
	}
	p := tea.NewProgram(m, progOpts...)
	m.send = p.Send
	m.firstPaint = terminalOutput(opts.Out)
	m.watchSaves()
	sub := opts.Bus.Subscribe(eventBuffer)
	go bridge(sub, func(m any) { p.Send(m) }, CoalesceWindow)
	_, err = p.Run()
	sub.Close()
	m.shutdown()
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// framesPerSecond is how often Bubble Tea's renderer writes a changed
// frame (see Run).
const framesPerSecond = 30

// tickMsg drives timers and spinners, only while something is running.
type tickMsg time.Time

const tickEvery = 100 * time.Millisecond

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}
