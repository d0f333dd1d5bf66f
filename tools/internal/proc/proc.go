// Package proc runs a program for a tool the way every program jarvis
// starts for a model must run: in a session of its own (a process group
// to kill as one, no controlling terminal), stdin from /dev/null, stdout
// and stderr kept apart in capped buffers and streamed as they come, and
// the whole group killed at the timeout, on cancellation and when the
// program exits (what it left in the background goes with it).
package proc

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
)

// Job is one program to run.
type Job struct {
	// Argv is the program and its arguments (Argv[0] a path or a name on
	// PATH, unless Path names the program); Dir where it runs; Env its
	// whole environment.
	Path string
	Argv []string
	Dir  string
	Env  []string
	// Timeout ends it (0: only ctx does).
	Timeout time.Duration
	// MaxOutput caps what is kept of each stream.
	MaxOutput int
	// Attr, when set, replaces the session of its own (it must set
	// Setsid: the group is what is killed).
	Attr *syscall.SysProcAttr
	// Live receives the output as it comes (both streams, in the order
	// read), nil when nobody watches.
	Live func(string)
	// Stdin, when FeedStdin, is written to the program's standard input,
	// which is then closed; otherwise stdin is /dev/null.
	Stdin     string
	FeedStdin bool
	// Started, when set, runs once the program started, with its pid
	// (which leads its group): setting resource limits. An error kills
	// the program and is the run's Err.
	Started func(pid int) error
}

// Outcome is what a run did.
type Outcome struct {
	Stdout, Stderr *code.OutputBuffer
	// Exited: the program ended by itself with Code; otherwise Signal
	// killed it.
	Exited    bool
	Code      int
	Signal    syscall.Signal
	TimedOut  bool
	Cancelled bool
	Duration  time.Duration
	// Err: the program could not be started.
	Err error
}

// drainWait bounds how long output is read once the group is dead: only
// a process that left the group (setsid) still holds the pipes then.
const drainWait = 2 * time.Second

// Run runs j until it exits, its timeout passes or ctx ends; the process
// group is killed before it returns, whatever happened.
func Run(ctx context.Context, j Job) Outcome {
	out := Outcome{Stdout: code.NewOutputBuffer(j.MaxOutput), Stderr: code.NewOutputBuffer(j.MaxOutput)}
	if len(j.Argv) == 0 {
		out.Err = errors.New("no program given")
		return out
	}
	attr := j.Attr
	if attr == nil {
		attr = sysProcAttr()
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		out.Err = err
		return out
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		out.Err = err
		return out
	}
	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	if j.Path != "" {
		cmd = &exec.Cmd{Path: j.Path, Args: j.Argv}
	}
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = j.Dir, j.Env, outW, errW, attr
	var inW *os.File
	if j.FeedStdin {
		inR, w, err := os.Pipe()
		if err != nil {
			closeAll(outR, outW, errR, errW)
			out.Err = err
			return out
		}
		cmd.Stdin, inW = inR, w
		defer inR.Close()
	}
	if err := ctx.Err(); err != nil {
		closeAll(outR, outW, errR, errW, inW)
		out.Err = err
		return out
	}
	start := time.Now()
	err = cmd.Start()
	// The child has its own copies; ours would keep the pipes open.
	closeAll(outW, errW)
	if err != nil {
		closeAll(outR, errR, inW)
		out.Err = err
		return out
	}
	pgid := cmd.Process.Pid
	if j.Started != nil {
		if err := j.Started(pgid); err != nil {
			killGroup(pgid)
			_ = cmd.Wait()
			closeAll(outR, errR, inW)
			out.Err = err
			return out
		}
	}
	var live sync.Mutex // one chunk at a time, in the order read
	copyOut := func(dst io.Writer, src io.Reader) {
		buf := make([]byte, 8<<10)
		for {
			n, rerr := src.Read(buf)
			if n > 0 {
				_, _ = dst.Write(buf[:n])
				if j.Live != nil {
					live.Lock()
					j.Live(string(buf[:n]))
					live.Unlock()
				}
			}
			if rerr != nil {
				return
			}
		}
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); copyOut(out.Stdout, outR) }()
	go func() { defer readers.Done(); copyOut(out.Stderr, errR) }()
	if inW != nil {
		// A program that stops reading (or exits) makes the write fail;
		// closing inW below ends a write still blocked.
		go func() { _, _ = io.WriteString(inW, j.Stdin); inW.Close() }()
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var expired <-chan time.Time
	if j.Timeout > 0 {
		timer := time.NewTimer(j.Timeout)
		defer timer.Stop()
		expired = timer.C
	}
	var werr error
	select {
	case werr = <-waited:
	case <-expired:
		out.TimedOut = true
		killGroup(pgid)
		werr = <-waited
	case <-ctx.Done():
		out.Cancelled = true
		killGroup(pgid)
		werr = <-waited
	}
	killGroup(pgid) // what it left running in the background goes too
	out.Duration = time.Since(start)
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
	out.Exited, out.Code, out.Signal = exitStatus(cmd.ProcessState, werr)
	return out
}

// exitStatus reads how the program ended.
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
