package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jarvis-workbench/jarvis/tools"
)

// server supervises one configured server: it connects, lists the tools,
// watches the session, and reconnects with back-off when anything fails.
// Everything the rest of jarvis reads (state, tools, the live session) is
// guarded by mu and changed only by the supervisor goroutine, which then
// tells the manager.
type server struct {
	cfg  ServerConfig
	m    *Manager
	log  *slog.Logger
	book *schemaBook
	// secrets hides the configuration's credentials in every text that
	// leaves the server: reasons, failed results, log records.
	secrets *scrubber

	// relist asks the supervisor for a new listing (at most one pending).
	relist chan struct{}
	// progress routes the server's progress notifications to the calls
	// that asked for them, by progress token.
	progress progressBook

	firstDone chan struct{} // closed after the first attempt, whatever its outcome
	firstOnce sync.Once

	mu         sync.Mutex
	state      State
	reason     string // why the server is failed
	lastErr    string
	lastErrAt  time.Time
	nextRetry  time.Time
	attempts   int
	since      time.Time
	info       string
	step       string // what a starting server is waiting for
	conn       *conn
	tools      []*remoteTool
	byOriginal map[string]*remoteTool
	skipped    []string
	listed     bool // a listing has been applied at least once
}

// conn is one connection to the server: a session and what it runs on.
type conn struct {
	// ctx ends when the connection is closed; calls run under it too, so
	// that closing never waits for a call the server will not answer.
	ctx      context.Context
	cancel   context.CancelFunc
	sess     *sdk.ClientSession
	stdio    *stdioTransport // nil for HTTP
	http     *http.Transport // nil for stdio
	answers  *httpAnswers    // HTTP answers that were not MCP; nil for stdio
	host     string          // the HTTP server's host, for reasons
	done     chan struct{}   // closed when the session has ended
	checking atomic.Bool     // a health check is running

	lostOnce   sync.Once
	lost       chan struct{} // closed when the connection is known to be dead
	lostReason string        // why; set before lost is closed
}

// reason says why the connection ended, for calls it cut short.
func (c *conn) reason() string {
	select {
	case <-c.lost:
		return c.lostReason
	default:
		return "the connection to the server was closed"
	}
}

// markLost tells the supervisor, which restarts the server, that the
// connection no longer works.
func (c *conn) markLost(reason string) {
	c.lostOnce.Do(func() {
		c.lostReason = reason
		close(c.lost)
	})
}

// close ends the calls in flight, stops a stdio server (closing its stdin
// first, as the MCP spec asks) and closes the session.
func (c *conn) close() { c.closeWith((*process).stop) }

// abort is close for a connection that never became a session (the start
// failed): a stdio server is stopped without a grace period.
func (c *conn) abort() { c.closeWith((*process).abort) }

func (c *conn) closeWith(stop func(*process)) {
	c.cancel()
	if c.stdio != nil {
		if p := c.stdio.process(); p != nil {
			stop(p)
		}
	}
	if c.sess != nil {
		_ = c.sess.Close()
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// exitReason is the process's exit description (stdio), waiting up to d for
// the process to finish exiting; "" when it is still running or for HTTP.
func (c *conn) exitReason(d time.Duration) string {
	if c.stdio == nil {
		return ""
	}
	p := c.stdio.process()
	if p == nil {
		return ""
	}
	p.waitExit(d)
	return p.exitReason()
}

// failure says why the connection failed with err, as far as the
// transport knows better than err: output on stdout that is not MCP (the
// process then exits because jarvis closed it, so this comes first), the
// process's exit, an HTTP answer that is not MCP or a network failure. It
// waits up to d for a process to finish exiting. "" means err says it all.
func (c *conn) failure(err error, d time.Duration) string {
	if c.stdio != nil {
		if p := c.stdio.process(); p != nil {
			if bad := p.unreadable(); bad != nil {
				return bad.reason()
			}
		}
		return c.exitReason(d)
	}
	return httpReason(c.host, c.answers, err)
}

// stderrTail is the end of a stdio server's stderr, for reasons that quote
// it: " (stderr: A | B)", or "".
func (c *conn) stderrTail() string {
	if c.stdio == nil {
		return ""
	}
	p := c.stdio.process()
	if p == nil {
		return ""
	}
	if lines := p.stderr.lastLines(stderrLinesShown); len(lines) > 0 {
		return " (stderr: " + strings.Join(lines, " | ") + ")"
	}
	return ""
}

func newServer(cfg ServerConfig, m *Manager) *server {
	secrets := newScrubber(cfg)
	s := &server{
		cfg:        cfg,
		m:          m,
		log:        slog.New(secrets.handler(m.log.Handler())).With("mcp_server", cfg.Name),
		book:       newSchemaBook(),
		secrets:    secrets,
		relist:     make(chan struct{}, 1),
		firstDone:  make(chan struct{}),
		state:      StateStarting,
		since:      time.Now(),
		byOriginal: map[string]*remoteTool{},
	}
	if !cfg.IsEnabled() {
		s.state = StateDisabled
		s.firstOnce.Do(func() { close(s.firstDone) })
	}
	return s
}

// run is the supervisor loop. It returns when ctx ends, having closed the
// connection (and stopped the process).
func (s *server) run(ctx context.Context) {
	defer s.firstOnce.Do(func() { close(s.firstDone) })
	failures := 0
	for {
		c, err := s.connect(ctx)
		if ctx.Err() != nil {
			switch {
			case c != nil && err != nil:
				c.abort() // stopped while starting: no session to end
			case c != nil:
				c.close()
			}
			return
		}
		if err == nil {
			up := time.Now()
			reason := s.serve(ctx, c)
			if ctx.Err() == nil {
				c.markLost(reason) // calls cut short by close report it
			}
			c.close()
			c = nil
			if ctx.Err() != nil {
				return
			}
			if time.Since(up) >= s.m.opts.RestartMax {
				failures = 0 // it ran long enough: this is a new problem, not a crash loop
			}
			err = errors.New(reason)
		}
		failures++
		if s.m.opts.OneAttempt {
			s.setFailed(err.Error(), 0)
			if c != nil {
				c.close()
			}
			<-ctx.Done()
			return
		}
		retryAt := time.Now().Add(s.m.backoff(failures))
		// Say why before stopping what failed to start: a server that
		// ignores its stdin closing takes seconds more to stop, and those
		// waiting for the outcome need not wait for that.
		s.setFailed(err.Error(), time.Until(retryAt))
		if c != nil {
			c.abort()
		}
		t := time.NewTimer(time.Until(retryAt))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// startTimeout bounds one start of the server.
func (s *server) startTimeout() time.Duration {
	return s.cfg.startTimeout(s.m.opts.ConnectTimeout)
}

// connect starts or reaches the server, completes the handshake and lists
// its tools, all within the server's start timeout. On failure it returns
// the connection too, not yet closed, for the caller to close once the
// failure is reported.
func (s *server) connect(ctx context.Context) (*conn, error) {
	s.setStarting()
	cctx, cancel := context.WithTimeout(ctx, s.startTimeout())
	defer cancel()

	c := &conn{done: make(chan struct{}), lost: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	var transport sdk.Transport
	if s.cfg.Transport() == TransportHTTP {
		t, base, answers, err := newHTTPTransport(s.cfg, s.book)
		if err != nil {
			c.cancel()
			return nil, err
		}
		transport, c.http, c.answers = t, base, answers
		c.host = hostOf(t.Endpoint)
		s.setStep("connecting to " + c.host + " for the MCP handshake")
	} else {
		c.stdio = &stdioTransport{cfg: s.cfg, grace: s.m.opts.StopGrace, log: s.log, book: s.book}
		transport = c.stdio
		s.setStep("waiting for its answer to the MCP handshake")
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "jarvis", Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		Logger:       s.log,
		Capabilities: &sdk.ClientCapabilities{}, // jarvis offers no roots, sampling or elicitation
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			s.progress.report(req.Params)
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Runs on the session's reading goroutine: listing here would
			// wait for a reply that goroutine has to read. Hand it over.
			select {
			case s.relist <- struct{}{}:
			default:
			}
		},
	})
	sess, err := client.Connect(cctx, transport, nil)
	if err != nil {
		return c, s.explain(ctx, cctx, c, false, err)
	}
	c.sess = sess
	go func() {
		_ = sess.Wait()
		close(c.done)
	}()
	s.setStep("listing its tools")
	list, err := s.listTools(cctx, sess)
	if err != nil {
		return c, s.explain(ctx, cctx, c, true, err)
	}
	info := ""
	if r := sess.InitializeResult(); r != nil && r.ServerInfo != nil {
		info = r.ServerInfo.Name
		if r.ServerInfo.Version != "" {
			info += " " + r.ServerInfo.Version
		}
	}
	s.setReady(c, info, list)
	return c, nil
}

// explain turns a failure to connect (listing: to list the tools after the
// handshake) into the reason people read: what went wrong, what to do,
// then the original error.
func (s *server) explain(ctx, cctx context.Context, c *conn, listing bool, err error) error {
	var se *startError
	if errors.As(err, &se) {
		return se
	}
	if c.stdio != nil {
		if p := c.stdio.process(); p != nil {
			if bad := p.unreadable(); bad != nil {
				return errors.New(bad.reason())
			}
		}
	}
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return errors.New(s.startTimeoutReason(c, listing))
	}
	// When the server answered with an error, that answer is the reason,
	// even if the process then exited because the session was closed.
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code != codeRejected {
		if listing {
			return fmt.Errorf("the server refused to list its tools: %s", wireReason(wire))
		}
		return fmt.Errorf("the server refused the MCP handshake: %s", wireReason(wire))
	}
	if why := c.failure(err, time.Second); why != "" {
		return errors.New(why)
	}
	if strings.Contains(err.Error(), "unsupported protocol version") {
		return errors.New(withDetail("the server speaks a version of MCP that jarvis does not support; look for a newer release of the server", err))
	}
	if listing {
		return fmt.Errorf("listing tools failed: %s", describeErr(err))
	}
	return fmt.Errorf("connecting failed: %s", describeErr(err))
}

// startTimeoutReason says that a start ran out of time, what the server
// may be doing instead, and what to do.
func (s *server) startTimeoutReason(c *conn, listing bool) string {
	d := limitString(s.startTimeout())
	if listing {
		return fmt.Sprintf("the server answered the MCP handshake but did not list its tools within %s%s; if it needs longer, raise start_timeout for this server", d, c.stderrTail())
	}
	if c.stdio != nil {
		return fmt.Sprintf("the server did not answer the MCP handshake within %s%s; it may still be installing itself (npx, uvx), be waiting for something, or not be an MCP server: run its command in a terminal to see what it does, or raise start_timeout for this server", d, c.stderrTail())
	}
	return fmt.Sprintf("%s did not answer the MCP handshake within %s; check that the server is running and that url is its MCP endpoint, or raise start_timeout for this server", c.host, d)
}

// serve watches a ready connection until it ends and returns why.
func (s *server) serve(ctx context.Context, c *conn) string {
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-c.done:
			if why := c.failure(nil, time.Second); why != "" {
				return why
			}
			if c.stdio != nil {
				return "the server closed its stdout, which ends the MCP connection"
			}
			return "the connection to the server was closed"
		case <-c.lost:
			return c.lostReason
		case <-s.relist:
			lctx, cancel := context.WithTimeout(ctx, s.startTimeout())
			list, err := s.listTools(lctx, c.sess)
			cancel()
			var wire *jsonrpc.Error
			switch {
			case err == nil:
				s.setTools(list)
			case ctx.Err() != nil:
				return ""
			case errors.As(err, &wire) && wire.Code != codeRejected:
				// The server answered but refused: keep the tools we have.
				s.noteError("the server refused to list its tools after they changed: " + wireReason(wire))
			default:
				if why := c.failure(err, time.Second); why != "" {
					return why
				}
				return "listing tools after a change failed: " + describeErr(err)
			}
		}
	}
}

// listTools reads every page of the tool list and turns it into tools.
func (s *server) listTools(ctx context.Context, sess *sdk.ClientSession) (*toolList, error) {
	var listed []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		listed = append(listed, t)
	}
	return s.buildTools(listed), nil
}

// toolList is one listing turned into jarvis tools.
type toolList struct {
	tools   []*remoteTool
	skipped []string
}

// buildTools makes a remoteTool per listed tool. A tool whose schema the
// executor could not check arguments against is left out and named in the
// server's status, rather than failing every run that lists all tools.
func (s *server) buildTools(listed []*sdk.Tool) *toolList {
	originals := make([]string, len(listed))
	for i, t := range listed {
		originals[i] = t.Name
	}
	names := nameTools(s.cfg.Name, originals)
	out := &toolList{}
	for i, t := range listed {
		schema, err := s.book.schema(t.Name, t.InputSchema)
		if err != nil {
			out.skipped = append(out.skipped, fmt.Sprintf("%s: its input schema cannot be read: %v", t.Name, err))
			continue
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		if desc == "" {
			desc = fmt.Sprintf("Tool '%s' of MCP server '%s'.", t.Name, s.cfg.Name)
		}
		rt := &remoteTool{srv: s, original: t.Name, spec: tools.Spec{
			Name:                 names[i],
			Description:          desc,
			Parameters:           schema,
			Category:             Category,
			RequiresConfirmation: !s.cfg.Trusted,
			WaivedBy:             trustedBy(s.cfg),
			TimeoutSeconds:       s.cfg.TimeoutSeconds(),
			Metadata:             map[string]any{MetaServer: s.cfg.Name, MetaOriginalName: t.Name},
		}}
		if _, err := tools.NewExecutor([]tools.Tool{rt}, tools.ExecutorOptions{}); err != nil {
			out.skipped = append(out.skipped, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		out.tools = append(out.tools, rt)
	}
	for _, msg := range out.skipped {
		s.log.Warn("mcp tool skipped", "reason", msg)
	}
	return out
}

// connFor returns the live connection for a call to tool original, or
// nil and the message the call fails with.
func (s *server) connFor(original string) (*conn, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := s.cfg.Name
	switch s.state {
	case StateReady:
		if _, ok := s.byOriginal[original]; !ok {
			return nil, fmt.Sprintf("MCP server '%s' no longer offers tool '%s'.", name, original)
		}
		return s.conn, ""
	case StateFailed:
		return nil, fmt.Sprintf("MCP server '%s' is unavailable: %s; it is being restarted", name, s.reason)
	case StateStarting:
		if s.lastErr != "" {
			return nil, fmt.Sprintf("MCP server '%s' is unavailable: %s; it is being restarted", name, s.lastErr)
		}
		return nil, fmt.Sprintf("MCP server '%s' is still starting; try again in a moment.", name)
	case StateDisabled:
		return nil, fmt.Sprintf("MCP server '%s' is disabled in the config.", name)
	}
	return nil, fmt.Sprintf("MCP server '%s' is stopped: jarvis is shutting down.", name)
}

// connectionLost is called by a call whose session failed under it. It asks
// the supervisor to reconnect and returns the reason for the call's result.
func (s *server) connectionLost(c *conn, err error) string {
	reason := c.failure(err, time.Second)
	if reason == "" {
		reason = describeErr(err)
	}
	c.markLost(reason)
	return reason
}

// checkHealth pings the server after a call timed out: a server that still
// answers keeps running (only that call was slow); one that does not is
// restarted.
func (s *server) checkHealth(c *conn) {
	if !c.checking.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.checking.Store(false)
		ctx, cancel := context.WithTimeout(c.ctx, s.m.opts.PingTimeout)
		defer cancel()
		if err := c.sess.Ping(ctx, nil); err != nil && c.ctx.Err() == nil {
			c.markLost(fmt.Sprintf("the server stopped answering (a call timed out, then a ping got no reply within %s)", s.m.opts.PingTimeout))
		}
	}()
}

func (s *server) closing() bool { return s.m.closed.Load() }

// State changes. Each notifies the manager after releasing mu.

func (s *server) setStarting() {
	s.mu.Lock()
	s.state = StateStarting
	s.since = time.Now()
	s.nextRetry = time.Time{}
	s.attempts++
	s.mu.Unlock()
	s.m.changed()
}

// setStep says what a starting server is waiting for; it is read by those
// who poll the status while waiting (jarvis mcp list), so no signal.
func (s *server) setStep(step string) {
	s.mu.Lock()
	s.step = step
	s.mu.Unlock()
}

func (s *server) setReady(c *conn, info string, list *toolList) {
	s.mu.Lock()
	s.state = StateReady
	s.since = time.Now()
	s.reason = ""
	s.conn = c
	s.info = info
	s.applyTools(list)
	n := len(s.tools)
	s.mu.Unlock()
	s.firstOnce.Do(func() { close(s.firstDone) })
	s.log.Info("mcp server ready", "tools", n)
	s.m.notice(fmt.Sprintf("MCP server '%s' is ready with %s.", s.cfg.Name, plural(n, "tool")))
	s.m.changed()
}

func (s *server) setTools(list *toolList) {
	s.mu.Lock()
	s.applyTools(list)
	n := len(s.tools)
	s.mu.Unlock()
	s.log.Info("mcp tool list changed", "tools", n)
	s.m.changed()
}

// applyTools installs a listing, keeping the object of every tool whose spec
// did not change so that executors holding it stay current. mu is held.
func (s *server) applyTools(list *toolList) {
	next := make(map[string]*remoteTool, len(list.tools))
	for i, t := range list.tools {
		if old, ok := s.byOriginal[t.original]; ok && reflect.DeepEqual(old.spec, t.spec) {
			list.tools[i] = old
		}
		next[t.original] = list.tools[i]
	}
	s.tools = list.tools
	s.byOriginal = next
	s.skipped = list.skipped
	s.listed = true
}

func (s *server) setFailed(reason string, retry time.Duration) {
	reason = s.secrets.scrub(reason)
	s.mu.Lock()
	s.state = StateFailed
	s.since = time.Now()
	s.reason = reason
	s.lastErr = reason
	s.lastErrAt = s.since
	s.nextRetry = time.Time{}
	if retry > 0 {
		s.nextRetry = s.since.Add(retry)
	}
	s.conn = nil
	s.mu.Unlock()
	s.firstOnce.Do(func() { close(s.firstDone) })
	s.log.Warn("mcp server failed", "reason", reason, "retry_in", retry)
	if retry > 0 {
		s.m.notice(fmt.Sprintf("MCP server '%s' is unavailable: %s; restarting in %s.", s.cfg.Name, reason, roundDuration(retry)))
	} else {
		s.m.notice(fmt.Sprintf("MCP server '%s' is unavailable: %s.", s.cfg.Name, reason))
	}
	s.m.changed()
}

// noteError records a problem that did not stop the server.
func (s *server) noteError(msg string) {
	msg = s.secrets.scrub(msg)
	s.mu.Lock()
	s.lastErr = msg
	s.lastErrAt = time.Now()
	s.mu.Unlock()
	s.log.Warn("mcp server problem", "error", msg)
	s.m.changed()
}

func (s *server) setStopped() {
	s.mu.Lock()
	if s.state != StateDisabled {
		s.state = StateStopped
		s.since = time.Now()
		s.conn = nil
		s.nextRetry = time.Time{}
	}
	s.mu.Unlock()
}

// snapshot returns the server's status and tools.
func (s *server) snapshot() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{
		Name:           s.cfg.Name,
		Transport:      s.cfg.Transport(),
		Target:         s.cfg.Target(),
		State:          s.state,
		Trusted:        s.cfg.Trusted,
		TimeoutSeconds: s.cfg.TimeoutSeconds(),
		Reason:         s.reason,
		LastError:      s.lastErr,
		LastErrorAt:    s.lastErrAt,
		NextRetry:      s.nextRetry,
		Since:          s.since,
		ServerInfo:     s.info,
		Listed:         s.listed,
		Skipped:        append([]string(nil), s.skipped...),
		StartTimeout:   s.startTimeout().Seconds(),
	}
	if s.state == StateStarting {
		st.Step = s.step
	}
	if s.attempts > 1 {
		st.Restarts = s.attempts - 1
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolInfo{Name: t.spec.Name, Original: t.original, Spec: t.spec})
	}
	return st
}

// currentTools returns the tools of the last listing.
func (s *server) currentTools() []*remoteTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*remoteTool(nil), s.tools...)
}

// trustedBy names the setting that lets a trusted server's tools run
// unasked, for the audit log ("" for a server that is not trusted).
func trustedBy(cfg ServerConfig) string {
	if !cfg.Trusted {
		return ""
	}
	return "[[mcp.servers]] " + cfg.Name + ": trusted = true"
}
