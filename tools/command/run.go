package command

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/internal/cleanenv"
)

// drainWait bounds how long output is read once the process group is
// dead: only a process that left the group (setsid) can still hold the
// pipes, and its output is not waited for.
const drainWait = 2 * time.Second

// outcome is what one run did.
type outcome struct {
	stdout, stderr *code.OutputBuffer
	// exited: the program ended by itself with code; otherwise it was
	// killed by signal.
	exited bool
	code   int
	signal syscall.Signal
	// err: the program could not be started.
	err error
}

// run starts argv in a session of its own, feeds it stdin (when hasStdin;
// otherwise /dev/null), and collects its output until it exits or ctx
// ends. Either way its process group is killed before run returns, so
// nothing it started outlives the call.
func (c *Command) run(ctx context.Context, argv []string, stdin string, hasStdin bool) outcome {
	out := outcome{stdout: code.NewOutputBuffer(c.maxOutput()), stderr: code.NewOutputBuffer(c.maxOutput())}
	outR, outW, err := os.Pipe()
	if err != nil {
		out.err = err
		return out
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		out.err = err
		return out
	}
	cmd := &exec.Cmd{Path: c.path, Args: argv, Dir: c.cwd, Env: cleanenv.Environ(c.spec.PassEnv), Stdout: outW, Stderr: errW, SysProcAttr: sysProcAttr()}
	var inW *os.File
	if hasStdin {
		var inR *os.File
		if inR, inW, err = os.Pipe(); err != nil {
			closeAll(outR, outW, errR, errW)
			out.err = err
			return out
		}
		cmd.Stdin = inR
		defer inR.Close()
	}
	if err := ctx.Err(); err != nil {
		closeAll(outR, outW, errR, errW, inW)
		out.err = err
		return out
	}
	if err := cmd.Start(); err != nil {
		closeAll(outR, outW, errR, errW, inW)
		out.err = unwrapExec(err)
		return out
	}
	// The child has its own copies; ours would keep the pipes open.
	closeAll(outW, errW)
	pgid := cmd.Process.Pid
	if err := c.applyLimits(pgid); err != nil {
		killGroup(pgid)
		_ = cmd.Wait()
		closeAll(outR, errR, inW)
		out.err = err
		return out
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(out.stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(out.stderr, errR) }()
	if inW != nil {
		// A program that stops reading (or exits) makes the write fail;
		// closing inW below ends a write still blocked.
		go func() { _, _ = io.WriteString(inW, stdin); inW.Close() }()
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		killGroup(pgid)
		werr = <-waited
	}
	// Whatever the program left running goes with it.
	killGroup(pgid)
	if inW != nil {
		inW.Close()
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
		closeAll(outR, errR)
		<-drained
	}
	closeAll(outR, errR)
	out.exited, out.code, out.signal = exitStatus(cmd.ProcessState, werr)
	return out
}

// exitStatus reads how the process ended.
func exitStatus(ps *os.ProcessState, err error) (exited bool, code int, sig syscall.Signal) {
	if ps == nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ps = ee.ProcessState
		}
	}
	if ps == nil {
		return false, -1, syscall.SIGKILL
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return false, -1, ws.Signal()
	}
	return true, ps.ExitCode(), 0
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
