package code

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// REPL is the repl tool: one persistent, confined Python interpreter per
// tool instance (a chat session builds one), which keeps variables,
// functions and imports between calls. Every call has the wall-clock limit;
// a call that passes it kills the interpreter, and the next call starts a
// fresh one. Processes the code starts are killed when its call ends;
// threads keep running, within the CPU time a call has, and the
// interpreter's whole life has Config.SessionCPUSeconds. Close ends the
// interpreter; a session must call it.
//
// Calls are serialised: a model that sends two repl calls in one turn gets
// them run one after the other, in the order they acquire the interpreter.
type REPL struct {
	cfg  Config
	turn chan struct{} // holds one token: the right to use the interpreter

	mu     sync.Mutex // guards the fields below (Close does not wait for a call)
	p      *process
	out    *collector
	errs   *collector
	calls  int
	lost   string  // why earlier state is gone, told to the next call
	cpu    float64 // the interpreter's CPU seconds after the last call
	closed bool
}

// NewREPL returns a repl tool configured by cfg. No interpreter starts
// until the first call.
func NewREPL(cfg Config) *REPL {
	r := &REPL{cfg: cfg.withDefaults(), turn: make(chan struct{}, 1)}
	r.turn <- struct{}{}
	return r
}

// REPLFactory is repl's registry factory: every Build makes a new
// interpreter, so every session has its own.
func REPLFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewREPL(cfg), nil }
}

// Spec returns repl's spec. It requires confirmation, like every tool that
// runs the model's code.
func (r *REPL) Spec() tools.Spec {
	return tools.Spec{
		Name: "repl",
		Description: "Run Python 3 code in a persistent, sandboxed interpreter that keeps variables, functions and imports " +
			"between calls for the rest of this session. The value of a final expression is printed, as at a Python prompt. " +
			"Set reset to true to start over with an empty interpreter. " + describeIsolation(r.cfg) +
			fmt.Sprintf("Each call may run for %ss; a call that runs longer is killed and all state is lost. ",
				formatSeconds(r.cfg.Timeout)) +
			"Processes started by a call are killed when it ends.",
		Parameters: tools.Params(
			tools.StringParam("code", "Python code to execute", false),
			tools.BoolParam("reset", "Discard all state and start a fresh interpreter before running code", false),
		),
		Category:             "code",
		RequiresConfirmation: true,
		TimeoutSeconds:       r.cfg.Timeout + startGrace,
		Metadata:             map[string]any{"limits": r.limitsMeta()},
	}
}

// GrantScope is the exact code: what runs is the whole danger.
func (r *REPL) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact code")
}

// limitsMeta is the limits, with the session's CPU budget.
func (r *REPL) limitsMeta() map[string]any {
	m := r.cfg.limitsMeta()
	m["session_cpu_seconds"] = r.cfg.SessionCPUSeconds
	return m
}

// Execute runs args["code"] in the session's interpreter, after a reset
// when args["reset"] is true.
func (r *REPL) Execute(ctx context.Context, args tools.Args) tools.Result {
	code, reset := args.String("code"), args.Bool("reset")
	if !reset && strings.TrimSpace(code) == "" {
		return tools.Fail("No code provided. Pass code to run, or reset: true to start a fresh interpreter.")
	}
	select {
	case <-r.turn:
		defer func() { r.turn <- struct{}{} }()
	case <-ctx.Done():
		return tools.Fail("The call was cancelled while waiting for the interpreter.")
	}

	var notes []string
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return tools.Fail("The repl session is closed.")
	}
	if r.lost != "" {
		notes = append(notes, r.lost)
		r.lost = ""
	}
	r.mu.Unlock()
	if reset {
		r.stop()
		notes = append(notes, "The interpreter was reset: all variables and imports are gone.")
		if strings.TrimSpace(code) == "" {
			return tools.OK(strings.Join(notes, "\n")).WithMeta("reset", true)
		}
	}
	res := r.run(ctx, code)
	if len(notes) > 0 {
		res.Content = strings.Join(notes, "\n") + "\n\n" + res.Content
	}
	return res.WithMeta("reset", reset).WithMeta("limits", r.limitsMeta())
}

// Close ends the interpreter and every process it started. A call in
// progress fails; later calls are refused. Close is safe to call twice.
func (r *REPL) Close() error {
	r.mu.Lock()
	r.closed = true
	p := r.p
	r.p = nil
	r.mu.Unlock()
	if p != nil {
		p.cleanup()
	}
	return nil
}

// stop ends the current interpreter, if any.
func (r *REPL) stop() {
	r.mu.Lock()
	p := r.p
	r.p = nil
	r.mu.Unlock()
	if p != nil {
		p.cleanup()
	}
}

// interpreter returns the running interpreter, starting one when there is
// none, when the last one ended between calls, or when it has (almost)
// used up its CPU time for the session. fresh reports a new start; lost
// says why a previous interpreter's state is gone, when it is.
func (r *REPL) interpreter(ctx context.Context) (p *process, fresh bool, lost string, err error) {
	r.mu.Lock()
	p, used := r.p, r.cpu
	r.mu.Unlock()
	if p != nil {
		select {
		case <-p.exited:
			r.stop()
			lost = "The interpreter was stopped between calls: " + r.endReason(p.state) +
				"; state was lost. This call runs in a fresh interpreter."
		default:
			// The driver keeps a second in hand below the hard limit: with
			// less than that, a call could not even start.
			if used < float64(r.cfg.SessionCPUSeconds-2) {
				return p, false, "", nil
			}
			r.stop()
			lost = fmt.Sprintf("The interpreter used up its CPU time for the session (%d s, session_cpu_seconds); "+
				"state was lost. This call runs in a fresh interpreter.", r.cfg.SessionCPUSeconds)
		}
	}
	p, err = launch(ctx, r.cfg, "repl")
	if err != nil {
		return nil, false, lost, err
	}
	out, errs := newCollector(p.stdout, r.cfg.MaxOutputBytes), newCollector(p.stderr, r.cfg.MaxOutputBytes)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		p.cleanup()
		return nil, false, lost, errors.New("the repl session is closed")
	}
	r.p, r.out, r.errs, r.cpu = p, out, errs, 0
	return p, true, lost, nil
}

// endReason says why an interpreter ended, from its exit status.
func (r *REPL) endReason(st *os.ProcessState) string {
	if st == nil {
		return "it ended"
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	cpu := st.UserTime() + st.SystemTime()
	switch {
	case ws.Exited() && ws.ExitStatus() == exitIdleCPU:
		return fmt.Sprintf("threads the code left running used up the CPU time allowed between calls (%d s)", r.cfg.CPUSeconds)
	case ws.Signaled() && (isCPULimit(ws.Signal()) ||
		ws.Signal() == syscall.SIGKILL && cpu >= time.Duration(r.cfg.SessionCPUSeconds)*time.Second):
		return fmt.Sprintf("it used up its CPU time for the session (%d s, session_cpu_seconds)", r.cfg.SessionCPUSeconds)
	}
	return "it ended (" + st.String() + ")"
}

// exitIdleCPU is the driver's exit status when it stops the interpreter
// because threads used too much CPU time between calls (see driver.py).
const exitIdleCPU = 152

// run sends one call to the interpreter and waits for its end, its
// timeout, ctx's end, or the interpreter's death.
func (r *REPL) run(ctx context.Context, code string) (res tools.Result) {
	start := time.Now()
	timeout := effectiveTimeout(ctx, r.cfg.Timeout)
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	p, fresh, lost, err := r.interpreter(callCtx)
	if lost != "" {
		defer func() { res.Content = lost + "\n\n" + res.Content }()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return timedOut(fmt.Sprintf("The interpreter did not start within %ss.", formatSeconds(timeout.Seconds())))
		}
		if ctx.Err() != nil {
			return cancelledResult()
		}
		return startFailure(err, r.cfg)
	}
	r.mu.Lock()
	r.calls++
	id, out, errs := r.calls, r.out, r.errs
	r.mu.Unlock()

	marker := newMarker()
	outBuf, outSeen := out.begin(marker)
	errBuf, errSeen := errs.begin(marker)
	meta := func(res tools.Result) tools.Result {
		return res.WithMeta("call", id).
			WithMeta("restarted", fresh).
			WithMeta("duration_seconds", time.Since(start).Seconds()).
			WithMeta("truncated", outBuf.Truncated() || errBuf.Truncated()).
			WithMeta("network_isolated", p.iso.namespaces).
			WithMeta("isolation", p.iso.meta())
	}
	output := func() string { return formatOutput(outBuf.String(), errBuf.String()) }
	withOutput := func(msg string) string {
		if o := output(); o != noOutput {
			return msg + "\n\n" + o
		}
		return msg
	}

	if err := p.send(map[string]any{"type": "run", "id": id, "code": code, "marker": string(marker)}); err != nil {
		return meta(r.died(p, withOutput))
	}
	// Frames other than this call's answer can only come from the code
	// itself (it can reach the driver's descriptors): they are ignored.
	var done frame
	for done.Type == "" {
		select {
		case f, ok := <-p.frames:
			if !ok {
				return meta(r.died(p, withOutput))
			}
			if f.Type == "done" && f.ID == id {
				done = f
			}
		case <-p.exited:
			return meta(r.died(p, withOutput))
		case <-callCtx.Done():
			r.stop()
			if ctx.Err() != nil {
				r.setLost("The previous call was cancelled, which killed the interpreter: this is a fresh one, and all variables and imports from earlier calls are gone.")
				return meta(cancelledResult())
			}
			res := timedOut(withOutput(fmt.Sprintf("Execution timed out after %ss; the interpreter was killed. "+
				"The next call starts a fresh interpreter: all variables and imports from earlier calls are lost.",
				formatSeconds(timeout.Seconds()))))
			return meta(res.WithMeta("state_lost", true))
		}
	}
	// The output ends at the markers; wait for both, briefly: code that
	// closed or redirected its stdout at the OS level may have lost one.
	markers := time.NewTimer(2 * time.Second)
	defer markers.Stop()
	for _, seen := range []<-chan struct{}{outSeen, errSeen} {
		select {
		case <-seen:
		case <-markers.C:
		}
	}
	out.end()
	errs.end()
	r.mu.Lock()
	r.cpu = done.CPUUsed
	r.mu.Unlock()
	if !p.iso.namespaces && p.cg != nil {
		// Without a pid namespace the driver cannot reach a process that
		// left its session; the cgroup can.
		p.cg.killAllBut(p.pid())
	}
	switch done.Status {
	case "ok":
		return meta(tools.OK(output()))
	case "exit":
		msg := fmt.Sprintf("The code called exit(%d); the interpreter keeps running and its state is kept.", done.ExitCode)
		if done.ExitCode == 0 {
			return meta(tools.OK(withOutput(msg)).WithMeta("exit_code", 0))
		}
		return meta(tools.Fail("%s", withOutput(msg)).WithMeta("exit_code", done.ExitCode))
	}
	return meta(tools.Fail("%s", withOutput("The code raised an exception; names it defined before the error are kept.")))
}

// died describes an interpreter that ended during a call (os._exit, a
// crash, the CPU limit's hard kill) and clears it.
func (r *REPL) died(p *process, withOutput func(string) string) tools.Result {
	p.kill()
	<-p.exited
	how := r.endReason(p.state)
	r.stop()
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return tools.Fail("%s", withOutput("The repl session was closed during the call."))
	}
	return tools.Fail("%s", withOutput("The interpreter stopped during the call: "+how+
		". The next call starts a fresh interpreter: all variables and imports from earlier calls are lost.")).
		WithMeta("state_lost", true)
}

// setLost records why state was lost, for the next call to say; "" means
// this call already said it.
func (r *REPL) setLost(why string) {
	r.mu.Lock()
	r.lost = why
	r.mu.Unlock()
}

func timedOut(msg string) tools.Result {
	res := tools.Fail("%s", msg)
	res.Status = tools.StatusTimeout
	return res
}

func cancelledResult() tools.Result {
	res := tools.Fail("Execution was cancelled; the interpreter was killed.")
	res.Status = tools.StatusCancelled
	return res
}

// newMarker returns a fresh end-of-call marker. It is random per call, so
// output that happens to contain an old marker, or one the code guessed,
// cannot end a later call early.
func newMarker() []byte {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return []byte("\x00jarvis-end-" + hex.EncodeToString(b[:]) + "\x00")
}

// collector reads one output stream of the interpreter for its whole life
// and splits it into calls at the markers the driver writes after each
// call. Output that arrives between calls (from a process the code left
// running) is kept for the next call.
type collector struct {
	mu      sync.Mutex
	limit   int
	cur     *capBuffer    // the current call's output
	marker  []byte        // the current call's marker; nil between calls
	seen    chan struct{} // closed when the marker arrives
	pending []byte        // a tail that may be the start of the marker
	between *capBuffer    // output that arrived outside any call
}

func newCollector(r io.Reader, limit int) *collector {
	c := &collector{limit: limit, between: newCapBuffer(limit)}
	go c.read(r)
	return c
}

func (c *collector) read(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.feed(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// begin starts a call: output from now until marker goes to the returned
// buffer, and seen closes when the marker has arrived.
func (c *collector) begin(marker []byte) (*capBuffer, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = newCapBuffer(c.limit)
	if c.between.Total() > 0 {
		_, _ = c.cur.Write([]byte(c.between.String()))
		c.between = newCapBuffer(c.limit)
	}
	c.marker, c.seen, c.pending = marker, make(chan struct{}), nil
	return c.cur, c.seen
}

// end closes the call: anything later belongs to the next one.
func (c *collector) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marker != nil {
		_, _ = c.cur.Write(c.pending)
		c.marker, c.pending = nil, nil
	}
}

func (c *collector) feed(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marker == nil {
		_, _ = c.between.Write(p)
		return
	}
	data := append(c.pending, p...)
	c.pending = nil
	if i := bytes.Index(data, c.marker); i >= 0 {
		_, _ = c.cur.Write(data[:i])
		_, _ = c.between.Write(data[i+len(c.marker):])
		c.marker = nil
		close(c.seen)
		return
	}
	keep := partialSuffix(data, c.marker)
	_, _ = c.cur.Write(data[:len(data)-keep])
	c.pending = append([]byte(nil), data[len(data)-keep:]...)
}

// partialSuffix is the length of the longest end of data that is a proper
// start of marker: bytes that must wait for the next read to be judged.
func partialSuffix(data, marker []byte) int {
	for k := min(len(marker)-1, len(data)); k > 0; k-- {
		if bytes.HasPrefix(marker, data[len(data)-k:]) {
			return k
		}
	}
	return 0
}
