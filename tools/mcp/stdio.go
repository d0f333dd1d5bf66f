package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/internal/cleanenv"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport starts a server process and speaks MCP over its stdin and
// stdout. It replaces the SDK's CommandTransport for two reasons: the server
// gets its own process group, so stopping it also stops whatever it spawned
// (npx, a shell, a language runtime); and every pipe is an *os.File, so
// waiting for the process never waits for a helper that inherited stderr.
type stdioTransport struct {
	cfg   ServerConfig
	grace time.Duration
	log   *slog.Logger
	book  *schemaBook

	mu   sync.Mutex
	proc *process
}

// Connect starts the process.
func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	p, err := startProcess(t.cfg, t.grace, t.log)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.proc = p
	t.mu.Unlock()
	stdout := &tapReader{ReadCloser: p.stdout, tail: p.stdoutTail}
	inner, err := (&sdk.IOTransport{Reader: stdout, Writer: stopOnClose{p}}).Connect(context.Background())
	if err != nil {
		p.stop()
		return nil, err
	}
	return &recordingConn{Connection: inner, book: t.book, proc: p}, nil
}

// process returns the started process, nil before Connect.
func (t *stdioTransport) process() *process {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

// recordingConn hands every JSON-RPC response to the schema book before the
// SDK decodes it, which is where the order of schema properties is lost,
// and keeps the first thing on stdout that could not be read as a message:
// the SDK reports it only as a JSON error deep inside "connection closed".
type recordingConn struct {
	sdk.Connection
	book *schemaBook
	proc *process
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.book.observeResult(r.Result)
	}
	// The end of stdout (io.EOF, or io.ErrUnexpectedEOF when the process
	// died in the middle of a message) and jarvis closing the pipe are
	// the process's exit, which its exit status explains.
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
		c.proc.noteBadOutput(err)
	}
	return msg, err
}

// process is one running server.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *onceCloser
	stderr *tail
	grace  time.Duration
	// stdoutTail keeps the last lines read from stdout, so that a failure
	// to read a message can quote what the server printed instead.
	stdoutTail *tail

	badMu     sync.Mutex
	badOutput *badOutput // the first unreadable output, if any

	exited     chan struct{}
	exitErr    error         // set before exited is closed
	signalled  atomic.Bool   // stop had to signal the process: its exit is ours
	stderrDone chan struct{} // closed when stderr has been read to the end

	stopOnce sync.Once
	stopped  chan struct{} // closed when stop began: the exit was asked for
}

// Timings of the stop sequence after the grace period: how long SIGTERM is
// given, and how long to wait for the exit after SIGKILL before giving up
// on a process the kernel cannot kill (stuck in uninterruptible I/O).
const (
	termWait = time.Second
	killWait = 5 * time.Second
	// abortGrace is the grace period of a process whose connection broke
	// (see abort).
	abortGrace = 200 * time.Millisecond
)

// startError is a failure to start the server process; it needs no
// "connecting failed" in front.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

func startProcess(cfg ServerConfig, grace time.Duration, log *slog.Logger) (*process, error) {
	p, err := spawn(cfg, grace, log)
	if err != nil {
		return nil, &startError{err}
	}
	return p, nil
}

func spawn(cfg ServerConfig, grace time.Duration, log *slog.Logger) (*process, error) {
	env, err := processEnv(cfg.Env)
	if err != nil {
		return nil, err
	}
	dir := expandHome(cfg.Cwd)
	if dir != "" {
		// The kernel reports a missing directory as a missing program.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cannot start %s: the working directory %s does not exist or is not a directory", cfg.Command, dir)
		}
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, fmt.Errorf("cannot create pipes for %s: %w", cfg.Command, err)
	}

	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("cannot start %s: %w", cfg.Command, unwrapExec(err))
	}
	// The child holds its ends now; closing ours lets EOF arrive when it
	// (and everything it spawned) is gone.
	inR.Close()
	outW.Close()
	errW.Close()

	p := &process{
		cmd:        cmd,
		stdin:      inW,
		stdout:     &onceCloser{File: outR},
		stderr:     newTail(8, 2048),
		stdoutTail: newTail(16, 200),
		grace:      grace,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	go p.readStderr(errR, log.With("mcp_server", cfg.Name))
	go p.wait()
	return p, nil
}

// wait reaps the process, then kills what is left of its group: helpers of
// a server that died are orphans nobody else will stop.
func (p *process) wait() {
	err := p.cmd.Wait()
	signalGroup(p.cmd.Process, syscall.SIGKILL)
	// The last words on stderr usually say why it exited; give the reader
	// a moment to take them in before anyone asks for the reason.
	select {
	case <-p.stderrDone:
	case <-time.After(500 * time.Millisecond):
	}
	p.exitErr = err
	close(p.exited)
	// A helper that left the group may still hold stdout open; do not let
	// it keep the connection alive.
	time.AfterFunc(time.Second, func() { p.stdout.Close() })
}

// stop ends the process the way the MCP spec asks (close stdin, wait, then
// SIGTERM, then SIGKILL), always for the whole process group.
func (p *process) stop() { p.stopWithin(p.grace) }

// abort stops a process whose connection broke (it printed something
// else, did not answer the handshake, or is exiting): there is no session
// to end cleanly, so it gets only abortGrace, time for a process that is
// exiting by itself to be reaped (its exit status says why it failed), and
// a command that found it broken does not wait seconds for it on the way
// out.
func (p *process) abort() { p.stopWithin(abortGrace) }

func (p *process) stopWithin(grace time.Duration) {
	p.stopOnce.Do(func() {
		close(p.stopped)
		p.stdin.Close()
		if p.waitExit(grace) {
			return
		}
		p.signalled.Store(true)
		signalGroup(p.cmd.Process, syscall.SIGTERM)
		continueGroup(p.cmd.Process) // a stopped process cannot act on SIGTERM
		if p.waitExit(termWait) {
			return
		}
		signalGroup(p.cmd.Process, syscall.SIGKILL)
		p.waitExit(killWait)
	})
}

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitReason describes how the process ended, with the last lines it wrote
// to stderr, which usually say why. It is "" while the process runs and
// when jarvis had to signal it to stop: then the reason is whatever made
// jarvis stop it.
func (p *process) exitReason() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	if p.signalled.Load() {
		return ""
	}
	msg := describeExit(p.exitErr)
	if lines := p.stderr.lastLines(stderrLinesShown); len(lines) > 0 {
		return msg + " (stderr: " + strings.Join(lines, " | ") + ")"
	}
	return msg + "; it wrote nothing to stderr: run its command in a terminal to see what it does"
}

// stderrLinesShown is how many of the last stderr lines a reason quotes.
const stderrLinesShown = 3

// noteBadOutput keeps the first failure to read a message from stdout,
// with the line that caused it.
func (p *process) noteBadOutput(err error) {
	p.badMu.Lock()
	defer p.badMu.Unlock()
	if p.badOutput == nil {
		p.badOutput = &badOutput{err: err, line: p.stdoutTail.firstNotMessage()}
	}
}

// unreadable returns what made stdout unreadable, nil when nothing did.
func (p *process) unreadable() *badOutput {
	p.badMu.Lock()
	defer p.badMu.Unlock()
	return p.badOutput
}

// readStderr keeps the last lines for error messages and logs each at debug
// level: a server's stderr must never reach the terminal jarvis draws on.
func (p *process) readStderr(r *os.File, log *slog.Logger) {
	defer close(p.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64*1024)
	for sc.Scan() {
		line := sc.Text()
		p.stderr.add(line)
		log.Debug("mcp server stderr", "line", line)
	}
	// A line longer than the buffer ends the scan; drain the rest so the
	// server never blocks writing to a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

// stopOnClose is the connection's writer: closing it stops the process.
// jarvis stops a server it is done with before it closes the session
// (conn.close), so the SDK closing it first means the connection broke
// (the server's output could not be read, or it ended): the process is
// aborted, without the grace period a clean shutdown gets.
type stopOnClose struct{ p *process }

func (s stopOnClose) Write(b []byte) (int, error) { return s.p.stdin.Write(b) }

func (s stopOnClose) Close() error {
	s.p.abort()
	return nil
}

// onceCloser lets the stdout pipe be closed from two places.
type onceCloser struct {
	*os.File
	once sync.Once
}

func (o *onceCloser) Close() error {
	o.once.Do(func() { o.File.Close() })
	return nil
}

// processEnv is the server's environment: the clean base jarvis gives
// every program it starts for a model (cleanenv), then the server's own
// variables with ${VAR} references expanded, which win. Everything else,
// from API keys (BRAVE_API_KEY, TAVILY_API_KEY...) to proxy settings,
// reaches a server only when its env names it, as in
// env = { HTTPS_PROXY = "${HTTPS_PROXY}" }.
func processEnv(extra map[string]string) ([]string, error) {
	env := cleanenv.Environ(nil)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := expand("env "+k, extra[k])
		if err != nil {
			return nil, err
		}
		env = cleanenv.Set(env, k, v)
	}
	return env, nil
}

// unwrapExec drops the "exec: NAME" and "fork/exec PATH" prefixes, which
// repeat the command the message already names, keeping the cause.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "fork/exec" {
		return pe.Err
	}
	return err
}

// tail keeps the last lines written, each cut to a maximum length.
type tail struct {
	mu    sync.Mutex
	lines []string
	max   int
	width int
	// partial is the start of a line not yet ended (write only).
	partial []byte
}

func newTail(lines, width int) *tail { return &tail{max: lines, width: width} }

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(line)
}

func (t *tail) addLocked(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	if len(line) > t.width {
		line = strings.ToValidUTF8(line[:t.width], "") + "…"
	}
	if len(t.lines) == t.max {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// write takes a stream of bytes and keeps its last lines; a line still
// unfinished counts too, so output without a newline can be quoted.
func (t *tail) write(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if room := t.width + 1 - len(t.partial); room > 0 {
				t.partial = append(t.partial, b[:min(room, len(b))]...)
			}
			return
		}
		room := max(t.width+1-len(t.partial), 0)
		line := string(t.partial) + string(b[:min(room, i)])
		t.partial = t.partial[:0]
		t.addLocked(line)
		b = b[i+1:]
	}
}

// lastLines returns the n most recent lines, oldest first.
func (t *tail) lastLines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines[max(len(t.lines)-n, 0):]...)
}

// firstNotMessage returns the first kept line of stdout (or the unfinished
// one) that is not a JSON-RPC 2.0 message, "" when every line is one.
func (t *tail) firstNotMessage() string {
	t.mu.Lock()
	lines := append([]string(nil), t.lines...)
	if p := strings.TrimSpace(string(t.partial)); p != "" {
		lines = append(lines, strings.ToValidUTF8(p, ""))
	}
	t.mu.Unlock()
	for _, l := range lines {
		if !looksLikeMessage(l) {
			return l
		}
	}
	return ""
}

// looksLikeMessage reports whether a line of stdout is a JSON-RPC 2.0
// message; a line cut short passes when it starts like a JSON object.
func looksLikeMessage(line string) bool {
	if cut, ok := strings.CutSuffix(line, "…"); ok {
		return strings.HasPrefix(cut, "{") || strings.HasPrefix(cut, "[")
	}
	var m struct {
		Version string `json:"jsonrpc"`
	}
	if strings.HasPrefix(line, "[") {
		var batch []json.RawMessage
		if json.Unmarshal([]byte(line), &batch) != nil || len(batch) == 0 {
			return false
		}
		return json.Unmarshal(batch[0], &m) == nil && m.Version == "2.0"
	}
	return json.Unmarshal([]byte(line), &m) == nil && m.Version == "2.0"
}

// tapReader copies what the server writes on stdout into a tail as the
// SDK reads it.
type tapReader struct {
	io.ReadCloser
	tail *tail
}

func (r *tapReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	r.tail.write(b[:n])
	return n, err
}
