// Package shell holds shell_exec, the built-in tool that runs a command
// line through `sh -c` for the model, after the person approved that
// exact command, in the working directory (or a directory inside the
// reach).
//
// The command runs in a session of its own (so in its own process group,
// with no controlling terminal: it cannot read what the person types into
// jarvis), with stdin from /dev/null and the clean environment every
// program jarvis starts for a model gets (tools/internal/cleanenv, plus
// `[tool.shell_exec] pass_env`). Its stdout and stderr are kept apart and
// capped head and tail as the code tools cap them, and stream to the
// workbench's panel while it runs (tools.Output). At its timeout (30
// seconds unless the call asks for more, at most 300) or when the run is
// cancelled, the whole process group is killed. The exit code is in the
// result's metadata, and a command that fails is a failed result.
//
// Commands whose only use is to wreck the machine are refused whoever
// approves them (danger.go). With `[tool.shell_exec] sandbox = true` on
// Linux the command runs in new user, network, pid, IPC and UTS
// namespaces: no network at all, and every process it starts dies with it
// (it is the init of its own pid namespace); the files it sees and
// changes are the user's, as without the sandbox. Elsewhere the sandbox
// cannot be had, and a command is then refused rather than run without it.
package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/tools/internal/cleanenv"
	"github.com/jarvis-workbench/jarvis/tools/internal/proc"
)

// Name is the tool's name.
const Name = "shell_exec"

// Timeouts, in seconds.
const (
	DefaultTimeout = 30
	MaxTimeout     = 300
)

// maxOutput caps what is kept of each stream.
const maxOutput = 64 << 10

// Shell is shell_exec.
type Shell struct {
	reach   *files.Reach
	passEnv []string
	sandbox bool
}

// New builds shell_exec from its settings: allowed_dirs (where
// working_dir may point), pass_env, sandbox.
func New(deps tools.Deps) *Shell {
	s := deps.For(Name)
	return &Shell{reach: files.NewReachIn("[tool.shell_exec] allowed_dirs", s.AllowedDirs, deps.WorkDir), passEnv: s.PassEnv, sandbox: s.Sandbox}
}

var spec = tools.Spec{
	Name: Name,
	Description: "Run a shell command line with sh -c in the working directory (or working_dir) and return its exit code, stdout and stderr " +
		"(each capped at 64 KiB, keeping the start and the end). The user approves each exact command. It has no terminal and no input; " +
		"its environment is minimal (no API keys or tokens). The whole process group is killed at the timeout (default 30 s, at most 300). " +
		"Commands that wipe / or the home directory, fork bombs, raw disk writes, mkfs and downloads piped into a shell are always refused.",
	Parameters: tools.Params(
		tools.StringParam("command", "The command line, as sh reads it", true),
		tools.IntegerParam("timeout", "Seconds before the command is killed (default 30, at most 300)", false),
		tools.StringParam("working_dir", "Directory to run in (default: the working directory)", false),
	),
	Category:             "system",
	RequiresConfirmation: true,
	// The tool keeps its own timeout (the call's); the executor's is a
	// backstop past the longest one.
	TimeoutSeconds: MaxTimeout + 15,
}

// Spec returns shell_exec's spec.
func (s *Shell) Spec() tools.Spec {
	sp := spec
	meta := map[string]any{}
	if dirs := s.reach.Dirs(); len(dirs) > 0 {
		meta["reach"] = dirs
	}
	if s.sandbox {
		meta["sandbox"] = true
	}
	if len(meta) > 0 {
		sp.Metadata = meta
	}
	return sp
}

// Refuse refuses the catastrophic commands and a working_dir past
// allowed_dirs.
func (s *Shell) Refuse(args tools.Args) *tools.Refusal {
	if why, _ := danger(args.String("command")); why != "" {
		return &tools.Refusal{
			Message: "Refused: this command " + why + ". It is never run, whoever approves it. If the user really wants this, they must do it themselves.",
			By:      tools.ByDanger, Rule: "the command " + why,
		}
	}
	if dir := args.String("working_dir"); dir != "" {
		if ref := s.reach.Secrets().Refuse(dir); ref != nil {
			return ref
		}
		return s.reach.Refuse(dir, "run in")
	}
	return nil
}

// ConfirmationFor says where the command runs (every call asks).
func (s *Shell) ConfirmationFor(args tools.Args) (bool, string) {
	dir := args.String("working_dir")
	why := "runs in the working directory"
	if dir != "" {
		if outside, reason := s.reach.ConfirmationFor(dir, "runs in"); outside {
			why = reason
		} else {
			why = "runs in " + dir
		}
	}
	if s.sandbox {
		why += ", in the sandbox (no network)"
	}
	if _, unparsed := danger(args.String("command")); unparsed != "" {
		why += "; it could not be checked for destructive forms (" + unparsed + ")"
	}
	return true, why
}

// GrantScope is the exact call: a grant covers running this command
// again, nothing else.
func (s *Shell) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact command")
}

// Execute runs the command.
func (s *Shell) Execute(ctx context.Context, args tools.Args) tools.Result {
	command := args.String("command")
	if strings.TrimSpace(command) == "" {
		return tools.Fail("No command given.")
	}
	if why, _ := danger(command); why != "" {
		return tools.Fail("Refused: this command %s.", why)
	}
	if err := s.reach.Err(); err != nil {
		return tools.Fail("shell_exec is misconfigured: %v. Fix allowed_dirs under [tool.shell_exec] in the config file.", err)
	}
	timeout, ok, err := args.Int("timeout")
	switch {
	case err != nil:
		return tools.Fail("Invalid arguments: %s.", err)
	case !ok:
		timeout = DefaultTimeout
	case timeout <= 0 || timeout > MaxTimeout:
		return tools.Fail("Invalid arguments: timeout must be between 1 and %d seconds, got %d.", MaxTimeout, timeout)
	}
	dir, res, failed := s.dir(ctx, args.String("working_dir"))
	if failed {
		return res
	}
	attr, err := procAttr(s.sandbox)
	if err != nil {
		return tools.Fail("%v", err)
	}
	out := proc.Run(ctx, proc.Job{Argv: []string{"/bin/sh", "-c", command}, Dir: dir, Env: cleanenv.Environ(s.passEnv),
		Timeout: time.Duration(timeout) * time.Second, MaxOutput: maxOutput, Attr: attr,
		Live: func(text string) { tools.Output(ctx, text) }})
	if out.Err != nil {
		out.Err = startFailure(out.Err, s.sandbox)
	}
	return result(out, dir, timeout)
}

// dir resolves the working directory of a call.
func (s *Shell) dir(ctx context.Context, given string) (string, tools.Result, bool) {
	if given == "" {
		wd, err := s.reach.WorkDir()
		if err != nil {
			return "", tools.Fail("The working directory cannot be found: %v.", err), true
		}
		return wd, tools.Result{}, false
	}
	real := s.reach.Resolve(given)
	info, err := os.Stat(real)
	if err != nil || !info.IsDir() {
		return "", tools.Fail("working_dir %s is not a directory.", given), true
	}
	if why := s.reach.Secrets().Dir(given, real); why != "" {
		return "", tools.Fail("%s", files.Denied(given, why)), true
	}
	if !s.reach.Permits(real, tools.Confirmed(ctx)) {
		return "", s.reach.Outside(given, "run in"), true
	}
	return real, tools.Result{}, false
}

// result is what the model reads of a run.
func result(o proc.Outcome, dir string, timeout int) tools.Result {
	text := code.FormatOutput(o.Stdout.String(), o.Stderr.String())
	meta := map[string]any{
		"stdout_bytes": o.Stdout.Total(), "stderr_bytes": o.Stderr.Total(),
		"truncated": o.Stdout.Truncated() || o.Stderr.Truncated(), "duration_seconds": o.Duration.Seconds(),
		"working_dir": filepath.Clean(dir),
	}
	var r tools.Result
	switch {
	case o.Err != nil:
		r = tools.Fail("The command could not be started: %v", o.Err)
	case o.TimedOut:
		r = tools.Fail("The command timed out after %d s; it and every process it started were killed. Output so far:\n%s", timeout, text)
		r.Status = tools.StatusTimeout
		meta["timed_out"] = true
	case o.Cancelled:
		r = tools.Fail("The command was cancelled; it and every process it started were killed. Output so far:\n%s", text)
		r.Status = tools.StatusCancelled
	case !o.Exited:
		r = tools.Fail("The command was killed by signal %v.\n%s", o.Signal, text)
		meta["signal"] = o.Signal.String()
	case o.Code != 0:
		r = tools.Fail("Exit code %d.\n%s", o.Code, text)
		meta["exit_code"] = o.Code
	default:
		r = tools.OK("Exit code 0.\n" + text)
		meta["exit_code"] = 0
	}
	for k, v := range meta {
		r = r.WithMeta(k, v)
	}
	return r
}
