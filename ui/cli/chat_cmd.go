package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/store/audit"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/themes"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/tui"
)

// chatFlags are the TUI's flags: ask's, plus the theme and --continue.
type chatFlags struct {
	agentFlags
	theme   string
	cont    bool
	noMouse bool
}

func (f *chatFlags) register(cmd *cobra.Command) {
	f.agentFlags.register(cmd)
	cmd.Flags().StringVar(&f.theme, "theme", "", "colour theme: auto, dark, light, high-contrast (default from config: auto)")
	cmd.Flags().BoolVarP(&f.cont, "continue", "c", false, "reopen the most recent session")
	cmd.Flags().BoolVar(&f.noMouse, "no-mouse", false, "start with mouse capture off (select text with the mouse; F2 toggles)")
}

func (a *cmdline) chatCommand() *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:         "chat",
		Short:       "Open the workbench (also what 'jarvis' alone does)",
		Long:        chatLong,
		Args:        argsUsage(cobra.NoArgs),
		Annotations: map[string]string{ownsTerminal: "yes"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return a.chat(cmd, &f) },
	}
	f.register(cmd)
	return cmd
}

const chatLong = `Open the terminal workbench: chat with the model, watch every tool call as a
live panel, approve the calls that can do harm, and see exactly what the model
is told about its tools. Press ? inside for the keys, /help for the commands.`

func (a *cmdline) chat(cmd *cobra.Command, f *chatFlags) error {
	if !isTerminal(a.io.Out) || !isTerminalReader(a.io.In) {
		return usageErr("the workbench needs a terminal (stdin and stdout). For scripts use: jarvis ask \"QUESTION\"")
	}
	cf := f.configFlags(cmd)
	cf.Theme = f.theme
	cfg, err := a.loadConfig(cf)
	if err != nil {
		return err
	}
	env, err := a.environment()
	if err != nil {
		return err
	}
	// MCP tools come as their servers start; the others must exist now.
	var builtins []string
	for _, n := range cfg.Tools {
		if !needsMCP(cfg.MCP, []string{n}) {
			builtins = append(builtins, n)
		}
	}
	if _, err := env.buildTools(builtins); err != nil {
		return err
	}
	// The terminal is asked for its background now, before Bubble Tea owns
	// stdin: asked later, the answer would arrive as typed keys.
	if out, ok := a.io.Out.(*os.File); ok && needsDetection(cfg.Theme) {
		themes.Detect(out)
	}
	if _, err := themes.Get(cfg.Theme); err != nil {
		return usageErr("%v (from %s)", err, cfg.Source("theme"))
	}
	bus := events.New()
	opts := tui.Options{
		Config: cfg, Engine: env.def.Engine, Server: env.def, Endpoints: env.named,
		Registry: env.registry, ToolDeps: env.deps,
		Theme: cfg.Theme, Continue: f.cont, Bus: bus, NoMouse: f.noMouse,
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if len(cfg.MCP.Servers) > 0 {
		// Started in the background: the workbench opens at once and the
		// servers' tools appear in the Tools pane as each comes up.
		m, err := a.startMCP(ctx, env, false, nil)
		if err != nil {
			return err
		}
		opts.MCP = m
	}
	// The database is not touched before the first frame: sessions and the
	// scheduler open it on first use, and say so if they cannot.
	db, err := a.database()
	if err != nil {
		return err
	}
	db.SetPurpose("tui")
	defer db.Close()
	// Text on stderr would tear the screen: a wait for the file goes to
	// the Events tab (writes waiting show as "saving…" in the status bar).
	db.OnWait(func(pid int, what string) {
		bus.Publish(events.Event{Type: events.Notice, Run: events.RunInfo{ID: "database"},
			Text: fmt.Sprintf("waiting for the database, held by pid %d (%s)", pid, what)})
	})
	// Session writes go through the database's queue; starting it saves
	// what an earlier jarvis left in its journal. Leaving waits briefly
	// for what is still pending (the TUI already waited, showing the
	// count) and says where the rest is kept.
	saves := db.Queue()
	defer func() {
		wait, stop := context.WithTimeout(context.Background(), 2*time.Second)
		defer stop()
		if err := saves.Close(wait); err != nil {
			fmt.Fprintf(a.io.Err, "jarvis: %v\n", err)
		}
	}()
	opts.Sessions, opts.Saves = tui.NewSessionStore(sessions.New(db)), saves
	// The dialog's "always allow", the Tools tab's approvals and the audit
	// log of every decision.
	always := approvals.New(db)
	always.Source = tools.SourceTUI
	opts.Always, opts.Audit = always, auditLog{Log: audit.New(db)}
	opts.Eval = a.evalSetup(cfg, db)
	// The TUI runs the scheduler while it is open, so tasks run and the
	// Scheduler tab is live; it leaves scheduled runs to a live `jarvis
	// scheduler start`. Its problems go to the Events tab.
	sopts, err := a.schedOptions("tui", bus)
	if err != nil {
		return err
	}
	sopts.Events, sopts.Logger = bus, slog.New(noticeHandler{bus: bus, source: "scheduler"})
	s := scheduler.New(db, sopts)
	env.sched.Use(s)
	opts.Scheduler, opts.ValidateTask = s, sopts.Validate
	served := make(chan struct{})
	go func() { defer close(served); s.Serve(ctx) }()
	// Leaving waits for running tasks to record their logs.
	defer func() { cancel(); <-served }()
	if err := tui.Run(ctx, opts); err != nil {
		return failErr("%v", err)
	}
	return nil
}

func needsDetection(theme string) bool {
	t := strings.ToLower(theme)
	return t == "" || t == themes.Auto || t == themes.HighContrast
}

func isTerminalReader(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// noticeHandler turns warnings and errors logged by a background part of
// the TUI (the scheduler) into notice events, which the Events tab shows:
// text written to the terminal would tear the screen.
type noticeHandler struct {
	bus    events.Publisher
	source string
	attrs  []slog.Attr
}

func (h noticeHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h noticeHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.source + ": " + r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.bus.Publish(events.Event{Type: events.Notice, Run: events.RunInfo{ID: h.source}, Text: b.String()})
	return nil
}

func (h noticeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return h
}

func (h noticeHandler) WithGroup(string) slog.Handler { return h }
