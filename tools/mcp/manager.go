package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// Options tune a Manager. Every field is optional; the zero value gives the
// defaults documented on each field.
type Options struct {
	// Logger receives server state changes and the servers' stderr (at
	// debug level); nil discards.
	Logger *slog.Logger
	// Bus receives a notice event when a server becomes ready or fails, for
	// the status line; nil discards.
	Bus events.Publisher
	// ConnectTimeout bounds starting a server, the MCP handshake and
	// listing its tools, for servers whose config sets no start_timeout
	// (default DefaultStartTimeoutSeconds).
	ConnectTimeout time.Duration
	// StopGrace is how long a stdio server may take to exit after its stdin
	// is closed before it is sent SIGTERM, then SIGKILL (default 2s).
	StopGrace time.Duration
	// RestartMin and RestartMax bound the restart back-off: the delay
	// starts at RestartMin, doubles with each failure in a row (±20%
	// jitter) and never exceeds RestartMax (defaults 1s and 60s). A server
	// that stayed up for RestartMax starts again from RestartMin.
	RestartMin, RestartMax time.Duration
	// PingTimeout bounds the health check made after a call times out
	// (default 10s).
	PingTimeout time.Duration
	// ClientVersion is the version jarvis reports to servers.
	ClientVersion string
	// OneAttempt starts each server once and leaves a failed one failed:
	// an inspection reports what happened, and a retry in flight would
	// show a server that never came up as "starting".
	OneAttempt bool
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Bus == nil {
		o.Bus = events.Discard
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultStartTimeoutSeconds * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.RestartMin <= 0 {
		o.RestartMin = time.Second
	}
	if o.RestartMax <= 0 {
		o.RestartMax = 60 * time.Second
	}
	if o.RestartMax < o.RestartMin {
		o.RestartMax = o.RestartMin
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 10 * time.Second
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	return o
}

// Manager runs the configured MCP servers and exposes their tools. Its
// methods are safe for concurrent use.
type Manager struct {
	opts    Options
	log     *slog.Logger
	servers []*server
	byName  map[string]*server

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce sync.Once
	closeOnce sync.Once
	closed    atomic.Bool

	subsMu sync.Mutex
	subs   map[chan struct{}]struct{}
}

// New checks cfg and returns a manager for its servers; nothing is started
// until Start.
func New(cfg Config, opts Options) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid MCP configuration:\n%w", err)
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:   opts,
		log:    opts.Logger,
		byName: make(map[string]*server, len(cfg.Servers)),
		ctx:    ctx,
		cancel: cancel,
		subs:   map[chan struct{}]struct{}{},
	}
	for _, sc := range cfg.Servers {
		s := newServer(sc, m)
		m.servers = append(m.servers, s)
		m.byName[sc.Name] = s
	}
	return m, nil
}

// Start starts every enabled server in the background and returns at once.
// Calling it again does nothing.
func (m *Manager) Start() {
	m.startOnce.Do(func() {
		if m.closed.Load() {
			return
		}
		for _, s := range m.servers {
			if !s.cfg.IsEnabled() {
				continue
			}
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				s.run(m.ctx)
			}()
		}
	})
}

// WaitReady blocks until every enabled server has finished its first
// attempt to start (successfully or not) or ctx ends. Headless commands
// call it before choosing tools; the TUI does not wait.
func (m *Manager) WaitReady(ctx context.Context) error {
	for _, s := range m.servers {
		select {
		case <-s.firstDone:
		case <-ctx.Done():
			return fmt.Errorf("MCP server '%s' is still starting: %w", s.cfg.Name, ctx.Err())
		}
	}
	return nil
}

// WaitReadyReporting is WaitReady for someone watching: about once a
// second while it waits, report receives the status of the servers still
// starting, so that a terminal can say what is being waited for.
func (m *Manager) WaitReadyReporting(ctx context.Context, report func(starting []ServerStatus)) error {
	ready := make(chan error, 1)
	go func() { ready <- m.WaitReady(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-ready:
			return err
		case <-tick.C:
			var starting []ServerStatus
			for _, st := range m.Status() {
				if st.State == StateStarting {
					starting = append(starting, st)
				}
			}
			if len(starting) > 0 {
				report(starting)
			}
		}
	}
}

// StartWait is how long a caller of WaitReady may have to wait: the
// longest start timeout of the enabled servers, and a few seconds for a
// failed one to report why.
func (m *Manager) StartWait() time.Duration {
	longest := time.Duration(0)
	for _, s := range m.servers {
		if s.cfg.IsEnabled() {
			longest = max(longest, s.startTimeout())
		}
	}
	return longest + startReportMargin
}

// startReportMargin covers what follows a failed start before it is
// reported: waiting for the process's exit (up to a second) to say how it
// ended.
const startReportMargin = 3 * time.Second

// Close stops every server (stdio servers with their whole process group)
// and waits for them. Calls in flight fail cleanly. Subscription channels
// are closed once the final status is in place.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		m.cancel()
		m.wg.Wait()
		for _, s := range m.servers {
			s.setStopped()
		}
		m.changed()
		m.subsMu.Lock()
		for ch := range m.subs {
			close(ch)
		}
		m.subs = nil
		m.subsMu.Unlock()
	})
	return nil
}

// Tools returns the tools of every server's latest listing, servers in
// config order and each server's tools in its own order. Tools of a server
// that is restarting stay in the list; calling them fails until it is back.
func (m *Manager) Tools() []tools.Tool {
	var out []tools.Tool
	for _, s := range m.servers {
		for _, t := range s.currentTools() {
			out = append(out, t)
		}
	}
	return out
}

// Tool returns one tool by its jarvis name (SERVER__TOOL).
func (m *Manager) Tool(name string) (tools.Tool, bool) {
	for _, s := range m.servers {
		for _, t := range s.currentTools() {
			if t.spec.Name == name {
				return t, true
			}
		}
	}
	return nil, false
}

// ToolByOriginal returns the tool that server offers under its own name
// original. It is the lookup to use when a person or a model names a tool
// as the server does: ToolName(server, original) is not necessarily that
// tool's name, because two originals that sanitise alike (a.b and a_b)
// cannot both have the plain name.
func (m *Manager) ToolByOriginal(server, original string) (tools.Tool, bool) {
	s, ok := m.byName[server]
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byOriginal[original]
	if !ok {
		return nil, false
	}
	return t, true
}

// Status returns every configured server's status, in config order.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.snapshot()
	}
	return out
}

// Server returns one server's status.
func (m *Manager) Server(name string) (ServerStatus, bool) {
	s, ok := m.byName[name]
	if !ok {
		return ServerStatus{}, false
	}
	return s.snapshot(), true
}

// Subscribe returns a channel that receives a value whenever a server's
// status or tool list changes. Signals are coalesced: one value may stand
// for several changes, so a reader re-reads Status or Tools rather than
// counting. The channel is closed by cancel or by Close.
func (m *Manager) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	if m.subs == nil { // closed
		close(ch)
		return ch, func() {}
	}
	m.subs[ch] = struct{}{}
	return ch, func() {
		m.subsMu.Lock()
		defer m.subsMu.Unlock()
		if _, ok := m.subs[ch]; ok {
			delete(m.subs, ch)
			close(ch)
		}
	}
}

// Register adds every MCP tool to r under its jarvis name and keeps r in
// step with later listings (tools added, removed, servers restarted) until
// the manager is closed. A name r already holds for another tool is left
// alone and logged.
func (m *Manager) Register(r *tools.Registry) {
	ch, _ := m.Subscribe()
	registered := map[string]bool{}
	update := func() {
		current := map[string]bool{}
		for _, t := range m.Tools() {
			current[t.Spec().Name] = true
		}
		for name := range registered {
			if !current[name] {
				r.Unregister(name)
				delete(registered, name)
			}
		}
		for name := range current {
			if registered[name] {
				continue
			}
			if err := r.Register(name, m.factory(name)); err != nil {
				m.log.Warn("mcp tool not registered", "tool", name, "error", err)
				continue
			}
			registered[name] = true
		}
	}
	update()
	go func() {
		for range ch {
			update()
		}
	}()
}

// SyncExecutor makes e hold this manager's current tools, leaving its other
// tools alone: tools no longer offered are removed, new ones added, changed
// ones replaced, unchanged ones kept. build makes the tool to add from its
// name (a registry's Build, to apply the user's per-tool settings); nil adds
// the tools as they are. A tool e refuses is reported and the rest still
// synced. The TUI calls it on every signal from Subscribe.
func (m *Manager) SyncExecutor(e *tools.Executor, build func(name string) (tools.Tool, error)) error {
	current := m.Tools()
	want := make(map[string]tools.Tool, len(current))
	for _, t := range current {
		want[t.Spec().Name] = t
	}
	held := map[string]bool{}
	for _, t := range e.Tools() {
		rt, ok := unwrapTool(t).(*remoteTool)
		if !ok || rt.srv.m != m {
			continue
		}
		if want[rt.spec.Name] == tools.Tool(rt) {
			held[rt.spec.Name] = true
			continue
		}
		e.Remove(rt.spec.Name)
	}
	var errs []error
	for _, t := range current {
		name := t.Spec().Name
		if held[name] {
			continue
		}
		if build != nil {
			built, err := build(name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			t = built
		}
		if err := e.Add(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unwrapTool returns the tool under per-tool settings (tools.ApplySettings).
func unwrapTool(t tools.Tool) tools.Tool {
	for {
		u, ok := t.(interface{ Unwrap() tools.Tool })
		if !ok {
			return t
		}
		t = u.Unwrap()
	}
}

// factory builds the current version of a tool at Build time, so a listing
// that changed a tool's spec needs no new registration.
func (m *Manager) factory(name string) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) {
		if t, ok := m.Tool(name); ok {
			return t, nil
		}
		return nil, fmt.Errorf("MCP tool %s is no longer offered by its server", name)
	}
}

// changed signals every subscriber without blocking.
func (m *Manager) changed() {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// notice publishes a status message, except while shutting down, when
// nobody needs to read that servers stopped.
func (m *Manager) notice(text string) {
	if m.closed.Load() {
		return
	}
	m.opts.Bus.Publish(events.Event{Type: events.Notice, Time: time.Now(), Text: text})
}

// backoff is the delay before the attempt that follows the n-th failure in
// a row.
func (m *Manager) backoff(n int) time.Duration {
	d := m.opts.RestartMin
	for i := 1; i < n && d < m.opts.RestartMax; i++ {
		d *= 2
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	return min(d, m.opts.RestartMax)
}
