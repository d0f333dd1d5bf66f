package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// startGrace is added to a code tool's own timeout to make its spec's
// timeout, the executor's: the tool's own, clearer, message should win, and
// starting and killing the interpreter takes a moment.
const startGrace = 5

// Interpreter is the code_interpreter tool: each call runs its snippet in a
// fresh, confined Python process (see the package comment) and throws the
// process and its working directory away afterwards.
type Interpreter struct{ cfg Config }

// NewInterpreter returns code_interpreter configured by cfg (zero fields
// take the defaults).
func NewInterpreter(cfg Config) *Interpreter { return &Interpreter{cfg: cfg.withDefaults()} }

// InterpreterFactory is code_interpreter's registry factory.
func InterpreterFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewInterpreter(cfg), nil }
}

// Spec returns code_interpreter's spec. It requires confirmation: the code
// is the model's, and it runs on this machine.
func (t *Interpreter) Spec() tools.Spec {
	return tools.Spec{
		Name: "code_interpreter",
		Description: "Run a Python 3 snippet in a fresh, sandboxed interpreter and return its stdout and stderr. " +
			"Nothing is kept between calls. The value of a final expression is printed. " +
			describeIsolation(t.cfg) +
			fmt.Sprintf("Limits: %ss wall clock, %d s CPU, %d MB memory per process.",
				formatSeconds(t.cfg.Timeout), t.cfg.CPUSeconds, t.cfg.MemoryMB),
		Parameters:           tools.Params(tools.StringParam("code", "Python code to execute", true)),
		Category:             "code",
		RequiresConfirmation: true,
		TimeoutSeconds:       t.cfg.Timeout + startGrace,
		Metadata:             map[string]any{"limits": t.cfg.limitsMeta()},
	}
}

// GrantScope is the exact code: what runs is the whole danger.
func (t *Interpreter) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact code")
}

// Execute runs args["code"].
func (t *Interpreter) Execute(ctx context.Context, args tools.Args) tools.Result {
	code := args.String("code")
	if strings.TrimSpace(code) == "" {
		return tools.Fail("No code provided.")
	}
	o, err := runOnce(ctx, t.cfg, code)
	if err != nil {
		return startFailure(err, t.cfg)
	}
	r := o.result()
	return r.WithMeta("network_isolated", o.iso.namespaces).
		WithMeta("isolation", o.iso.meta()).
		WithMeta("limits", t.cfg.limitsMeta())
}

// outcome is how one run of code ended; code_interpreter and
// code_interpreter_docker describe it the same way.
type outcome struct {
	stdout, stderr *capBuffer
	state          *os.ProcessState
	timedOut       bool
	cancelled      bool
	timeout        time.Duration
	duration       time.Duration
	cpuLimit       int
	pid            int
	iso            isolation
}

// runOnce runs code in a new oneshot driver and waits for it and for every
// process it started. When the timeout passes or ctx ends first, it kills
// them all; the outcome says which happened.
func runOnce(ctx context.Context, cfg Config, code string) (*outcome, error) {
	start := time.Now()
	timeout := effectiveTimeout(ctx, cfg.Timeout)
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	o := &outcome{
		stdout: newCapBuffer(cfg.MaxOutputBytes), stderr: newCapBuffer(cfg.MaxOutputBytes),
		timeout: timeout, cpuLimit: cfg.CPUSeconds,
	}
	p, err := launch(callCtx, cfg, "oneshot")
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			o.timedOut, o.cancelled = ctx.Err() == nil, ctx.Err() != nil
			o.duration = time.Since(start)
			return o, nil
		}
		return nil, err
	}
	defer p.cleanup()
	o.pid, o.iso = p.pid(), p.iso
	p.drain(o.stdout, o.stderr)
	// A failed send means the driver is gone; its exit status says why.
	_ = p.send(map[string]any{"type": "run", "code": code})
	_ = p.ctlW.Close()
	select {
	case <-p.exited:
	case <-callCtx.Done():
		o.timedOut, o.cancelled = ctx.Err() == nil, ctx.Err() != nil
		p.kill()
		<-p.exited
	}
	p.finishOutput(2 * time.Second)
	o.state = p.state
	o.duration = time.Since(start)
	return o, nil
}

// result describes the outcome: the labelled output, preceded on failure
// by what went wrong. Metadata: exit_code, duration_seconds, truncated.
func (o *outcome) result() tools.Result {
	output := formatOutput(o.stdout.String(), o.stderr.String())
	fail := func(status tools.Status, format string, a ...any) tools.Result {
		msg := fmt.Sprintf(format, a...)
		if output != noOutput {
			msg += "\n\n" + output
		}
		r := tools.Fail("%s", msg)
		r.Status = status
		return r
	}
	exitCode := -1
	var r tools.Result
	switch {
	case o.timedOut:
		r = fail(tools.StatusTimeout, "Execution timed out after %ss; the process was killed.", formatSeconds(o.timeout.Seconds()))
	case o.cancelled:
		r = fail(tools.StatusCancelled, "Execution was cancelled; the process was killed.")
	case o.state == nil:
		r = fail(tools.StatusError, "The code did not run.")
	default:
		ws, _ := o.state.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			sig := ws.Signal()
			cpu := o.state.UserTime() + o.state.SystemTime()
			if isCPULimit(sig) || (sig == syscall.SIGKILL && o.cpuLimit > 0 && cpu >= time.Duration(o.cpuLimit)*time.Second) {
				r = fail(tools.StatusError, "The code used up its CPU time limit (%d s) and was killed.", o.cpuLimit)
			} else {
				r = fail(tools.StatusError, "The code was killed by signal %d (%s).", int(sig), sig)
			}
			r = r.WithMeta("signal", sig.String())
		default:
			exitCode = o.state.ExitCode()
			if exitCode == 0 {
				r = tools.OK(output)
			} else {
				r = fail(tools.StatusError, "The code failed with exit status %d.", exitCode)
			}
		}
	}
	return r.WithMeta("exit_code", exitCode).
		WithMeta("duration_seconds", o.duration.Seconds()).
		WithMeta("truncated", o.stdout.Truncated() || o.stderr.Truncated())
}

// startFailure is the failed result for code that could not be started.
func startFailure(err error, cfg Config) tools.Result {
	if errors.Is(err, ErrPythonNotFound) {
		return tools.Fail("%s", pythonMissing(cfg.Python)).WithMeta("network_isolated", false)
	}
	return tools.Fail("Cannot run the code: %v", err).WithMeta("network_isolated", false)
}
