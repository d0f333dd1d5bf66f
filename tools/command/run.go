package command

import (
	"context"
	"syscall"

	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/internal/cleanenv"
	"github.com/jarvis-workbench/jarvis/tools/internal/proc"
)

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
// otherwise /dev/null), sets its limits, and collects its output until it
// exits or ctx ends. Either way its process group is killed before run
// returns, so nothing it started outlives the call.
func (c *Command) run(ctx context.Context, dir string, argv []string, stdin string, hasStdin bool) outcome {
	o := proc.Run(ctx, proc.Job{Path: c.path, Argv: argv, Dir: dir, Env: cleanenv.Environ(c.spec.PassEnv),
		MaxOutput: c.maxOutput(), Attr: sysProcAttr(), Stdin: stdin, FeedStdin: hasStdin, Started: c.applyLimits})
	return outcome{stdout: o.Stdout, stderr: o.Stderr, exited: o.Exited, code: o.Code, signal: o.Signal, err: unwrapExec(o.Err)}
}
